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
// refused with the number, before a directory or a server is made; a profile never
// measured is not refused (its estimate only proposes a heap).
func TestPristineRefusesAHeapBelowTheNeed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pristine")
	p := seed.DefaultProfile()
	e := seed.LiveHeapAt(p, 0.1)
	if !e.Measured || e.Bytes < 1<<30 || e.Bytes > 2<<30 {
		t.Fatalf("the built-in profile at 0.1: %d MB live (measured 1,562)", e.Bytes>>20)
	}
	need := evitaserver.NeedHeap(e.Bytes)
	if def := seed.HeapAt(p, 0.1); def < need || def != evitaserver.HeapForShare(0.1) {
		t.Fatalf("the default heap %d is below the need %d, or not the share's", def, need)
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
	if e := seed.LiveHeapAt(other, 0.1); e.Measured || !strings.Contains(e.Source, "never measured") {
		t.Fatalf("a profile never measured must not claim a measured need: %+v", e)
	}
}

// A catalog is sized by its own size, its entities: a measured shape of a small shop
// (1,937 entities, 1/200 of production) regenerated at --scale 1 gets a heap for 1,937
// entities (1.25 GiB), not production's 24 GiB; where its source's live heap was
// measured, the estimate passes through that measurement.
func TestACatalogIsSizedByItsOwnEntities(t *testing.T) {
	shop := seed.DefaultProfile()
	total := seed.EntitiesAt(shop, 1)
	if total != evitaserver.ProductionEntities {
		t.Fatalf("the built-in profile at scale 1: %d entities, production %d", total, evitaserver.ProductionEntities)
	}
	for i := range shop.Collections { // counts divided as shape divides a measured catalog's
		shop.Collections[i].Count = max(1, shop.Collections[i].Count/200)
	}
	shop.Measured = &seed.Measured{Tool: "warmstat shape", From: "server", Catalog: "shop", Entities: seed.EntitiesAt(shop, 1), Scale: 1}
	n := seed.EntitiesAt(shop, 1)
	if n < 1_900 || n > 1_990 {
		t.Fatalf("the shop: %d entities", n)
	}
	if h := seed.HeapAt(shop, 1); h != 1280<<20 {
		t.Fatalf("the shop at scale 1: heap %d, want 1.25 GiB", h)
	}
	e := seed.LiveHeapAt(shop, 1)
	if e.Measured || e.Bytes != evitaserver.BuiltInLiveHeap(n) {
		t.Fatalf("no source heap measured: %+v", e)
	}
	live := int64(400 << 20) // the source held twice the built-in catalog's per entity, say
	shop.Measured.LiveHeapBytes = &live
	if e := seed.LiveHeapAt(shop, 1); !e.Measured || math.Abs(float64(e.Bytes)/float64(live)-1) > 0.001 || !strings.Contains(e.Source, "scaled from its source's 400.0 MiB live") {
		t.Fatalf("at the source's own size the estimate is its measurement: %+v", e)
	}
	if e2, e1 := seed.LiveHeapAt(shop, 2), seed.LiveHeapAt(shop, 1); e2.Bytes <= e1.Bytes || e2.Bytes > 3*e1.Bytes {
		t.Fatalf("twice the catalog: %d, once %d", e2.Bytes, e1.Bytes)
	}
	if got := seed.Size(shop, 1); got.Entities != n || got.ProductionShare != evitaserver.ProductionShare(n) || got.LiveHeapEstimateBytes != seed.LiveHeapAt(shop, 1).Bytes {
		t.Fatalf("the record: %+v", got)
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
		live := seed.LiveHeapAt(p, m.scale).Bytes
		if got := float64(live) / (1 << 20); math.Abs(got/m.mib-1) > 0.01 {
			t.Errorf("scale %g: %.0f MiB estimated, %.0f measured", m.scale, got, m.mib)
		}
	}
	fit := evitaserver.LargestHeapThatFits(25_276_071_936) // MemTotal of this kind of machine
	if s := seed.LargestScaleFor(p, fit); s != 0.81 {
		t.Errorf("the largest scale for %d: %g, want 0.81", fit, s)
	}
	for _, s := range []float64{0.81, 0.82} { // 0.81 needs at most the heap, 0.82 more
		live := seed.LiveHeapAt(p, s).Bytes
		if fits := evitaserver.NeedHeap(live) <= fit; fits != (s == 0.81) {
			t.Errorf("scale %g: need %d, heap %d", s, evitaserver.NeedHeap(live), fit)
		}
	}
	if s := seed.LargestScaleFor(p, 256<<20); s != 0 {
		t.Errorf("a 256m heap holds scale %g", s)
	}
	// the measurements reach from 0.01 to 1.0 of production's size: beyond them the figure is an extrapolation, and says so
	for s, word := range map[float64]string{0.002: "extrapolated below", 0.02: "estimated", 1: "estimated", 2: "extrapolated beyond"} {
		if src := seed.LiveHeapAt(p, s).Source; !strings.HasPrefix(src, word) {
			t.Errorf("scale %g: the estimate's source %q does not start %q", s, src, word)
		}
	}
}
