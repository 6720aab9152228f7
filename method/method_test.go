package method

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/evita/pb"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/workload"
)

// workloadOf writes a workload file of the given collections (a few entities each) and
// the catalog's live heap estimate (0: none recorded).
func workloadOf(t *testing.T, counts map[string]int64, live int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "w.wsw")
	var names []string
	var schemas []*pb.GrpcEntitySchema
	for n := range counts {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		schemas = append(schemas, &pb.GrpcEntitySchema{Name: n})
	}
	h := workload.Header{Catalog: "shop", SourceMode: "attach", SourceCounts: counts, Fingerprint: "counts-sha256:x", Collections: names, BatchSize: 1000}
	if live > 0 {
		h.LiveHeapEstimateBytes, h.LiveHeapEstimateSource = &live, "a test's word"
		share := 0.01
		h.ProductionShare = &share
	}
	w, err := workload.Create(path, h, &pb.GrpcCatalogSchema{Name: "shop"}, schemas)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := w.Begin(n, counts[n]); err != nil {
			t.Fatal(err)
		}
		for pk := range int32(counts[n]) {
			if err := w.Entity(pk+1, []byte("an upsert")); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.End(1000, 2000); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// Every source is asked the faithful way unless told otherwise: the embedded writer
// replaying it, gated on its dominant collection's adjusted mean, watching that
// collection's allocation — Product where the catalog has one, else the collection with
// the most entities, so a catalog without Product is judged on its own collection.
func TestEverySourceGetsTheFaithfulMethod(t *testing.T) {
	noProduct := workloadOf(t, map[string]int64{"Brand": 3, "Stock": 9, "Tag": 2}, 256<<20)
	withProduct := workloadOf(t, map[string]int64{"Brand": 3, "Product": 2, "Stock": 9}, 256<<20)
	for _, c := range []struct {
		name      string
		o         Options
		faithful  bool
		gates     []string
		watch     []string
		embedded  bool
		atRatio   bool
		replaying bool
	}{
		{"no Product", Options{Workload: noProduct}, true, []string{"Stock/mean_adj"}, []string{"Stock/alloc"}, true, true, true},
		{"Product", Options{Workload: withProduct}, true, []string{"Product/mean_adj"}, []string{"Product/alloc"}, true, true, true},
		{"the older way", Options{Workload: withProduct, Remote: true}, false, nil, nil, false, false, true},
		{"gates given", Options{Workload: noProduct, Gates: []string{"Brand/mean"}}, false, []string{"Brand/mean"}, nil, true, true, true},
	} {
		m, err := Prepare(context.Background(), c.o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if m.Faithful != c.faithful || !slices.Equal(m.Gates(), c.gates) || !slices.Equal(m.Watch(), c.watch) || m.Embedded != c.embedded ||
			m.Heaps.AtRatio != c.atRatio || m.Replay != c.replaying {
			t.Errorf("%s: faithful %t gates %v watch %v embedded %t at ratio %t replay %t", c.name, m.Faithful, m.Gates(), m.Watch(), m.Embedded, m.Heaps.AtRatio, m.Replay)
		}
		p := m.Plan(nil, nil)
		if !slices.Equal(p.Gates, c.gates) || !slices.Equal(p.Watch, c.watch) || (p.TargetMode == "embedded") != c.embedded {
			t.Errorf("%s: plan gates %v watch %v target %q", c.name, p.Gates, p.Watch, p.TargetMode)
		}
		if c.atRatio && m.Heaps.Writer != max(evitaserver.HeapAtProductionRatio(256<<20), evitaserver.NeedHeap(256<<20)) {
			t.Errorf("%s: writer heap %d, not production's ratio to 256 MiB live", c.name, m.Heaps.Writer)
		}
	}
}

// A source that records no collections leaves the faithful method nothing to gate
// on: refused, so that the caller names the gate, before any run.
func TestNoCollectionsNoDominant(t *testing.T) {
	empty := workloadOf(t, map[string]int64{}, 256<<20)
	_, err := Prepare(context.Background(), Options{Workload: empty})
	if !errors.Is(err, ErrNoDominant) {
		t.Fatalf("%v", err)
	}
	if _, err := Prepare(context.Background(), Options{Workload: empty, Gates: []string{"*/ingest"}}); err != nil {
		t.Fatalf("with a gate given: %v", err)
	}
}

// A snapshot that is not there, and a damaged workload, are refused as such before
// anything is made.
func TestSourcesRefusedBeforeAnything(t *testing.T) {
	dir := t.TempDir()
	if _, err := Prepare(context.Background(), Options{Pristine: dir, Catalog: "shop"}); !errors.Is(err, ErrNoSnapshot) {
		t.Errorf("no snapshot: %v", err)
	}
	var we *WorkloadError
	if _, err := Prepare(context.Background(), Options{Workload: filepath.Join(dir, "none.wsw")}); !errors.As(err, &we) {
		t.Errorf("no workload: %v", err)
	}
}

// A workload of a subset of its catalog's collections is judged on the collections it
// holds: its header counts every collection of the source, Product among them, but a
// series of it loads only the subset.
func TestASubsetIsJudgedOnWhatItHolds(t *testing.T) {
	path := workloadOf(t, map[string]int64{"Brand": 3, "Stock": 9}, 256<<20)
	info, err := workload.Verify(path)
	if err != nil {
		t.Fatal(err)
	}
	info.Header.SourceCounts["Product"] = 500 // the source's, left out of the file
	src := Source{Workload: &info}
	if d := analyze.Dominant(src.Counts()); d != "Stock" {
		t.Fatalf("the subset's dominant collection: %q", d)
	}
	info.Header.MaxPerCollection = 2
	info.Header.SourceCounts["Brand"] = 3000
	if c := src.Counts(); c["Brand"] != 2 || c["Stock"] != 2 || len(c) != 2 {
		t.Fatalf("capped counts: %v", c)
	}
}
