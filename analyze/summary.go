// Package analyze turns run directories into numbers: per-run latency summaries with
// the Java harness's definitions, the load/ingest/goLive separation, and (in
// compare.go) across-run intervals, the comparability contract and verdicts.
// It never talks to a server.
package analyze

import (
	"fmt"
	"math"
	"slices"

	"github.com/warmstat/warmstat/runfmt"
)

// Quantiles selects how percentiles and the mean are computed.
type Quantiles string

const (
	// QuantilesJava is the harness's definition: percentile p is the sorted sample at
	// 0-based index min(n-1, floor(p*n/100)) (no interpolation; the median of an even
	// count is the upper middle), and the mean is the sum divided by n truncated to
	// whole nanoseconds. An imported Java run reproduces its printed figures exactly.
	QuantilesJava Quantiles = "java"
	// QuantilesLinear interpolates between order statistics at h = (n-1)*p/100
	// (Hyndman-Fan type 7, numpy's default) and keeps the mean unrounded.
	QuantilesLinear Quantiles = "linear"
)

// ParseQuantiles validates a --quantiles value.
func ParseQuantiles(s string) (Quantiles, error) {
	switch Quantiles(s) {
	case QuantilesJava, QuantilesLinear:
		return Quantiles(s), nil
	}
	return "", fmt.Errorf("unknown quantile method %q (use java or linear)", s)
}

// Stats summarizes upsert latencies, in nanoseconds.
type Stats struct {
	Count    int64
	SumNs    int64
	MeanNs   float64
	MedianNs float64
	P95Ns    float64
	P99Ns    float64
	MinNs    int64
	MaxNs    int64
}

// CollectionSummary is one collection of one run.
type CollectionSummary struct {
	Name string
	Stats
	WallNs   int64
	ReadNs   int64
	UpsertNs int64
}

// RunSummary is everything report needs about one run.
type RunSummary struct {
	Run         *runfmt.Run
	Quantiles   Quantiles
	Overall     Stats
	Collections []CollectionSummary // manifest (load) order
}

// Manifest is a shortcut to the run's manifest.
func (s *RunSummary) Manifest() *runfmt.Manifest { return s.Run.Manifest }

// IngestNs is load wall-clock minus source read: the time the load would take if
// reading the source were free.
func (s *RunSummary) IngestNs() int64 {
	t := s.Manifest().Timings
	return t.LoadWallNs - t.SourceReadNs
}

// TotalNs is load wall-clock plus goLive, defined only when goLive completed.
func (s *RunSummary) TotalNs() (int64, bool) {
	m := s.Manifest()
	if m.GoLive.Status != runfmt.GoLiveOK || m.GoLive.Ns == nil {
		return 0, false
	}
	return m.Timings.LoadWallNs + *m.GoLive.Ns, true
}

// Summarize reads the run's CSV once (validating it against the manifest) and
// computes overall and per-collection statistics. Memory is two int64 per row.
func Summarize(run *runfmt.Run, q Quantiles) (*RunSummary, error) {
	s, _, err := summarize(run, q, false)
	return s, err
}

// summarize optionally returns, per collection and under Overall, what the two-stage
// bootstrap needs to redraw each statistic (see resampleSet).
func summarize(run *runfmt.Run, q Quantiles, keep bool) (*RunSummary, map[string]resampleSet, error) {
	m := run.Manifest
	idx := make(map[string]int, len(m.Collections))
	samples := make([][]int64, len(m.Collections))
	for i, c := range m.Collections {
		idx[c.Name] = i
		samples[i] = make([]int64, 0, c.Entities)
	}
	lastName, i := "", 0
	err := run.ScanRows(func(r runfmt.Row) error {
		if r.Collection != lastName {
			lastName, i = r.Collection, idx[r.Collection]
		}
		if len(samples[i]) == cap(samples[i]) {
			// ScanRows reports the count mismatch at the end; do not grow past the manifest
			return nil
		}
		samples[i] = append(samples[i], r.UpsertNs)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	s := &RunSummary{Run: run, Quantiles: q}
	all := make([]int64, 0, m.Entities)
	var kept map[string]resampleSet
	if keep {
		kept = make(map[string]resampleSet, len(m.Collections)+1)
	}
	for i, c := range m.Collections {
		all = append(all, samples[i]...)
		s.Collections = append(s.Collections, CollectionSummary{Name: c.Name, Stats: StatsOf(samples[i], q),
			WallNs: c.WallNs, ReadNs: c.ReadNs, UpsertNs: c.UpsertNs})
		if keep {
			kept[c.Name] = newResampleSet(samples[i], q)
		}
	}
	s.Overall = StatsOf(all, q)
	if keep {
		kept[Overall] = newResampleSet(all, q)
	}
	return s, kept, nil
}

// StatsOfSorted summarizes already sorted samples without reordering them.
func StatsOfSorted(v []int64, q Quantiles) Stats {
	n := len(v)
	if n == 0 {
		return Stats{}
	}
	st := Stats{Count: int64(n), MinNs: v[0], MaxNs: v[n-1]}
	for _, x := range v {
		st.SumNs += x
	}
	pick := func(p float64) float64 {
		if q == QuantilesLinear {
			h := float64(n-1) * p / 100
			k := int(math.Floor(h))
			if k+1 >= n {
				return float64(v[n-1])
			}
			return float64(v[k]) + (h-float64(k))*float64(v[k+1]-v[k])
		}
		return float64(v[min(n-1, int(int64(p)*int64(n)/100))])
	}
	if q == QuantilesLinear {
		st.MeanNs = float64(st.SumNs) / float64(n)
	} else {
		st.MeanNs = float64(st.SumNs / int64(n))
	}
	st.MedianNs, st.P95Ns, st.P99Ns = pick(50), pick(95), pick(99)
	return st
}

// StatsOf summarizes samples, reordering them in place. Only three order statistics
// are needed, so it selects them (expected O(n)) instead of sorting (O(n log n)).
func StatsOf(v []int64, q Quantiles) Stats {
	n := int64(len(v))
	if n == 0 {
		return Stats{}
	}
	st := Stats{Count: n, MinNs: v[0], MaxNs: v[0]}
	for _, x := range v {
		st.SumNs += x
		st.MinNs = min(st.MinNs, x)
		st.MaxNs = max(st.MaxNs, x)
	}
	switch q {
	case QuantilesLinear:
		st.MeanNs = float64(st.SumNs) / float64(n)
		ps := orderStats(v, []float64{50, 95, 99}, true)
		st.MedianNs, st.P95Ns, st.P99Ns = ps[0], ps[1], ps[2]
	default:
		st.MeanNs = float64(st.SumNs / n)
		ps := orderStats(v, []float64{50, 95, 99}, false)
		st.MedianNs, st.P95Ns, st.P99Ns = ps[0], ps[1], ps[2]
	}
	return st
}

// orderStats returns the percentiles ps (ascending) of v, reordering v. With linear
// false it is the Java pick sorted[min(n-1, floor(p*n/100))]; with linear true the
// type-7 interpolation between sorted[floor(h)] and sorted[floor(h)+1], h=(n-1)p/100.
func orderStats(v []int64, ps []float64, linear bool) []float64 {
	n := len(v)
	out := make([]float64, len(ps))
	lo := 0 // v[:lo] holds the lo smallest values, already placed
	for i, p := range ps {
		var k int
		var frac float64
		if linear {
			h := float64(n-1) * p / 100
			k = int(math.Floor(h))
			frac = h - float64(k)
		} else {
			k = min(n-1, int(int64(p)*int64(n)/100))
		}
		if k < lo { // two percentiles on the same index
			k = lo - 1
		}
		selectNth(v[lo:], k-lo)
		x := float64(v[k])
		if linear && frac > 0 && k+1 < n {
			next := slices.Min(v[k+1:])
			x += frac * float64(next-v[k])
		}
		out[i] = x
		lo = k + 1
	}
	return out
}

// selectNth reorders v so that v[k] is the value a sort would put there, everything
// before it is <= and everything after it >=. Median-of-three quickselect with a
// sort fallback when partitions keep coming out lopsided.
func selectNth(v []int64, k int) {
	budget := 2 * (bitsLen(len(v)) + 1)
	for len(v) > 16 {
		if budget == 0 {
			slices.Sort(v)
			return
		}
		budget--
		mid := len(v) / 2
		a, b, c := v[0], v[mid], v[len(v)-1]
		pivot := max(min(a, b), min(max(a, b), c))
		// three-way partition: [< pivot | == pivot | > pivot]
		lt, i, gt := 0, 0, len(v)
		for i < gt {
			switch x := v[i]; {
			case x < pivot:
				v[lt], v[i] = v[i], v[lt]
				lt++
				i++
			case x > pivot:
				gt--
				v[gt], v[i] = v[i], v[gt]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			v = v[:lt]
		case k >= gt:
			v, k = v[gt:], k-gt
		default:
			return
		}
	}
	slices.Sort(v)
}

func bitsLen(n int) int {
	b := 0
	for ; n > 0; n >>= 1 {
		b++
	}
	return b
}

// JavaTenths is how the Java harness prints a non-negative integer quantity with
// %.1f after dividing by unit (1000 for µs from ns, 1e9 for s from ns): Java rounds
// the exact decimal HALF_UP, which for integers is (v + unit/20) / (unit/10).
func JavaTenths(v int64, unit int64) int64 {
	step := unit / 10
	return (v + step/2) / step
}
