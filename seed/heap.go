package seed

import (
	"fmt"

	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/runfmt"
)

// The built-in profile's catalog costs about liveBase + livePerScale × s + liveQuad × s²
// of live heap at scale s, a fit (weighted by 1/live, every point within 0.9 %) of five
// measurements: the seeding server's used heap after a full collection, catalog ALIVE,
// on evitaDB 2026.2.3 at scales 0.01, 0.02, 0.05 and 0.1 (283, 415, 834 and 1,562 MiB;
// docs/seed.md), and the writer's at scale 1.0 on 2026.2.2, 19.40 GB (18,501 MiB) after
// the full collection its goLive ran into (docs/measuring.md, 2026-12-03). The small
// scales alone extrapolated linearly to 14.3 GiB at scale 1, a quarter too little: a
// scale-1.0 replay into the 21g heap that estimate allowed loaded, then died in goLive.
// Between 0.1 and 1.0 the curve is an interpolation, not a measurement. Production's
// catalog costs 12.87 GB at scale 1; an empty server about 50 MB.
const (
	liveBase     int64 = 145 << 20
	livePerScale int64 = 13_590 << 20
	liveQuad     int64 = 4_775 << 20
)

// LiveHeapSourceAt says where LiveHeapAt's figure at scale s comes from, for a refusal
// to quote: within the measured scales an estimate, above scale 1 an extrapolation.
func LiveHeapSourceAt(s float64) string {
	const measured = "the built-in profile's measured live heaps at scales 0.01 to 1.0"
	if s > 1 {
		return "extrapolated beyond scale 1.0 from " + measured
	}
	return "estimated from " + measured
}

// LiveHeapAt estimates the live heap of p's catalog at scale s. Only the built-in
// profile has been measured: for another, ok is false.
func LiveHeapAt(p *Profile, s float64) (live int64, ok bool) {
	if p.Digest() != DefaultProfile().Digest() {
		return 0, false
	}
	return liveBase + int64(float64(livePerScale)*s+float64(liveQuad)*s*s), true
}

// LargestScaleFor is the largest scale, in hundredths, whose catalog of p a heap of the
// given size holds by the heap rule (evitaserver.NeedHeap); ok is false for a profile
// never measured, 0 when not even scale 0.01 fits.
func LargestScaleFor(p *Profile, heap int64) (scale float64, ok bool) {
	if _, ok := LiveHeapAt(p, 0); !ok {
		return 0, false
	}
	best := 0
	for h := 1; h <= 10_000; h++ { // need grows with scale: stop at the first that does not fit
		live, _ := LiveHeapAt(p, float64(h)/100)
		if evitaserver.NeedHeap(live) > heap {
			break
		}
		best = h
	}
	return float64(best) / 100, true
}

// checkHeap refuses a heap below what p's catalog at scale s needs, when that is known.
func checkHeap(server string, heap int64, p *Profile, s float64) error {
	live, ok := LiveHeapAt(p, s)
	if !ok {
		return nil
	}
	if need := evitaserver.NeedHeap(live); heap < need {
		return &evitaserver.HeapError{Server: server, Heap: heap, Need: need,
			Why: fmt.Sprintf("the built-in profile at scale %g holds about %s live", s, runfmt.FormatSize(live))}
	}
	return nil
}
