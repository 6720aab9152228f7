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
// computes overall and per-collection statistics. Memory is one int64 per row.
func Summarize(run *runfmt.Run, q Quantiles) (*RunSummary, error) {
	m := run.Manifest
	idx := make(map[string]int, len(m.Collections))
	samples := make([][]int64, len(m.Collections))
	for i, c := range m.Collections {
		idx[c.Name] = i
		samples[i] = make([]int64, 0, c.Entities)
	}
	err := run.ScanRows(func(r runfmt.Row) error {
		i := idx[r.Collection]
		if len(samples[i]) == cap(samples[i]) {
			// ScanRows reports the count mismatch at the end; do not grow past the manifest
			return nil
		}
		samples[i] = append(samples[i], r.UpsertNs)
		return nil
	})
	if err != nil {
		return nil, err
	}
	s := &RunSummary{Run: run, Quantiles: q}
	all := make([]int64, 0, m.Entities)
	for i, c := range m.Collections {
		slices.Sort(samples[i])
		s.Collections = append(s.Collections, CollectionSummary{Name: c.Name, Stats: statsOfSorted(samples[i], q),
			WallNs: c.WallNs, ReadNs: c.ReadNs, UpsertNs: c.UpsertNs})
		all = append(all, samples[i]...)
	}
	all = mergeSorted(all, samples)
	s.Overall = statsOfSorted(all, q)
	return s, nil
}

// mergeSorted merges already sorted runs (laid out back to back in all) into a
// sorted slice; a k-way merge of ~20 runs beats re-sorting 400k values.
func mergeSorted(all []int64, runs [][]int64) []int64 {
	if len(runs) <= 1 {
		return all
	}
	out := make([]int64, 0, len(all))
	pos := make([]int, len(runs))
	for len(out) < len(all) {
		best := -1
		for k, r := range runs {
			if pos[k] < len(r) && (best < 0 || r[pos[k]] < runs[best][pos[best]]) {
				best = k
			}
		}
		// take the whole stretch of the best run that stays below the next candidate
		r := runs[best]
		limit := int64(math.MaxInt64)
		for k, o := range runs {
			if k != best && pos[k] < len(o) && o[pos[k]] < limit {
				limit = o[pos[k]]
			}
		}
		j := pos[best]
		for j < len(r) && r[j] <= limit {
			j++
		}
		out = append(out, r[pos[best]:j]...)
		pos[best] = j
	}
	return out
}

// StatsOf summarizes samples (which it sorts in place).
func StatsOf(samples []int64, q Quantiles) Stats {
	slices.Sort(samples)
	return statsOfSorted(samples, q)
}

func statsOfSorted(v []int64, q Quantiles) Stats {
	n := int64(len(v))
	if n == 0 {
		return Stats{}
	}
	var sum int64
	for _, x := range v {
		sum += x
	}
	st := Stats{Count: n, SumNs: sum, MinNs: v[0], MaxNs: v[n-1]}
	switch q {
	case QuantilesLinear:
		st.MeanNs = float64(sum) / float64(n)
		st.MedianNs, st.P95Ns, st.P99Ns = linear(v, 50), linear(v, 95), linear(v, 99)
	default:
		st.MeanNs = float64(sum / n)
		st.MedianNs, st.P95Ns, st.P99Ns = float64(javaPick(v, 50)), float64(javaPick(v, 95)), float64(javaPick(v, 99))
	}
	return st
}

// javaPick is sorted[min(n-1, floor(p*n/100))].
func javaPick(v []int64, p int64) int64 {
	n := int64(len(v))
	return v[min(n-1, p*n/100)]
}

func linear(v []int64, p float64) float64 {
	h := float64(len(v)-1) * p / 100
	lo := int(math.Floor(h))
	if lo+1 >= len(v) {
		return float64(v[len(v)-1])
	}
	return float64(v[lo]) + (h-float64(lo))*float64(v[lo+1]-v[lo])
}

// JavaTenths is how the Java harness prints a non-negative integer quantity with
// %.1f after dividing by unit (1000 for µs from ns, 1e9 for s from ns): Java rounds
// the exact decimal HALF_UP, which for integers is (v + unit/20) / (unit/10).
func JavaTenths(v int64, unit int64) int64 {
	step := unit / 10
	return (v + step/2) / step
}
