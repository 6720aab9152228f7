package seed_test

import (
	"context"
	"errors"
	"math"
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

// The estimate meets every measurement it was fitted to within 1 %, the scale-1.0 one
// included (the writer's 19.40 GB in goLive, 2026-12-03), and the largest scale a
// 24 GiB machine's largest heap holds is the one docs/measuring.md ran.
func TestLiveHeapEstimateMeetsTheMeasurements(t *testing.T) {
	p := seed.DefaultProfile()
	for _, m := range []struct {
		scale float64
		mib   float64
	}{{0.01, 283}, {0.02, 415}, {0.05, 834}, {0.1, 1562}, {1.0, 19.40e9 / (1 << 20)}} {
		live, _ := seed.LiveHeapAt(p, m.scale)
		if got := float64(live) / (1 << 20); math.Abs(got/m.mib-1) > 0.01 {
			t.Errorf("scale %g: %.0f MiB estimated, %.0f measured", m.scale, got, m.mib)
		}
	}
	fit := evitaserver.LargestHeapThatFits(25_276_071_936) // MemTotal of this kind of machine
	if s, ok := seed.LargestScaleFor(p, fit); !ok || s != 0.81 {
		t.Errorf("the largest scale for %d: %g %v, want 0.81", fit, s, ok)
	}
	for _, s := range []float64{0.81, 0.82} { // 0.81 needs at most the heap, 0.82 more
		live, _ := seed.LiveHeapAt(p, s)
		if fits := evitaserver.NeedHeap(live) <= fit; fits != (s == 0.81) {
			t.Errorf("scale %g: need %d, heap %d", s, evitaserver.NeedHeap(live), fit)
		}
	}
	if s, ok := seed.LargestScaleFor(p, 256<<20); !ok || s != 0 {
		t.Errorf("a 256m heap holds scale %g", s)
	}
	other := seed.DefaultProfile()
	other.Collections[0].Count++
	if _, ok := seed.LargestScaleFor(other, fit); ok {
		t.Error("a profile never measured must not claim a scale")
	}
	// the measurements reach scale 1.0: beyond it the figure is an extrapolation, and says so
	for s, word := range map[float64]string{0.02: "estimated", 1: "estimated", 2: "extrapolated"} {
		if src := seed.LiveHeapSourceAt(s); !strings.HasPrefix(src, word) {
			t.Errorf("scale %g: the estimate's source %q does not start %q", s, src, word)
		}
	}
}
