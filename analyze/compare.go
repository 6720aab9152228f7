package analyze

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/warmstat/warmstat/runfmt"
	"gonum.org/v1/gonum/stat/distuv"
)

// Metric is one compared figure. Every metric is a time: higher is slower.
type Metric string

const (
	MetricMean     Metric = "mean"
	MetricMedian   Metric = "median"
	MetricP95      Metric = "p95"
	MetricP99      Metric = "p99"
	MetricLoadWall Metric = "load_wall"
	MetricIngest   Metric = "ingest"
	MetricUpsert   Metric = "upsert"
	MetricGoLive   Metric = "golive"
	MetricTotal    Metric = "total"
)

// LatencyMetrics are per collection (and overall), in µs; RunMetrics are per run, in s.
var (
	LatencyMetrics = []Metric{MetricMean, MetricMedian, MetricP95, MetricP99}
	RunMetrics     = []Metric{MetricLoadWall, MetricIngest, MetricUpsert, MetricGoLive, MetricTotal}
)

// Overall is the collection name of whole-run rows.
const Overall = "*"

// Method is how the confidence interval of a change is computed.
type Method string

const (
	// MethodWelchT: Welch t-interval on the per-run log statistics (the run is the
	// unit of replication). Calibrated at 2-5 runs per build; the default.
	MethodWelchT Method = "welch-t"
	// MethodTwoStage: percentile bootstrap that resamples runs, then the samples
	// inside each resampled run. Anti-conservative below ~10 runs per build.
	MethodTwoStage Method = "two-stage-bootstrap"
	// MethodCluster: percentile bootstrap over runs only. Unusable below ~10 runs.
	MethodCluster Method = "cluster-bootstrap"
)

// ParseMethod validates a --method value.
func ParseMethod(s string) (Method, error) {
	switch Method(s) {
	case MethodWelchT, MethodTwoStage, MethodCluster:
		return Method(s), nil
	}
	return "", fmt.Errorf("unknown method %q (use %s, %s or %s)", s, MethodWelchT, MethodTwoStage, MethodCluster)
}

// Verdicts.
const (
	Faster       = "faster"
	Slower       = "slower"
	Unresolved   = "unresolved"
	Insufficient = "insufficient"
)

// CompareOptions configure Compare.
type CompareOptions struct {
	ThresholdPct float64 // noise threshold: a verdict needs the whole interval beyond ±threshold
	Method       Method
	Resamples    int
	Seed         uint64
	Quantiles    Quantiles
}

// Row is one metric of one collection.
type Row struct {
	Collection string   `json:"collection"`
	Metric     Metric   `json:"metric"`
	Unit       string   `json:"unit"`
	A          *float64 `json:"a"` // geometric mean across the group's runs
	B          *float64 `json:"b"`
	RunsA      int      `json:"runs_a"`
	RunsB      int      `json:"runs_b"`
	DeltaPct   *float64 `json:"delta_pct"`
	CILowPct   *float64 `json:"ci_low_pct"`
	CIHighPct  *float64 `json:"ci_high_pct"`
	Verdict    string   `json:"verdict"`
	// CVPct is the pooled between-run coefficient of variation (log scale), the
	// noise the interval is built from; nil with fewer than 2 runs on both sides.
	CVPct *float64 `json:"between_run_cv_pct"`
}

// Comparison is the result of comparing group B against group A.
type Comparison struct {
	A, B        *Group
	Options     CompareOptions
	Dominant    string // the collection shown first (Product, or the largest by wall)
	Rows        []Row
	Collections []string // compared collections, dominant first, then by A's wall share
	Notes       []string
}

// perRun holds one run's figures for every metric.
type perRun struct {
	lat   map[string]map[Metric]float64 // collection -> metric -> ns
	clock map[Metric]float64            // ns; absent when not defined (goLive failed)
	// what the two-stage bootstrap needs per collection (nil otherwise)
	samples map[string]resampleSet
}

// resampleSet is what it takes to redraw a statistic of a with-replacement resample
// of one run's samples: the SD for the mean, and for each quantile the sorted values
// of the ranks a resample can plausibly pick. The k-th order statistic of a resample
// of n is x[floor(n*U)], U ~ Beta(k+1, n-k), whose SD is about sqrt(p(1-p)/n); a
// window of ±8 SD (plus slack) around rank k holds it except with negligible
// probability, so no run is ever fully sorted.
type resampleSet struct {
	n       int
	sd      float64
	windows map[Metric]window
}

type window struct {
	lo     int     // rank of sorted[0]
	sorted []int64 // the values of ranks lo .. lo+len-1, ascending
}

func newResampleSet(v []int64, q Quantiles) resampleSet {
	n := len(v)
	rs := resampleSet{n: n, sd: sampleSD(v), windows: map[Metric]window{}}
	if n == 0 {
		return rs
	}
	type span struct{ lo, hi int }
	spans := map[Metric]span{}
	prev := -1
	overlap := n < 8192 // small runs: one sort is cheap, and windows may overlap
	for _, m := range []Metric{MetricMedian, MetricP95, MetricP99} {
		p := quantileOf[m] / 100
		k := rankOf(n, quantileOf[m], q)
		half := int(8*math.Sqrt(p*(1-p)*float64(n))) + 3
		sp := span{max(0, k-half), min(n-1, k+half)}
		overlap = overlap || sp.lo <= prev
		prev = sp.hi
		spans[m] = sp
	}
	if overlap {
		sorted := slices.Clone(v)
		slices.Sort(sorted)
		for m, sp := range spans {
			rs.windows[m] = window{lo: sp.lo, sorted: sorted[sp.lo : sp.hi+1]}
		}
		return rs
	}
	from := 0 // v[:from] holds the smallest ranks already placed
	for _, m := range []Metric{MetricMedian, MetricP95, MetricP99} {
		sp := spans[m]
		if sp.lo > from {
			selectNth(v[from:], sp.lo-from)
		}
		if sp.hi > sp.lo {
			selectNth(v[sp.lo+1:], sp.hi-sp.lo-1)
		}
		w := slices.Clone(v[sp.lo : sp.hi+1])
		slices.Sort(w)
		rs.windows[m] = window{lo: sp.lo, sorted: w}
		from = sp.hi + 1
	}
	return rs
}

// rankOf is the 0-based rank a quantile definition picks (the lower one for linear).
func rankOf(n int, p float64, q Quantiles) int {
	if q == QuantilesLinear {
		return int(float64(n-1) * p / 100)
	}
	return min(n-1, int(p*float64(n)/100))
}

// Compare computes every row. The caller checks the contract first.
func Compare(a, b *Group, o CompareOptions) (*Comparison, error) {
	if o.Resamples <= 0 {
		o.Resamples = 10000
	}
	if o.Quantiles == "" {
		o.Quantiles = QuantilesJava
	}
	keep := o.Method == MethodTwoStage
	both, err := collect(append(slices.Clone(a.Runs), b.Runs...), o.Quantiles, keep)
	if err != nil {
		return nil, err
	}
	ra, rb := both[:len(a.Runs)], both[len(a.Runs):]
	c := &Comparison{A: a, B: b, Options: o}
	c.Collections, c.Dominant, c.Notes = collectionOrder(a, b)
	c.computeRows(ra, rb)
	return c, nil
}

// computeRows fills c.Rows, spreading rows over the cores; each row has its own
// generator seeded from (seed, row index), so output does not depend on scheduling.
func (c *Comparison) computeRows(ra, rb []perRun) {
	type job struct {
		coll string
		m    Metric
	}
	var jobs []job
	for _, coll := range append(slices.Clone(c.Collections), Overall) {
		for _, m := range LatencyMetrics {
			jobs = append(jobs, job{coll, m})
		}
	}
	for _, m := range RunMetrics {
		jobs = append(jobs, job{Overall, m})
	}
	c.Rows = make([]Row, len(jobs))
	var wg sync.WaitGroup
	next := make(chan int, len(jobs))
	for i := range jobs {
		next <- i
	}
	close(next)
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				rng := rand.New(rand.NewPCG(c.Options.Seed, uint64(i)+0x9e3779b97f4a7c15))
				c.Rows[i] = c.row(jobs[i].coll, jobs[i].m, ra, rb, rng)
			}
		}()
	}
	wg.Wait()
}

// collect summarizes runs, one per available core at a time.
func collect(runs []*runfmt.Run, q Quantiles, keep bool) ([]perRun, error) {
	out := make([]perRun, len(runs))
	errs := make([]error, len(runs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	for i, run := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i], errs[i] = summarizeRun(run, q, keep)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func summarizeRun(run *runfmt.Run, q Quantiles, keep bool) (perRun, error) {
	p := perRun{lat: map[string]map[Metric]float64{}, clock: map[Metric]float64{}}
	var s *RunSummary
	var err error
	s, p.samples, err = summarize(run, q, keep)
	if err != nil {
		return p, err
	}
	put := func(name string, st Stats) {
		if st.Count == 0 {
			return
		}
		p.lat[name] = map[Metric]float64{MetricMean: st.MeanNs, MetricMedian: st.MedianNs, MetricP95: st.P95Ns, MetricP99: st.P99Ns}
	}
	for _, c := range s.Collections {
		put(c.Name, c.Stats)
	}
	put(Overall, s.Overall)
	t := run.Manifest.Timings
	p.clock[MetricLoadWall] = float64(t.LoadWallNs)
	p.clock[MetricIngest] = float64(s.IngestNs())
	p.clock[MetricUpsert] = float64(t.UpsertNs)
	if g := run.Manifest.GoLive; g.Status == runfmt.GoLiveOK && g.Ns != nil {
		// a failed goLive contributes no goLive and no TOTAL sample
		p.clock[MetricGoLive] = float64(*g.Ns)
		tot, _ := s.TotalNs()
		p.clock[MetricTotal] = float64(tot)
	}
	return p, nil
}

// collectionOrder picks the collections present in both groups: the dominant one
// (Product, else the largest share of A's load wall-clock) first, then by share.
func collectionOrder(a, b *Group) ([]string, string, []string) {
	share := map[string]float64{}
	inB := map[string]bool{}
	for _, r := range b.Runs {
		for _, c := range r.Manifest.Collections {
			inB[c.Name] = true
		}
	}
	var notes []string
	seen := map[string]bool{}
	for _, r := range a.Runs {
		for _, c := range r.Manifest.Collections {
			if r.Manifest.Timings.LoadWallNs > 0 {
				share[c.Name] += float64(c.WallNs) / float64(r.Manifest.Timings.LoadWallNs)
			}
			if !inB[c.Name] && !seen[c.Name] {
				notes = append(notes, fmt.Sprintf("collection %s is only in A; not compared", c.Name))
			}
			seen[c.Name] = true
		}
	}
	for n := range inB {
		if !seen[n] {
			notes = append(notes, fmt.Sprintf("collection %s is only in B; not compared", n))
		}
	}
	var names []string
	for n := range seen {
		if inB[n] {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	slices.SortStableFunc(names, func(x, y string) int {
		switch {
		case share[x] > share[y]:
			return -1
		case share[x] < share[y]:
			return 1
		}
		return 0
	})
	dom := ""
	if slices.Contains(names, "Product") {
		dom = "Product"
	} else if len(names) > 0 {
		dom = names[0]
	}
	if dom != "" {
		i := slices.Index(names, dom)
		names = append([]string{dom}, append(names[:i:i], names[i+1:]...)...)
	}
	slices.Sort(notes)
	return names, dom, notes
}

// value extracts one metric of one run (ns), false when the run has no such figure.
func (p perRun) value(coll string, m Metric) (float64, bool) {
	if coll == Overall {
		if v, ok := p.clock[m]; ok {
			return v, true
		}
	}
	if lm, ok := p.lat[coll]; ok {
		v, ok := lm[m]
		return v, ok
	}
	return 0, false
}

func (c *Comparison) row(coll string, m Metric, ra, rb []perRun, rng *rand.Rand) Row {
	r := Row{Collection: coll, Metric: m, Unit: "us", Verdict: Insufficient}
	scale := 1e3
	if slices.Contains(RunMetrics, m) {
		r.Unit, scale = "s", 1e9
	}
	var idxA, idxB []int
	la, lb := logs(ra, coll, m, &idxA), logs(rb, coll, m, &idxB)
	r.RunsA, r.RunsB = len(la), len(lb)
	if len(la) > 0 {
		v := math.Exp(mean(la)) / scale
		r.A = &v
	}
	if len(lb) > 0 {
		v := math.Exp(mean(lb)) / scale
		r.B = &v
	}
	if len(la) == 0 || len(lb) == 0 {
		return r
	}
	d := mean(lb) - mean(la)
	r.DeltaPct = pct(d)
	if cv, ok := pooledSD(la, lb); ok {
		v := 100 * (math.Exp(cv) - 1)
		r.CVPct = &v
	}
	if len(la) < 2 || len(lb) < 2 {
		return r
	}
	var lo, hi float64
	switch c.Options.Method {
	case MethodTwoStage, MethodCluster:
		lo, hi = c.bootstrap(coll, m, ra, rb, idxA, idxB, rng)
	default:
		lo, hi = welch(la, lb)
	}
	r.CILowPct, r.CIHighPct = pct(lo), pct(hi)
	r.Verdict = verdict(*r.CILowPct, *r.CIHighPct, c.Options.ThresholdPct)
	return r
}

func verdict(lo, hi, threshold float64) string {
	switch {
	case lo > threshold:
		return Slower
	case hi < -threshold:
		return Faster
	}
	return Unresolved
}

func pct(logRatio float64) *float64 {
	v := 100 * (math.Exp(logRatio) - 1)
	return &v
}

func logs(runs []perRun, coll string, m Metric, idx *[]int) []float64 {
	var out []float64
	for i, p := range runs {
		if v, ok := p.value(coll, m); ok && v > 0 {
			out = append(out, math.Log(v))
			*idx = append(*idx, i)
		}
	}
	return out
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func variance(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	m := mean(v)
	s := 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return s / float64(len(v)-1)
}

// pooledSD is the pooled between-run standard deviation of the log statistic.
func pooledSD(a, b []float64) (float64, bool) {
	df := float64(len(a)-1) + float64(len(b)-1)
	if df <= 0 {
		return 0, false
	}
	return math.Sqrt((variance(a)*float64(len(a)-1) + variance(b)*float64(len(b)-1)) / df), true
}

// welch is the 95% Welch t-interval of mean(b) - mean(a).
func welch(a, b []float64) (float64, float64) {
	d := mean(b) - mean(a)
	na, nb := float64(len(a)), float64(len(b))
	qa, qb := variance(a)/na, variance(b)/nb
	se := math.Sqrt(qa + qb)
	if se == 0 {
		return d, d
	}
	df := (qa + qb) * (qa + qb) / (qa*qa/(na-1) + qb*qb/(nb-1))
	df = math.Max(df, math.Min(na, nb)-1)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(0.975)
	return d - t*se, d + t*se
}

// TQuantile975 is t(0.975, df).
func TQuantile975(df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(0.975)
}

// bootstrap is a percentile interval of mean(log θ_B*) - mean(log θ_A*): runs are
// resampled with replacement; with the two-stage method each resampled run's
// statistic is then redrawn from its own with-replacement resampling distribution.
func (c *Comparison) bootstrap(coll string, m Metric, ra, rb []perRun, ia, ib []int, rng *rand.Rand) (float64, float64) {
	within := c.Options.Method == MethodTwoStage && slices.Contains(LatencyMetrics, m)
	da := drawers(ra, ia, coll, m, within, c.Options.Quantiles)
	db := drawers(rb, ib, coll, m, within, c.Options.Quantiles)
	side := func(d []drawer) float64 {
		s := 0.0
		for range d {
			s += d[rng.IntN(len(d))].draw(rng)
		}
		return s / float64(len(d))
	}
	B := c.Options.Resamples
	diffs := make([]float64, B)
	for i := range diffs {
		diffs[i] = side(db) - side(da)
	}
	slices.Sort(diffs)
	return diffs[int(math.Floor(0.025*float64(B-1)))], diffs[int(math.Ceil(0.975*float64(B-1)))]
}

// drawer draws the log statistic of one run, either fixed (cluster bootstrap, or a
// per-run clock) or as the statistic of one with-replacement resample of the run's
// samples, without materializing the resample.
type drawer struct {
	logPoint float64
	fixed    bool
	n        int
	mean     bool
	point    float64
	seMean   float64 // sd/sqrt(n): the mean of a resample is normal by the CLT
	win      window
	a, b     float64 // a quantile of a resample is x[floor(n*U)], U ~ Beta(a, b)
	mu, sdU  float64 // normal approximation of that Beta for large n
}

var quantileOf = map[Metric]float64{MetricMedian: 50, MetricP95: 95, MetricP99: 99}

func drawers(runs []perRun, idx []int, coll string, m Metric, within bool, q Quantiles) []drawer {
	out := make([]drawer, len(idx))
	for i, k := range idx {
		v, _ := runs[k].value(coll, m)
		d := drawer{logPoint: math.Log(v), point: v, fixed: true}
		if set, ok := runs[k].samples[coll]; within && ok && set.n > 0 {
			n := set.n
			d.fixed, d.n = false, n
			if m == MetricMean {
				d.mean, d.seMean = true, set.sd/math.Sqrt(float64(n))
			} else {
				kth := rankOf(n, quantileOf[m], q)
				d.win = set.windows[m]
				d.a, d.b = float64(kth+1), float64(n-kth)
				d.mu = d.a / (d.a + d.b)
				d.sdU = math.Sqrt(d.mu * (1 - d.mu) / (d.a + d.b + 1))
			}
		}
		out[i] = d
	}
	return out
}

func (d *drawer) draw(rng *rand.Rand) float64 {
	if d.fixed {
		return d.logPoint
	}
	n := d.n
	if d.mean {
		return math.Log(math.Max(d.point+rng.NormFloat64()*d.seMean, 1))
	}
	var u float64
	if n >= 1000 {
		u = d.mu + rng.NormFloat64()*d.sdU
	} else {
		u = distuv.Beta{Alpha: d.a, Beta: d.b, Src: rng}.Rand()
	}
	i := int(math.Floor(float64(n)*u)) - d.win.lo
	i = max(0, min(len(d.win.sorted)-1, i)) // outside the ±8 SD window: clamp (negligible)
	return math.Log(math.Max(float64(d.win.sorted[i]), 1))
}

func sampleSD(x []int64) float64 {
	if len(x) < 2 {
		return 0
	}
	m := 0.0
	for _, v := range x {
		m += float64(v)
	}
	m /= float64(len(x))
	s := 0.0
	for _, v := range x {
		s += (float64(v) - m) * (float64(v) - m)
	}
	return math.Sqrt(s / float64(len(x)-1))
}

// RunsToResolve is the smallest runs per build whose 95% interval half-width,
// t(2R-2)*sqrt(2/R)*cv, leaves an effect of effectPct clear of the threshold;
// 0 when the effect is not larger than the threshold or needs more than 1000 runs.
func RunsToResolve(cvPct, effectPct, thresholdPct float64) int {
	room := math.Log1p(effectPct/100) - math.Log1p(thresholdPct/100)
	if room <= 0 {
		return 0
	}
	cv := math.Log1p(cvPct / 100)
	for r := 2; r <= 1000; r++ {
		if TQuantile975(float64(2*r-2))*math.Sqrt(2/float64(r))*cv <= room {
			return r
		}
	}
	return 0
}

// HalfWidthPct is the 95% half-width (in %) with r runs per build at a between-run CV.
func HalfWidthPct(cvPct float64, r int) float64 {
	return 100 * (math.Exp(TQuantile975(float64(2*r-2))*math.Sqrt(2/float64(r))*math.Log1p(cvPct/100)) - 1)
}
