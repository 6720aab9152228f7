package loader

import (
	"errors"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/workload"
)

// Heaps not given are chosen from the snapshot's record of its own size (23 GiB × its
// share of production's entities + 1 GiB, never below its measured need), or, in a
// snapshot of an older warmstat, from its seed scale as before, saying so; a heap below
// the need is refused naming both; a snapshot without metadata is refused, since the
// reader could not know how to open it, unless the user says how it is stored
// (--snapshot-compress) and gives the heaps.
func TestSnapshotSettingsChooseAndRefuseHeaps(t *testing.T) {
	dir := t.TempDir()
	live := int64(2 << 30)
	if err := evitaserver.WriteSnapshot(dir, &evitaserver.Snapshot{Catalog: "shop", StorageCompress: true,
		Seed: &evitaserver.SnapshotSeed{Scale: 0.05}, LiveHeapBytes: &live}); err != nil {
		t.Fatal(err)
	}
	sc := SpawnConfig{Pristine: dir, Catalog: "shop"}
	info, err := snapshotSettings(&sc, "writer", "reader")
	if err != nil || !info.StorageCompress {
		t.Fatal(err)
	}
	need := evitaserver.NeedHeap(live)
	if want := max(need, evitaserver.HeapForShare(0.05)); sc.ServerHeap != want || sc.ReaderHeap != want ||
		!strings.Contains(sc.HeapNote, "predates warmstat's record of a catalog's own size: its heaps come from its seed scale 0.05") {
		t.Fatalf("chosen heaps %d %d, want %d; note %q", sc.ServerHeap, sc.ReaderHeap, want, sc.HeapNote)
	}
	// a measured shape of a shop of 1,937 entities regenerated at its own size (scale 1):
	// its record, not the scale, sizes the heaps
	small, sdir := int64(200<<20), t.TempDir()
	if err := evitaserver.WriteSnapshot(sdir, &evitaserver.Snapshot{Catalog: "shop", Entities: 1_937, Seed: &evitaserver.SnapshotSeed{Scale: 1}, LiveHeapBytes: &small,
		Size: &evitaserver.CatalogSize{Entities: 1_937, ProductionShare: evitaserver.ProductionShare(1_937), LiveHeapEstimateBytes: small}}); err != nil {
		t.Fatal(err)
	}
	sc = SpawnConfig{Pristine: sdir, Catalog: "shop"}
	if _, err := snapshotSettings(&sc, "reader"); err != nil || sc.ReaderHeap != 1280<<20 || sc.HeapNote != "" {
		t.Fatalf("the shop's reader heap %d (want 1.25g), note %q: %v", sc.ReaderHeap, sc.HeapNote, err)
	}
	sc = SpawnConfig{Pristine: dir, Catalog: "shop", ServerHeap: need - 1}
	_, err = snapshotSettings(&sc, "writer", "reader")
	var he *evitaserver.HeapError
	if !errors.As(err, &he) || he.Server != "writer" || he.Need != need || !strings.Contains(err.Error(), "measured at 2.0 GiB when it was seeded") {
		t.Fatalf("a heap below the need: %v", err)
	}
	sc = SpawnConfig{Pristine: dir, Catalog: "other"}
	if _, err := snapshotSettings(&sc, "writer", "reader"); !errors.Is(err, evitaserver.ErrNoSnapshotInfo) {
		t.Fatalf("no metadata: %v", err)
	}
	// a snapshot made otherwise: the user says how it is stored, and gives the heaps
	no, yes := false, true
	sc = SpawnConfig{Pristine: dir, Catalog: "other", SnapshotCompress: &no}
	if _, err := snapshotSettings(&sc, "writer", "reader"); !errors.Is(err, ErrHeapsNeeded) {
		t.Fatalf("no metadata, no heaps: %v", err)
	}
	sc = SpawnConfig{Pristine: dir, Catalog: "other", SnapshotCompress: &no, ServerHeap: 1 << 30, ReaderHeap: 1 << 30}
	if info, err := snapshotSettings(&sc, "writer", "reader"); err != nil || info.StorageCompress {
		t.Fatalf("no metadata, said uncompressed: %+v %v", info, err)
	}
	// a word contradicting the metadata is refused, not silently preferred
	sc = SpawnConfig{Pristine: dir, Catalog: "shop", SnapshotCompress: &no}
	if _, err := snapshotSettings(&sc, "writer", "reader"); err == nil || !strings.Contains(err.Error(), "records storage.compress=true") {
		t.Fatalf("contradiction: %v", err)
	}
	sc = SpawnConfig{Pristine: dir, Catalog: "shop", SnapshotCompress: &yes}
	if _, err := snapshotSettings(&sc, "writer", "reader"); err != nil {
		t.Fatal(err)
	}
}

// A generated workload records an estimated live heap: a replay chooses its writer's
// heap from it, refuses a smaller one naming where the need comes from, and refuses a
// catalog no heap of this machine holds before any JVM starts, instead of advising a
// lower heap.
func TestReplayHeapFromTheEstimate(t *testing.T) {
	scale, live := 0.05, int64(836<<20)
	h := workload.Header{SnapshotScale: &scale, LiveHeapEstimateBytes: &live, LiveHeapEstimateSource: "estimated from the test"}
	sc := SpawnConfig{}
	if err := replayHeap(&sc, h); err != nil || sc.ServerHeap != max(evitaserver.NeedHeap(live), evitaserver.HeapForShare(scale)) ||
		!strings.Contains(sc.HeapNote, "the workload file predates") {
		t.Fatalf("chosen %d, note %q: %v", sc.ServerHeap, sc.HeapNote, err)
	}
	// a workload recording its catalog's own size: a shape's at scale 1, a 1/200 of production
	share := evitaserver.ProductionShare(1_937)
	one := 1.0
	sc = SpawnConfig{}
	if err := replayHeap(&sc, workload.Header{SnapshotScale: &one, ProductionShare: &share}); err != nil || sc.ServerHeap != 1280<<20 || sc.HeapNote != "" {
		t.Fatalf("chosen %d, note %q: %v", sc.ServerHeap, sc.HeapNote, err)
	}
	sc = SpawnConfig{ServerHeap: evitaserver.NeedHeap(live) - 256<<20}
	var he *evitaserver.HeapError
	if err := replayHeap(&sc, h); !errors.As(err, &he) || !strings.Contains(err.Error(), "about 836.0 MiB live, estimated from the test") {
		t.Fatalf("a heap below the need: %v", err)
	}
	huge := int64(1 << 50) // no machine holds it
	h.LiveHeapEstimateBytes = &huge
	for _, given := range []int64{0, 1 << 40} {
		sc = SpawnConfig{ServerHeap: given}
		err := replayHeap(&sc, h)
		if !errors.Is(err, evitaserver.ErrHeapsDoNotFit) || !strings.Contains(err.Error(), "the largest heap that fits this machine's") ||
			!strings.Contains(err.Error(), "estimated from the test") {
			t.Fatalf("heap %d: %v", given, err)
		}
	}
}
