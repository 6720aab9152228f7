package loader

import (
	"errors"
	"fmt"
	"slices"

	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/workload"
)

// snapshotSettings reads the pristine snapshot's metadata and settles what depends on
// it: the reader opens the snapshot with the snapshot's own storage.compress (the
// writer's is a measurement condition and stays sc.Compress); a heap not given (0) is
// chosen from the snapshot — from its own size, 23 GiB × its entities' share of
// production's + 1 GiB, never below its measured need — and a heap given below that
// need is refused, naming it. Only the heaps of the servers named (writer, reader) are
// settled: an extraction starts no writer.
func snapshotSettings(sc *SpawnConfig, servers ...string) (*evitaserver.Snapshot, error) {
	type heap struct {
		name string
		heap *int64
	}
	var heaps []heap
	for _, s := range servers {
		switch s {
		case "writer":
			heaps = append(heaps, heap{s, &sc.ServerHeap})
		case "reader":
			heaps = append(heaps, heap{s, &sc.ReaderHeap})
		}
	}
	info, err := evitaserver.ReadSnapshot(sc.Pristine, sc.Catalog)
	if errors.Is(err, evitaserver.ErrNoSnapshotInfo) && sc.SnapshotCompress != nil {
		// a snapshot made otherwise (a production export): its setting is the user's word,
		// and there is nothing to size the heaps from
		if slices.ContainsFunc(heaps, func(h heap) bool { return *h.heap == 0 }) {
			return nil, fmt.Errorf("%s: no metadata to choose heaps from: %w", evitaserver.SnapshotFile(sc.Pristine, sc.Catalog), ErrHeapsNeeded)
		}
		return &evitaserver.Snapshot{Catalog: sc.Catalog, StorageCompress: *sc.SnapshotCompress}, nil
	}
	if err != nil {
		return nil, err
	}
	if sc.SnapshotCompress != nil && *sc.SnapshotCompress != info.StorageCompress {
		return nil, fmt.Errorf("%s records storage.compress=%t, but the snapshot was said to be %t", evitaserver.SnapshotFile(sc.Pristine, sc.Catalog), info.StorageCompress, *sc.SnapshotCompress)
	}
	need, why := int64(0), ""
	if info.LiveHeapBytes != nil {
		need = evitaserver.NeedHeap(*info.LiveHeapBytes)
		live := *info.LiveHeapBytes
		why = fmt.Sprintf("its live heap was measured at %s when it was seeded", runfmt.FormatSize(live))
		if err := needFitsMachine("each server", need, why); err != nil {
			return nil, err
		}
	}
	proposed := need
	switch {
	case info.Size != nil:
		proposed = max(need, evitaserver.HeapForShare(info.Size.ProductionShare))
	case info.Seed != nil:
		proposed = max(need, evitaserver.HeapForShare(info.Seed.Scale))
		if slices.ContainsFunc(heaps, func(h heap) bool { return *h.heap == 0 }) {
			sc.HeapNote = fmt.Sprintf("%s predates warmstat's record of a catalog's own size: its heaps come from its seed scale %g read as a share of production's size (%s), as before; seeding it again records its own",
				evitaserver.SnapshotFile(sc.Pristine, sc.Catalog), info.Seed.Scale, runfmt.FormatBytesExact(&proposed))
		}
	}
	for _, h := range heaps {
		switch {
		case *h.heap == 0 && proposed == 0:
			return nil, fmt.Errorf("%s heap: the snapshot %s records neither its size nor a live heap to choose one from", h.name, evitaserver.SnapshotFile(sc.Pristine, sc.Catalog))
		case *h.heap == 0:
			*h.heap = proposed
		case *h.heap < need:
			return nil, &evitaserver.HeapError{Server: h.name, Heap: *h.heap, Need: need, Why: why}
		}
	}
	return info, nil
}

// ChooseHeaps settles the heaps a run of sc would start with, by the rule every
// spawn-mode load follows (snapshotSettings): a heap not given (0) is chosen from the
// snapshot's metadata, one given below the snapshot's measured need is refused. With
// a workload (replay) only the writer's, from what the workload recorded of its
// snapshot. A series fixes its heaps in its plan before any run: it uses this.
func ChooseHeaps(sc *SpawnConfig, replay *workload.Header, servers ...string) error {
	if replay != nil {
		return replayHeap(sc, *replay)
	}
	_, err := snapshotSettings(sc, servers...)
	return err
}

// ErrHeapsNeeded: a snapshot without metadata gives nothing to choose heaps from.
var ErrHeapsNeeded = errors.New("the heaps must be given")

// replayHeap chooses a replaying writer's heap as a live load's is chosen, from what
// the workload's header recorded of its snapshot; with nothing recorded it must be given.
func replayHeap(sc *SpawnConfig, h workload.Header) error {
	need, why := int64(0), ""
	switch {
	case h.SnapshotLiveHeapBytes != nil:
		need = evitaserver.NeedHeap(*h.SnapshotLiveHeapBytes)
		why = fmt.Sprintf("its snapshot's live heap was measured at %s when it was seeded", runfmt.FormatSize(*h.SnapshotLiveHeapBytes))
	case h.LiveHeapEstimateBytes != nil: // a generated workload: no snapshot was ever measured
		need = evitaserver.NeedHeap(*h.LiveHeapEstimateBytes)
		why = fmt.Sprintf("the workload's catalog holds about %s live, %s", runfmt.FormatSize(*h.LiveHeapEstimateBytes), h.LiveHeapEstimateSource)
	}
	if need > 0 {
		if err := needFitsMachine("the writer", need, why); err != nil {
			return err
		}
	}
	proposed := need
	switch {
	case h.ProductionShare != nil:
		proposed = max(need, evitaserver.HeapForShare(*h.ProductionShare))
	case h.SnapshotScale != nil:
		proposed = max(need, evitaserver.HeapForShare(*h.SnapshotScale))
		if sc.ServerHeap == 0 {
			sc.HeapNote = fmt.Sprintf("the workload file predates warmstat's record of a catalog's own size: its writer's heap comes from the scale it records, %g, read as a share of production's size (%s), as before; give --server-heap, or write the file again (seed --workload, extract) to record its own size",
				*h.SnapshotScale, runfmt.FormatBytesExact(&proposed))
		}
	}
	switch {
	case sc.ServerHeap == 0 && proposed == 0:
		return fmt.Errorf("the workload records neither its catalog's size nor its live heap: %w", ErrWriterHeapNeeded)
	case sc.ServerHeap == 0:
		sc.ServerHeap = proposed
	case sc.ServerHeap < need:
		return &evitaserver.HeapError{Server: "writer", Heap: sc.ServerHeap, Need: need, Why: why}
	}
	return nil
}

// ErrWriterHeapNeeded: nothing to choose a replaying writer's heap from.
var ErrWriterHeapNeeded = errors.New("the writer's heap must be given")

// needFitsMachine refuses a catalog whose servers (who: "the writer", "each server")
// need a heap larger than any this machine can hold: lowering the heap (what the
// machine check alone would advise) would only trade the refusal for a server that
// fills its heap (a scale-1.0 replay into 21g on a 24 GiB machine loaded for an hour,
// then died GC-bound in goLive).
func needFitsMachine(who string, need int64, why string) error {
	m, err := evitaserver.ReadMachine()
	if err != nil {
		return nil // the machine check before the start says what could not be read
	}
	if fit := m.LargestHeap(); need > fit {
		limit := m.Effective()
		return fmt.Errorf("%w: %s needs a heap of at least %s (%s), but the largest heap that fits this machine's %s is %s: use a smaller catalog here, or this one on a machine with more memory",
			evitaserver.ErrHeapsDoNotFit, who, runfmt.FormatBytesAtLeast(need), why, runfmt.FormatBytes(&limit), runfmt.FormatBytesExact(&fit))
	}
	return nil
}
