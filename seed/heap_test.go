package seed_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/seed"
)

// A seeding heap below what the built-in profile's catalog needs at that scale is
// refused with the number, before a directory or a server is made; another profile has
// no measured need and is not refused.
func TestPristineRefusesAHeapBelowTheNeed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pristine")
	p := seed.DefaultProfile()
	live, ok := seed.LiveHeapAt(p, 0.1)
	if !ok || live < 1<<30 || live > 2<<30 {
		t.Fatalf("the built-in profile at 0.1: %d MB live (measured 1,562)", live>>20)
	}
	need := evitaserver.NeedHeap(live)
	if def := evitaserver.HeapForScale(0.1); def < need {
		t.Fatalf("the default heap %d is below the need %d", def, need)
	}
	_, err := seed.Pristine(context.Background(), seed.PristineConfig{Dir: dir, Catalog: "shop", Heap: need - 1}, p, 0.1, 1)
	var he *evitaserver.HeapError
	if !errors.As(err, &he) || he.Need != need || !strings.Contains(err.Error(), "seeding server heap") {
		t.Fatalf("%v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatal("the snapshot directory was made")
	}
	other := seed.DefaultProfile()
	other.Collections[0].Count++
	if _, ok := seed.LiveHeapAt(other, 0.1); ok {
		t.Fatal("a profile never measured must not claim a need")
	}
}
