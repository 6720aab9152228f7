package analyze

import (
	"maps"
	"slices"
)

// Dominant is the one rule for a catalog's dominant collection, the one a series
// gates on and a history follows: Product when the catalog has it, else the
// collection with the most entities (ties broken by name); "" for none.
//
// It reads entity counts, never times: the counts are the catalog's own, the same
// for both builds and known before the first run, so the collection judged cannot
// change with the build being judged or between a series' plan and its answer.
func Dominant(entities map[string]int64) string {
	if _, ok := entities["Product"]; ok {
		return "Product"
	}
	best := ""
	for _, n := range slices.Sorted(maps.Keys(entities)) {
		if best == "" || entities[n] > entities[best] {
			best = n
		}
	}
	return best
}

// DominantOf is a run's dominant collection (Dominant over its entity counts).
func DominantOf(s *RunSummary) string {
	counts := map[string]int64{}
	for _, c := range s.Collections {
		counts[c.Name] = c.Count
	}
	return Dominant(counts)
}

// dominantOfRuns is the dominant collection of runs of one catalog (Dominant over
// their entity counts, the largest a collection has in any of them).
func dominantOfRuns(sums []*RunSummary) string {
	counts := map[string]int64{}
	for _, s := range sums {
		for _, c := range s.Collections {
			counts[c.Name] = max(counts[c.Name], c.Count)
		}
	}
	return Dominant(counts)
}
