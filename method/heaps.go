package method

import (
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/loader"
	"github.com/warmstat/warmstat/workload"
)

// Heaps are the heaps every run of the series gets, and how they were chosen.
type Heaps struct {
	Writer, Reader int64 // Reader 0: no reader (a workload is replayed)
	// AtRatio: the writer's heap holds the catalog's Live heap at production's ratio
	// (the faithful method's writer); else it was given or chosen as load chooses it.
	AtRatio bool
	Live    int64
	// Chosen names the heaps chosen from the source's record ("writer", "reader");
	// Note is what the choice says of an old record ("" for none).
	Chosen []string
	Note   string
}

// chooseHeaps settles the heaps not given as load does (loader.ChooseHeaps): from the
// snapshot's metadata, or the workload's record; given ones are checked against the
// measured need. The faithful method's writer holds its catalog as production's does
// (its heap at production's ratio to the live set, measured quieter than the need
// rule), where this machine holds that heap.
func chooseHeaps(o Options, src Source, mach evitaserver.Machine, embedded bool) (Heaps, error) {
	sc := loader.SpawnConfig{Pristine: src.Pristine, Catalog: src.Catalog, SnapshotCompress: o.SnapshotCompress}
	if o.ServerHeap != nil {
		sc.ServerHeap = *o.ServerHeap
	}
	if o.ReaderHeap != nil {
		sc.ReaderHeap = *o.ReaderHeap
	}
	h := Heaps{Live: src.LiveHeap()}
	if embedded && o.ServerHeap == nil && h.Live > 0 && !o.Duet {
		sc.ServerHeap = max(evitaserver.HeapAtProductionRatio(h.Live), evitaserver.NeedHeap(h.Live))
		h.AtRatio = sc.ServerHeap <= mach.LargestHeap()
		if !h.AtRatio { // this machine cannot: the need rule
			sc.ServerHeap = 0
		}
	}
	var replay *workload.Header
	if src.Workload != nil {
		replay = &src.Workload.Header
	}
	if err := loader.ChooseHeaps(&sc, replay, "writer", "reader"); err != nil {
		return h, &HeapsError{err}
	}
	if o.ServerHeap == nil && !h.AtRatio {
		h.Chosen = append(h.Chosen, "writer")
	}
	h.Writer, h.Note = sc.ServerHeap, sc.HeapNote
	if src.Workload == nil {
		h.Reader = sc.ReaderHeap
		if o.ReaderHeap == nil {
			h.Chosen = append(h.Chosen, "reader")
		}
	}
	return h, nil
}

// HeapsError is a heap that cannot be chosen or given for the source (a setting to
// change, not a failed run); Err says why.
type HeapsError struct{ Err error }

func (e *HeapsError) Error() string { return e.Err.Error() }
func (e *HeapsError) Unwrap() error { return e.Err }

// checkFit refuses heaps this machine cannot give every JVM at once: a setting no run
// can have is not a failed run to retry.
func checkFit(mach evitaserver.Machine, h Heaps, duet bool) error {
	heaps := map[string]int64{"writer": h.Writer}
	if h.Reader > 0 {
		heaps["reader"] = h.Reader
	}
	if duet { // both writers at once (the reader extracts alone, before any run)
		heaps = map[string]int64{"writer A": h.Writer, "writer B": h.Writer}
	}
	return evitaserver.CheckHeapsFit(mach, heaps)
}
