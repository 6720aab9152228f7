package seed

import (
	"fmt"

	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/runfmt"
)

// EntitiesAt is how many entities p's catalog has at scale s: what the generator makes.
func EntitiesAt(p *Profile, s float64) int64 {
	var n int64
	for _, c := range p.Collections {
		n += int64(c.CountAt(s))
	}
	return n
}

// LiveEstimate is what p's catalog at a scale is estimated to hold live in a server,
// and what the figure rests on.
type LiveEstimate struct {
	Entities int64
	Bytes    int64
	Source   string // for a message to quote
	// Measured: the figure rests on a measurement of this profile's own catalog (the
	// built-in one's fit, or a measured shape's source), so a heap below its need may be
	// refused; otherwise it only proposes heaps.
	Measured bool
}

// LiveHeapAt estimates the live heap of p's catalog at scale s from its own size, its
// entities (liveEstimator).
func LiveHeapAt(p *Profile, s float64) LiveEstimate { return liveEstimator(p)(EntitiesAt(p, s)) }

// liveEstimator is p's estimate of a catalog's live heap from its entities. The
// built-in profile's is the curve measured on it (evitaserver.BuiltInLiveHeap). A shape
// whose source's live heap was measured (its snapshot's) follows that curve through its
// source's point: the curve × measured / the curve at the source's entities. Any other
// profile gets the built-in catalog's cost per entity, an estimate the seeded
// snapshot's own measurement then replaces.
func liveEstimator(p *Profile) func(n int64) LiveEstimate {
	const measured = "the built-in catalog's live heaps measured at 0.01 to 1.0 of production's size"
	m := p.Measured
	switch {
	case p.Digest() == defaultDigest:
		return func(n int64) LiveEstimate {
			e := LiveEstimate{Entities: n, Bytes: evitaserver.BuiltInLiveHeap(n), Measured: true, Source: "estimated from " + measured}
			switch x := evitaserver.ProductionShare(n); {
			case x > 1:
				e.Source = "extrapolated beyond production's size from " + measured
			case x < 0.01:
				e.Source = "extrapolated below 0.01 of production's size from " + measured
			}
			return e
		}
	case m != nil && m.LiveHeapBytes != nil && m.Entities > 0:
		ratio := float64(*m.LiveHeapBytes) / float64(evitaserver.BuiltInLiveHeap(m.Entities))
		src := fmt.Sprintf("scaled from its source's %s live at %d entities along %s", runfmt.FormatSize(*m.LiveHeapBytes), m.Entities, measured)
		return func(n int64) LiveEstimate {
			return LiveEstimate{Entities: n, Bytes: int64(float64(evitaserver.BuiltInLiveHeap(n)) * ratio), Measured: true, Source: src}
		}
	}
	return func(n int64) LiveEstimate {
		return LiveEstimate{Entities: n, Bytes: evitaserver.BuiltInLiveHeap(n),
			Source: "at the built-in catalog's live heap per entity (this profile's own was never measured)"}
	}
}

var defaultDigest = DefaultProfile().Digest()

// HeapAt is the heap warmstat proposes for a server holding p's catalog at scale s:
// 23 GiB × its share of production's entities + 1 GiB, never below its estimated need.
func HeapAt(p *Profile, s float64) int64 {
	e := LiveHeapAt(p, s)
	return max(evitaserver.HeapForShare(evitaserver.ProductionShare(e.Entities)), evitaserver.NeedHeap(e.Bytes))
}

// LargestScaleFor is the largest scale, in hundredths, whose catalog of p a heap of the
// given size holds by the heap rule (evitaserver.NeedHeap); 0 when not even scale 0.01
// fits.
func LargestScaleFor(p *Profile, heap int64) float64 {
	best, live := 0, liveEstimator(p)
	for h := 1; h <= 1_000; h++ { // need grows with scale: stop at the first that does not fit
		if evitaserver.NeedHeap(live(EntitiesAt(p, float64(h)/100)).Bytes) > heap {
			break
		}
		best = h
	}
	return float64(best) / 100
}

// Fit is a writer's heap need held against this machine: what a workload file's note
// says when the machine cannot replay it.
type Fit struct {
	Need, Live     int64   // the writer's heap need (NeedHeap), from the catalog's live heap
	Memory         int64   // the memory the machine's JVMs may use (Machine.Effective)
	Largest        int64   // the largest heap that fits it
	LargestScale   float64 // the largest scale of p whose writer fits it
	LiveHeapSource string  // where the live heap's estimate came from
}

// TooLargeHere is the writer of p's catalog, holding live bytes live, held against this
// machine; ok only when no heap the machine holds is large enough (a machine that
// cannot be read says nothing).
func TooLargeHere(p *Profile, live int64, source string) (f Fit, ok bool) {
	m, err := evitaserver.ReadMachine()
	if err != nil {
		return Fit{}, false
	}
	f = Fit{Need: evitaserver.NeedHeap(live), Live: live, Memory: m.Effective(), Largest: m.LargestHeap(), LiveHeapSource: source}
	if f.Need <= f.Largest {
		return Fit{}, false
	}
	f.LargestScale = LargestScaleFor(p, f.Largest)
	return f, true
}

// checkHeap refuses a heap below what p's catalog at scale s needs, when a measurement
// says so (LiveEstimate.Measured).
func checkHeap(server string, heap int64, p *Profile, s float64) error {
	e := LiveHeapAt(p, s)
	if !e.Measured {
		return nil
	}
	if need := evitaserver.NeedHeap(e.Bytes); heap < need {
		return &evitaserver.HeapError{Server: server, Heap: heap, Need: need,
			Why: fmt.Sprintf("its %d entities hold about %s live, %s", e.Entities, runfmt.FormatSize(e.Bytes), e.Source)}
	}
	return nil
}

// tooLargeHere refuses a catalog whose measured need no heap of machine m holds, with
// the largest scale that fits: lowering the heap, what the machine check alone would
// advise, would only trade that refusal for one of the heap.
func tooLargeHere(m evitaserver.Machine, p *Profile, s float64) error {
	e := LiveHeapAt(p, s)
	fit := m.LargestHeap()
	if need := evitaserver.NeedHeap(e.Bytes); e.Measured && need > fit {
		limit := m.Effective()
		return fmt.Errorf("%w: this catalog (%d entities at scale %g) needs a heap of at least %s (about %s live, %s), but the largest heap that fits this machine's %s is %s: a scale of %g or less fits here; this one needs a machine with more memory",
			evitaserver.ErrHeapsDoNotFit, e.Entities, s, runfmt.FormatBytesAtLeast(need), runfmt.FormatSize(e.Bytes), e.Source,
			runfmt.FormatBytes(&limit), runfmt.FormatBytesExact(&fit), LargestScaleFor(p, fit))
	}
	return nil
}

// Size is the record of p's catalog at scale s that a snapshot or workload keeps: every
// later heap for it is chosen from this, not from the scale.
func Size(p *Profile, s float64) *evitaserver.CatalogSize {
	e := LiveHeapAt(p, s)
	return &evitaserver.CatalogSize{Entities: e.Entities, ProductionShare: evitaserver.ProductionShare(e.Entities),
		LiveHeapEstimateBytes: e.Bytes, LiveHeapEstimateSource: e.Source}
}
