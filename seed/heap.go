package seed

import (
	"fmt"

	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/runfmt"
)

// The built-in profile's catalog costs about liveBase + livePerScale × s of live heap
// at scale s: the seeding server's used heap after a full collection, catalog ALIVE,
// measured on evitaDB 2026.2.3 at scales 0.01, 0.02, 0.05 and 0.1 (283, 415, 834 and
// 1,562 MB; docs/server.md has the writer's figures). Production's catalog costs 12.87 GB
// at scale 1; an empty server about 50 MB.
const (
	liveBase     int64 = 140 << 20
	livePerScale int64 = 14_200 << 20
)

// LiveHeapAt estimates the live heap of p's catalog at scale s. Only the built-in
// profile has been measured: for another, ok is false.
func LiveHeapAt(p *Profile, s float64) (live int64, ok bool) {
	if p.Digest() != DefaultProfile().Digest() {
		return 0, false
	}
	return liveBase + int64(float64(livePerScale)*s), true
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
