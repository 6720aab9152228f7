package analyze

import (
	"fmt"
	"math"
	"slices"
	"sync"

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

// ParseQuantiles validates a quantile method's name.
func ParseQuantiles(s string) (Quantiles, error) {
	switch Quantiles(s) {
	case QuantilesJava, QuantilesLinear:
		return Quantiles(s), nil
	}
	return "", fmt.Errorf("unknown quantile method %q (use java or linear)", s)
}

// rank is the one definition of where percentile p of n sorted samples lies: the
// 0-based index of the sample it picks, and for linear quantiles the weight of the
// next sample in the interpolation.
func rank(n int, p float64, q Quantiles) (k int, frac float64) {
	if q == QuantilesLinear {
		h := float64(n-1) * p / 100
		k = int(math.Floor(h))
		return k, h - float64(k)
	}
	return min(n-1, int(math.Floor(p*float64(n)/100))), 0
}

// quantileSorted is percentile p of sorted samples (n > 0).
func quantileSorted(v []int64, p float64, q Quantiles) float64 {
	k, frac := rank(len(v), p, q)
	x := float64(v[k])
	if frac > 0 && k+1 < len(v) {
		x += frac * float64(v[k+1]-v[k])
	}
	return x
}

// percentiles are the three a summary carries.
var percentiles = [3]float64{50, 95, 99}

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

// CostStats is what the upserts' wall time was made of, from entities.csv's cost
// columns: sums and means per upsert. A figure is -1 when some row lacks it (an
// empty field); a summary without any has no CostStats at all.
type CostStats struct {
	Rows                  int64
	CPUSumNs, WaitSumNs   int64
	AllocSumBytes         int64
	CPUMeanNs, WaitMeanNs float64
	AllocMeanBytes        float64
	cpuRows, waitRows     int64
	allocRows             int64
}

// add counts one row's cost figures (Unknown ones left out).
func (c *CostStats) add(r runfmt.Row) {
	c.Rows++
	if r.CPUNs >= 0 {
		c.CPUSumNs += r.CPUNs
		c.cpuRows++
	}
	if r.WaitNs >= 0 {
		c.WaitSumNs += r.WaitNs
		c.waitRows++
	}
	if r.AllocBytes >= 0 {
		c.AllocSumBytes += r.AllocBytes
		c.allocRows++
	}
}

// merge adds o's rows to c's.
func (c *CostStats) merge(o *CostStats) {
	c.Rows += o.Rows
	c.CPUSumNs, c.cpuRows = c.CPUSumNs+o.CPUSumNs, c.cpuRows+o.cpuRows
	c.WaitSumNs, c.waitRows = c.WaitSumNs+o.WaitSumNs, c.waitRows+o.waitRows
	c.AllocSumBytes, c.allocRows = c.AllocSumBytes+o.AllocSumBytes, c.allocRows+o.allocRows
}

// done computes the means: a figure is a mean of every row or none (-1).
func (c *CostStats) done() {
	m := func(sum, n int64) float64 {
		if n == 0 || n != c.Rows {
			return -1
		}
		return float64(sum) / float64(n)
	}
	c.CPUMeanNs, c.WaitMeanNs, c.AllocMeanBytes = m(c.CPUSumNs, c.cpuRows), m(c.WaitSumNs, c.waitRows), m(c.AllocSumBytes, c.allocRows)
}

// CollectionSummary is one collection of one run.
type CollectionSummary struct {
	Name string
	Stats
	// Cost is what its upserts' wall time was made of (nil: the run has no cost columns)
	Cost     *CostStats
	WallNs   int64
	ReadNs   int64
	UpsertNs int64
	// ShareOfWallPct is the collection's wall-clock over the load wall-clock (0 when
	// that is 0, as the Java harness prints it).
	ShareOfWallPct float64
}

// RunSummary is everything a report needs about one run; every derived figure is
// computed here, not where it is shown.
type RunSummary struct {
	Run         *runfmt.Run
	Quantiles   Quantiles
	Overall     Stats
	Cost        *CostStats          // the whole run's (nil: no cost columns)
	Collections []CollectionSummary // manifest (load) order
	// IngestNs is load wall-clock minus source read: the time the load would take if
	// reading the source were free. Never negative: within its rounding a read may
	// print longer than its load, and then ingest is below the clock's resolution.
	IngestNs int64
	// NoIngest says why ingest has no meaning for this run ("" when it has one): with
	// prefetch the source reads overlap the upserts, so load - read is not the load
	// without reading.
	NoIngest string
	// LoopOverheadNs is load wall-clock - upsert - source read: the loader's own share
	// (nil with prefetch, where reads overlap upserts).
	LoopOverheadNs *int64
	// TotalNs is load wall-clock plus goLive; nil unless goLive completed.
	TotalNs *int64
	// Shares of the load wall-clock in percent (0 when it is 0).
	UpsertSharePct, ReadSharePct, IngestSharePct, LoopOverheadSharePct float64
	// LoaderCPUPct is the loader process's own CPU time as a share of the load
	// wall-clock (nil when unrecorded).
	LoaderCPUPct *float64
	// Entities per second over pure upsert time, the load wall-clock and ingest (0
	// when the time is 0, as the Java harness prints them).
	PerSecondUpsert, PerSecondWall, PerSecondIngest float64
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
		samples[i] = make([]int64, 0, min(c.Entities, 1<<20)) // a manifest is not trusted with an allocation
	}
	// Without resampling (keep), a collection's figures are selected as soon as its
	// last row is read, on another core while the reading goes on: the order statistics
	// reorder the samples in place, and nothing after needs their order. The bootstrap's
	// resample sets keep the rows' order, so with keep every figure waits for the end.
	stats := make([]Stats, len(m.Collections))
	selected := make([]bool, len(m.Collections))
	costs := make([]CostStats, len(m.Collections)) // kept when the file has the cost columns
	var wg sync.WaitGroup
	defer wg.Wait() // an error return leaves no goroutine reordering behind it
	lastName, i := "", 0
	err := run.ScanRows(func(r runfmt.Row) error {
		if r.Collection != lastName {
			lastName, i = r.Collection, idx[r.Collection]
		}
		if int64(len(samples[i])) == m.Collections[i].Entities {
			// ScanRows reports the count mismatch at the end; do not grow past the manifest
			return nil
		}
		samples[i] = append(samples[i], r.UpsertNs)
		costs[i].add(r)
		if !keep && int64(len(samples[i])) == m.Collections[i].Entities {
			selected[i] = true
			k := i
			wg.Go(func() { stats[k] = statsOf(samples[k], q) })
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	wg.Wait()
	s := &RunSummary{Run: run, Quantiles: q}
	all := make([]int64, 0, m.Entities)
	var kept map[string]resampleSet
	if keep {
		kept = make(map[string]resampleSet, len(m.Collections)+1)
	}
	whole := &CostStats{}
	for i := range costs {
		whole.merge(&costs[i])
	}
	if whole.cpuRows+whole.waitRows+whole.allocRows > 0 { // a file with the cost columns
		s.Cost = whole
	}
	for i, c := range m.Collections {
		all = append(all, samples[i]...)
		if !selected[i] {
			stats[i] = statsOf(samples[i], q)
		}
		cs := CollectionSummary{Name: c.Name, Stats: stats[i],
			WallNs: c.WallNs, ReadNs: c.ReadNs, UpsertNs: c.UpsertNs, ShareOfWallPct: pctOf(c.WallNs, m.Timings.LoadWallNs)}
		if s.Cost != nil {
			costs[i].done()
			cs.Cost = &costs[i]
		}
		s.Collections = append(s.Collections, cs)
		if keep {
			kept[c.Name] = newResampleSet(samples[i], q)
		}
	}
	s.Overall = statsOf(all, q)
	if s.Cost != nil {
		s.Cost.done()
	}
	if keep {
		kept[Overall] = newResampleSet(all, q)
	}
	s.derive()
	return s, kept, nil
}

// derive computes the run's clocks-derived figures.
func (s *RunSummary) derive() {
	m := s.Run.Manifest
	t := m.Timings
	s.IngestNs = max(0, t.LoadWallNs-t.SourceReadNs)
	if m.Conditions.Prefetch {
		s.NoIngest = "with prefetch the source reads overlap the upserts, so load - read is not the load without reading"
	} else {
		o := max(0, t.LoadWallNs-t.UpsertNs-t.SourceReadNs)
		s.LoopOverheadNs = &o
		s.LoopOverheadSharePct = pctOf(o, t.LoadWallNs)
	}
	if g := m.GoLive; g.Status == runfmt.GoLiveOK && g.Ns != nil {
		tot := t.LoadWallNs + *g.Ns // cannot overflow: the manifest checks it
		s.TotalNs = &tot
	}
	s.UpsertSharePct = pctOf(t.UpsertNs, t.LoadWallNs)
	s.ReadSharePct = pctOf(t.SourceReadNs, t.LoadWallNs)
	s.IngestSharePct = pctOf(s.IngestNs, t.LoadWallNs)
	if c := m.Loader.CPUNs; c != nil {
		p := pctOf(*c, t.LoadWallNs)
		s.LoaderCPUPct = &p
	}
	s.PerSecondUpsert = perSecond(m.Entities, t.UpsertNs)
	s.PerSecondWall = perSecond(m.Entities, t.LoadWallNs)
	s.PerSecondIngest = perSecond(m.Entities, s.IngestNs)
}

func pctOf(part, whole int64) float64 {
	if whole <= 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}

func perSecond(n, ns int64) float64 {
	if ns <= 0 {
		return 0
	}
	return float64(n) * 1e9 / float64(ns)
}

// statsOf summarizes samples, reordering them in place. Only three order statistics
// are needed, so it selects them (expected O(n)) instead of sorting (O(n log n)).
func statsOf(v []int64, q Quantiles) Stats {
	n := int64(len(v))
	if n == 0 {
		return Stats{}
	}
	st := Stats{Count: n, MinNs: v[0], MaxNs: v[0]}
	for _, x := range v {
		st.SumNs += x // a run's rows are checked against its clocks: no overflow
		st.MinNs = min(st.MinNs, x)
		st.MaxNs = max(st.MaxNs, x)
	}
	if q == QuantilesLinear {
		st.MeanNs = float64(st.SumNs) / float64(n)
	} else {
		st.MeanNs = float64(st.SumNs / n)
	}
	ps := orderStats(v, percentiles[:], q)
	st.MedianNs, st.P95Ns, st.P99Ns = ps[0], ps[1], ps[2]
	return st
}

// orderStats returns the percentiles ps (ascending) of v as rank defines them,
// reordering v: each needed rank is selected, never the whole of v sorted.
func orderStats(v []int64, ps []float64, q Quantiles) []float64 {
	n := len(v)
	out := make([]float64, len(ps))
	lo := 0 // v[:lo] holds the lo smallest values, already placed
	for i, p := range ps {
		k, frac := rank(n, p, q)
		if k < lo { // two percentiles on the same index
			k = lo - 1
		}
		selectNth(v[lo:], k-lo)
		x := float64(v[k])
		if frac > 0 && k+1 < n {
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

// javaTenths is how the Java harness prints a non-negative integer quantity with
// %.1f after dividing by unit (1000 for µs from ns, 1e9 for s from ns): Java rounds
// the exact decimal HALF_UP, which for integers is (v + unit/20) / (unit/10).
func javaTenths(v int64, unit int64) int64 {
	step := unit / 10
	return (v + step/2) / step
}
