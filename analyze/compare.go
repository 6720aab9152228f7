package analyze

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/warmstat/warmstat/runfmt"
)

// Method is how the confidence interval of a change is computed.
type Method string

const (
	// methodWelch: Welch t-interval on the per-run log figures (the run is the unit
	// of replication). Calibrated at 2-5 runs per build; the default.
	methodWelch Method = "welch-t"
	// methodTwoStage: percentile bootstrap that resamples runs, then the samples
	// inside each resampled run. Anti-conservative below ~10 runs per build.
	methodTwoStage Method = "two-stage-bootstrap"
	// methodCluster: percentile bootstrap over runs only. Unusable below ~10 runs.
	methodCluster Method = "cluster-bootstrap"
)

// ParseMethod validates an interval method's name.
func ParseMethod(s string) (Method, error) {
	switch Method(s) {
	case methodWelch, methodTwoStage, methodCluster, methodPaired:
		return Method(s), nil
	}
	return "", fmt.Errorf("unknown method %q (use %s, %s, %s or %s)", s, methodWelch, methodPaired, methodTwoStage, methodCluster)
}

// Paired is the paired method's name (a series' pairs; CompareOptions.Pairs);
// Unpaired the independent groups' (Welch), the default outside a series.
const (
	Paired   = methodPaired
	Unpaired = methodWelch
)

// Bootstrap reports whether the method resamples (and so depends on a seed).
func (m Method) Bootstrap() bool { return m == methodTwoStage || m == methodCluster }

// Verdict is what a row's interval says about the change.
type Verdict string

const (
	Faster       Verdict = "faster"       // the whole interval below -threshold
	Slower       Verdict = "slower"       // the whole interval above +threshold
	Unresolved   Verdict = "unresolved"   // the interval reaches into ±threshold
	Insufficient Verdict = "insufficient" // no interval: Row.Reason says why
)

// CompareOptions configure Compare. The zero value compares with welch-t at a 0 %
// threshold, java quantiles and no gates.
type CompareOptions struct {
	ThresholdPct float64 // a verdict needs the whole interval beyond ±ThresholdPct
	Method       Method
	Resamples    int // bootstrap resamples (0 = 10,000)
	Seed         uint64
	Quantiles    Quantiles
	// AllowMismatch are contract fields allowed to differ (never the build): the
	// comparison proceeds and says it is not comparable.
	AllowMismatch []string
	// Gate judges Gates ("COLLECTION/METRIC"; none given = the dominant collection's
	// mean and */ingest) and reports each in Comparison.Gates.
	Gate  bool
	Gates []string
	// Level is the intervals' confidence (0 = 0.95). A series that looks repeatedly
	// asks for more (SequentialPlan.Level).
	Level float64
	// Pairs are the series' pairs, for Method paired-t: each run of A with the run of B
	// beside it in time. Runs in no pair are left out of a paired comparison.
	Pairs []Pair
}

// OptionError is an option value analyze cannot work with. Option is the
// CompareOptions field (or the parameter) it came from.
type OptionError struct {
	Option string
	Value  string
	Msg    string
}

func (e *OptionError) Error() string { return fmt.Sprintf("%q: %s", e.Value, e.Msg) }

func (o *CompareOptions) check() error {
	if math.IsNaN(o.ThresholdPct) || o.ThresholdPct < 0 || o.ThresholdPct >= 100 {
		return &OptionError{"ThresholdPct", fmt.Sprint(o.ThresholdPct), "the noise threshold is a percentage from 0 up to (not including) 100"}
	}
	if o.Level == 0 {
		o.Level = 0.95
	}
	if math.IsNaN(o.Level) || o.Level < 0.5 || o.Level >= 1 {
		return &OptionError{"Level", fmt.Sprint(o.Level), "an interval's confidence is from 0.5 up to (not including) 1"}
	}
	if o.Resamples == 0 {
		o.Resamples = 10000
	}
	if o.Resamples < 100 || o.Resamples > 1_000_000 {
		return &OptionError{"Resamples", fmt.Sprint(o.Resamples), "bootstrap resamples must be from 100 to 1,000,000"}
	}
	if o.Method == "" {
		o.Method = methodWelch
	}
	if _, err := ParseMethod(string(o.Method)); err != nil {
		return &OptionError{"Method", string(o.Method), err.Error()}
	}
	if o.Quantiles == "" {
		o.Quantiles = QuantilesJava
	}
	if _, err := ParseQuantiles(string(o.Quantiles)); err != nil {
		return &OptionError{"Quantiles", string(o.Quantiles), err.Error()}
	}
	fields := ContractFields()
	for _, f := range o.AllowMismatch {
		if f == "build" || !slices.Contains(fields, f) {
			return &OptionError{"AllowMismatch", f, "not a contract field that may differ (one of " + strings.Join(fields[1:], ", ") +
				"; a build cannot be mixed within a group)"}
		}
	}
	return nil
}

// Row is one metric of one collection ("*" = the whole run).
type Row struct {
	Collection string   `json:"collection"`
	Metric     Metric   `json:"metric"`
	Unit       string   `json:"unit"` // "us" or "s"
	A          *float64 `json:"a"`    // geometric mean across the group's runs
	B          *float64 `json:"b"`
	RunsA      int      `json:"runs_a"` // runs the figure rests on (fewer than the group's: see Comparison.Excluded)
	RunsB      int      `json:"runs_b"`
	DeltaPct   *float64 `json:"delta_pct"`
	CILowPct   *float64 `json:"ci_low_pct"`
	CIHighPct  *float64 `json:"ci_high_pct"`
	Verdict    Verdict  `json:"verdict"`
	// CVPct is the pooled between-run coefficient of variation (log scale), the
	// noise the interval is built from; nil with fewer than 2 runs on both sides.
	CVPct *float64 `json:"between_run_cv_pct"`
	// ResolutionPct is how much the interval was widened on each side for the
	// clocks' rounding (nil for exact clocks).
	ResolutionPct *float64 `json:"resolution_pct,omitempty"`
	// Pairs and PairCVPct (paired-t only): the pairs the row rests on, and one run's
	// noise once its pair partner is known — the SD of the pairs' log differences
	// over √2, the noise the paired interval is built from.
	Pairs     *int     `json:"pairs,omitempty"`
	PairCVPct *float64 `json:"within_pair_cv_pct,omitempty"`
	// AdjustSlope (an adjusted metric, _adj): θ, the slope of the log figure on the log
	// machine speed (of the pairs' differences in a paired comparison, else within each
	// group), by which the figures were set to one speed
	AdjustSlope *float64 `json:"adjust_slope,omitempty"`
	// SlotPct (a duet series, whose pairs are analysed with the slot as a factor):
	// what slot 2 cost a run against slot 1 (the log ratio, in %), the build's change set aside;
	// PairCVPct is then the noise left once the slot is known.
	SlotPct *float64 `json:"slot_effect_pct,omitempty"`
	// Reason says why there is no interval (verdict insufficient).
	Reason string `json:"reason,omitempty"`
}

// Name is the row's name as gates and exclusions spell it: "Product/mean", "*/ingest".
func (r Row) Name() string { return r.Collection + "/" + string(r.Metric) }

// Comparison is group B compared against group A.
type Comparison struct {
	A, B        *Group
	Options     CompareOptions
	Dominant    string   // the collection shown first (Product, or the largest by wall)
	Collections []string // compared collections, dominant first, then by A's wall share
	Rows        []Row
	// Excluded are runs left out of some rows (those left out of a whole group are in
	// Group.Excluded), with the rows and the reason.
	Excluded []RunNote
	// Mismatches are conditions that differ but were allowed: not comparable.
	Mismatches []Mismatch
	Gates      []GateResult
	Advice     *Advice
	// Noise is what the pairs' noise in the dominant mean is made of (paired runs with
	// the cost columns; nil otherwise)
	Noise    *Decomposition
	Notes    []string
	prefetch bool      // the runs overlapped source reads with upserts (a condition equal on both sides)
	pairs    [][2]int  // paired-t: indices into A's and B's runs
	slots    []int     // a duet series' pairs: the slot of each pair's B run; nil otherwise
	ra, rb   []runData // the runs' summaries, for a fleet's rows
}

// Comparable is false when allowed mismatches make the comparison's figures those of
// different conditions.
func (c *Comparison) Comparable() bool { return len(c.Mismatches) == 0 }

// runData is one run as the comparison needs it.
type runData struct {
	sum     *RunSummary
	samples map[string]resampleSet // two-stage bootstrap only
}

// Compare checks the comparability contract and, unless it refuses (*Refusal),
// computes every row: every collection present in both groups and the whole run.
func Compare(a, b *Group, o CompareOptions) (*Comparison, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	ref := &Refusal{Duplicates: duplicates(a, b)}
	var allowed []Mismatch
	for _, m := range checkContract(a, b) {
		if m.Field != "build" && slices.Contains(o.AllowMismatch, m.Field) {
			allowed = append(allowed, m)
		} else {
			ref.Mismatches = append(ref.Mismatches, m)
		}
	}
	if len(ref.Mismatches) > 0 || len(ref.Duplicates) > 0 {
		return nil, ref
	}
	keep := o.Method == methodTwoStage
	both, err := collect(append(slices.Clone(a.Runs), b.Runs...), o.Quantiles, keep)
	if err != nil {
		return nil, err
	}
	ra, rb := both[:len(a.Runs)], both[len(a.Runs):]
	c := &Comparison{A: a, B: b, Options: o, Mismatches: allowed, ra: ra, rb: rb}
	if o.Method == methodPaired {
		if c.pairs, err = pairIndex(a, b, o.Pairs); err != nil {
			return nil, err
		}
		if len(c.pairs) == 0 {
			return nil, &OptionError{"Pairs", "", "paired-t compares the pairs of a series: none given"}
		}
		c.slots = duetSlots(b, c.pairs)
		if la, lb := len(a.Runs)-len(c.pairs), len(b.Runs)-len(c.pairs); la > 0 || lb > 0 {
			c.Notes = append(c.Notes, fmt.Sprintf("%d run(s) of %s and %d of %s are in no pair of the series: the paired rows leave them out", la, a.Name, lb, b.Name))
		}
	}
	c.prefetch = slices.ContainsFunc(append(slices.Clone(a.Runs), b.Runs...), func(r *runfmt.Run) bool { return r.Manifest.Conditions.Prefetch })
	c.Collections, c.Dominant, c.Notes = collectionOrder(a, b)
	c.computeRows(ra, rb)
	if n := machineNote(c.Rows, a.Name, b.Name); n != "" {
		c.Notes = append(c.Notes, n)
	}
	c.Advice = advise(c)
	c.Noise = decompose(c)
	if n := driftNote(a, b); n != "" {
		c.Notes = append(c.Notes, n)
	}
	if o.Gate {
		if err := c.judgeGates(o.Gates); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// computeRows fills c.Rows, spreading rows over the cores; each row has its own
// generator seeded from (seed, row index), so output does not depend on scheduling.
func (c *Comparison) computeRows(ra, rb []runData) {
	type job struct {
		coll string
		m    Metric
	}
	var jobs []job
	for _, coll := range append(slices.Clone(c.Collections), Overall) {
		for _, m := range collectionMetrics() {
			jobs = append(jobs, job{coll, m})
		}
	}
	for _, m := range wholeRunMetrics() {
		jobs = append(jobs, job{Overall, m})
	}
	c.Rows = make([]Row, len(jobs))
	out := make([][]RunNote, len(jobs))
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
				c.Rows[i], out[i] = c.row(jobs[i].coll, jobs[i].m, ra, rb, rng)
			}
		}()
	}
	wg.Wait()
	kept, notes := c.Rows[:0], out[:0]
	for i, r := range c.Rows {
		if shown(r, jobs[i].m) {
			kept, notes = append(kept, r), append(notes, out[i])
		}
	}
	c.Rows = kept
	c.Excluded = mergeNotes(notes)
}

// shown is whether a comparison has row r of metric m: the latency and clock metrics
// always; the cost, machine and adjusted ones only where a run has their figure (runs
// of a remote writer, or from before warmstat measured them, have none: their tables
// stay as they were).
func shown(r Row, m Metric) bool {
	if slices.Contains(latencyMetrics, m) || slices.Contains(runMetrics, m) {
		return true
	}
	return r.A != nil || r.B != nil
}

// mergeNotes folds per-row notes into one note per run and reason, listing its rows.
func mergeNotes(rows [][]RunNote) []RunNote {
	var out []RunNote
	for _, notes := range rows {
		for _, n := range notes {
			k := slices.IndexFunc(out, func(o RunNote) bool { return o.Group == n.Group && o.Run == n.Run && o.Reason == n.Reason })
			if k < 0 {
				out = append(out, RunNote{Group: n.Group, Run: n.Run, Reason: n.Reason})
				k = len(out) - 1
			}
			out[k].Rows = append(out[k].Rows, n.Rows...)
		}
	}
	return out
}

// collect summarizes runs, one per available core at a time.
func collect(runs []*runfmt.Run, q Quantiles, keep bool) ([]runData, error) {
	out := make([]runData, len(runs))
	errs := make([]error, len(runs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	for i, run := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i].sum, out[i].samples, errs[i] = summarize(run, q, keep)
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

// collectionOrder picks the collections present in both groups: the dominant one
// (Dominant) first, then by their share of A's load wall-clock.
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
			share[c.Name] += pctOf(c.WallNs, r.Manifest.Timings.LoadWallNs)
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
	counts := map[string]int64{}
	for _, r := range a.Runs {
		for _, c := range r.Manifest.Collections {
			if inB[c.Name] {
				counts[c.Name] = max(counts[c.Name], c.Entities)
			}
		}
	}
	dom := Dominant(counts)
	if dom != "" {
		i := slices.Index(names, dom)
		names = append([]string{dom}, append(names[:i:i], names[i+1:]...)...)
	}
	slices.Sort(notes)
	return names, dom, notes
}

// machineNote says when the machine was faster or slower during one group's runs than
// the other's: the adjusted figures set that aside, the plain ones carry it.
func machineNote(rows []Row, a, b string) string {
	i := slices.IndexFunc(rows, func(r Row) bool { return r.Collection == Overall && r.Metric == metricMachine })
	if i < 0 || rows[i].CILowPct == nil {
		return ""
	}
	r := rows[i]
	if *r.CILowPct <= 0 && *r.CIHighPct >= 0 {
		return ""
	}
	return fmt.Sprintf("the machine was %s %% %s during %s's runs than during %s's [%s %%, %s %%] (its canary): the _adj figures set that aside, the plain ones carry it",
		fmt.Sprintf("%.1f", math.Abs(*r.DeltaPct)), map[bool]string{true: "slower", false: "faster"}[*r.DeltaPct > 0], b, a,
		fmt.Sprintf("%+.1f", *r.CILowPct), fmt.Sprintf("%+.1f", *r.CIHighPct))
}

// driftNote warns when every run of one build started before every run of the
// other: a slow drift of the machine then reads as a change of the build.
func driftNote(a, b *Group) string {
	first := func(g *Group, last bool) (t int64, ok bool) {
		for i, r := range g.Runs {
			s := r.Manifest.StartedAt
			if s == nil {
				return 0, false
			}
			if i == 0 || (last && s.UnixNano() > t) || (!last && s.UnixNano() < t) {
				t = s.UnixNano()
			}
		}
		return t, len(g.Runs) > 1
	}
	aFirst, ok1 := first(a, false)
	aLast, ok2 := first(a, true)
	bFirst, ok3 := first(b, false)
	bLast, ok4 := first(b, true)
	if !ok1 || !ok2 || !ok3 || !ok4 || (aLast >= bFirst && bLast >= aFirst) {
		return ""
	}
	early, late := a.Name, b.Name
	if bLast < aFirst {
		early, late = b.Name, a.Name
	}
	return fmt.Sprintf("every run of %s started before every run of %s: a slow drift of the machine would read as a change of the build; interleave the runs (A B A B ...)", early, late)
}

func (c *Comparison) row(coll string, m Metric, ra, rb []runData, rng *rand.Rand) (Row, []RunNote) {
	unit, scale := m.unit()
	r := Row{Collection: coll, Metric: m, Unit: unit, Verdict: Insufficient}
	if base, adj := adjusted[m]; adj {
		if c.slots != nil {
			r.Reason = "a duet's two runs ran at once, on the same machine: there is no speed to set aside"
			return r, nil
		}
		sa, sb := gather(c.A.Name, summaries(ra), coll, base), gather(c.B.Name, summaries(rb), coll, base)
		return r, c.adjustedRow(&r, sa, sb, summaries(ra), summaries(rb), scale)
	}
	sa, sb := gather(c.A.Name, summaries(ra), coll, m), gather(c.B.Name, summaries(rb), coll, m)
	notes := append(sa.out, sb.out...)
	r.RunsA, r.RunsB = sa.n(), sb.n()
	if sa.n() > 0 {
		v := math.Exp(sa.mean()) / scale
		r.A = &v
	}
	if sb.n() > 0 {
		v := math.Exp(sb.mean()) / scale
		r.B = &v
	}
	if sa.n() == 0 || sb.n() == 0 {
		r.Reason = "no figure on one side"
		// when every run says the same why (prefetch: no ingest), that is the reason
		if len(notes) > 0 && !slices.ContainsFunc(notes, func(n RunNote) bool { return n.Reason != notes[0].Reason }) {
			r.Reason = notes[0].Reason
		}
		return r, notes
	}
	d := sb.mean() - sa.mean()
	r.DeltaPct = pct(d)
	if df := float64(sa.n() - 1 + sb.n() - 1); df > 0 {
		cv := math.Sqrt((variance(sa.y)*float64(sa.n()-1) + variance(sb.y)*float64(sb.n()-1)) / df)
		r.CVPct = pct(cv)
	}
	if c.pairs != nil {
		c.pairedRow(&r, sa, sb, scale)
		return r, notes
	}
	switch {
	case sa.n() < 2 || sb.n() < 2:
		r.Reason = fmt.Sprintf("%d run(s) in A, %d in B: an interval needs at least 2 per side", sa.n(), sb.n())
		return r, notes
	case sa.same() && sb.same():
		r.Reason = noSpread
		return r, notes
	}
	var lo, hi float64
	if c.Options.Method.Bootstrap() {
		lo, hi = c.bootstrap(coll, m, ra, rb, sa.at, sb.at, rng)
	} else {
		lo, hi = welch(sa, sb, cmp.Or(c.Options.Level, 0.95))
	}
	if w := sa.bias + sb.bias; w > 0 {
		lo, hi = lo-w, hi+w
		r.ResolutionPct = pct(w)
	}
	r.CILowPct, r.CIHighPct = pct(lo), pct(hi)
	r.Verdict = verdict(*r.CILowPct, *r.CIHighPct, c.Options.ThresholdPct)
	return r, notes
}

func summaries(rs []runData) []*RunSummary {
	out := make([]*RunSummary, len(rs))
	for i, r := range rs {
		out[i] = r.sum
	}
	return out
}

func verdict(lo, hi, threshold float64) Verdict {
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

// welch is the Welch t-interval (confidence level) of mean(b) - mean(a) on the log
// scale, each side's variance including its clocks' rounding.
func welch(a, b side, level float64) (float64, float64) {
	d := b.mean() - a.mean()
	qa, qb := a.se2(), b.se2()
	se := math.Sqrt(qa + qb)
	na, nb := float64(a.n()), float64(b.n())
	df := (qa + qb) * (qa + qb) / (qa*qa/(na-1) + qb*qb/(nb-1))
	df = math.Max(df, math.Min(na, nb)-1)
	t := tq(df, level)
	return d - t*se, d + t*se
}

// Advice is what the observed noise means for the run counts: the 95 % half-width at
// 2, 3 and 5 runs per build and the runs per build that would resolve a 5 % and a
// 10 % change, from the between-run variation of one row (the dominant collection's
// mean, else the load wall-clock).
type Advice struct {
	Collection  string
	Metric      Metric
	CVPct       float64
	HalfWidths  [][2]float64 // {runs per build, half-width %}
	RunsToClear [][2]float64 // {change %, runs per build}; a change that needs more than 1,000 runs is left out
	// Paired: CVPct is the within-pair noise of a series' pairs, and the run counts
	// are pairs (one run per build each) under the paired interval.
	Paired bool
	// Duet: the pairs are a duet series' (the slot a factor: n-2 degrees of freedom).
	Duet bool
}

func advise(c *Comparison) *Advice {
	var ref *Row
	for i := range c.Rows {
		r := &c.Rows[i]
		known := r.CVPct != nil && (c.pairs == nil || r.PairCVPct != nil)
		if known && ((r.Collection == c.Dominant && r.Metric == metricMean) || (ref == nil && r.Metric == metricLoadWall)) {
			ref = r
		}
	}
	if ref == nil {
		return nil
	}
	if ref.PairCVPct != nil {
		a := &Advice{Collection: ref.Collection, Metric: ref.Metric, CVPct: *ref.PairCVPct, Paired: true, Duet: c.Duet()}
		df, counts := pairedDF, []int{2, 3, 5}
		if a.Duet { // the slot as a factor: n-2 degrees of freedom, an interval from 3 duets
			df, counts = duetDF, []int{4, 6, 8}
		}
		for _, n := range counts {
			a.HalfWidths = append(a.HalfWidths, [2]float64{float64(n), 100 * (math.Exp(halfWidth(math.Log1p(a.CVPct/100), n, df)) - 1)})
		}
		for _, e := range []float64{5, 10} {
			if n := toResolve(a.CVPct, e, c.Options.ThresholdPct, df); n > 0 {
				a.RunsToClear = append(a.RunsToClear, [2]float64{e, float64(n)})
			}
		}
		return a
	}
	a := &Advice{Collection: ref.Collection, Metric: ref.Metric, CVPct: *ref.CVPct}
	for _, n := range []int{2, 3, 5} {
		a.HalfWidths = append(a.HalfWidths, [2]float64{float64(n), halfWidthPct(a.CVPct, n)})
	}
	for _, e := range []float64{5, 10} {
		if n := runsToResolve(a.CVPct, e, c.Options.ThresholdPct); n > 0 {
			a.RunsToClear = append(a.RunsToClear, [2]float64{e, float64(n)})
		}
	}
	return a
}

// runsToResolve is the smallest runs per build whose 95 % interval half-width,
// t(2R-2)*sqrt(2/R)*cv, leaves an effect of effectPct clear of the threshold;
// 0 when the effect is not larger than the threshold or needs more than 1000 runs.
func runsToResolve(cvPct, effectPct, thresholdPct float64) int {
	return toResolve(cvPct, effectPct, thresholdPct, unpairedDF)
}

// unpairedDF is welch-t's degrees of freedom with n runs per build of equal noise.
func unpairedDF(n int) float64 { return float64(2*n - 2) }

// toResolve is the smallest n (runs per build, or pairs) whose 95 % half-width
// t(df(n))*sqrt(2/n)*noise leaves an effect of effectPct clear of the threshold; 0
// when the effect is not larger than the threshold or needs more than 1000.
func toResolve(noisePct, effectPct, thresholdPct float64, df func(int) float64) int {
	room := math.Log1p(effectPct/100) - math.Log1p(thresholdPct/100)
	if room <= 0 {
		return 0
	}
	s := math.Log1p(noisePct / 100)
	for n := 2; n <= 1000; n++ {
		if df(n) < 1 { // no interval yet (a duet series' at 2 duets)
			continue
		}
		if halfWidth(s, n, df) <= room {
			return n
		}
	}
	return 0
}

// halfWidth is the 95 % half-width (log scale) with n runs per build or pairs at a
// noise s (log scale).
func halfWidth(s float64, n int, df func(int) float64) float64 {
	return t975(df(n)) * math.Sqrt(2/float64(n)) * s
}

// halfWidthPct is the 95 % half-width (in %) with r runs per build at a between-run CV.
func halfWidthPct(cvPct float64, r int) float64 {
	return 100 * (math.Exp(halfWidth(math.Log1p(cvPct/100), r, unpairedDF)) - 1)
}

// duetSlots is the slot of each pair's B run when the runs are a duet's (the contract
// keeps duet and lone runs apart, so the first pair decides); nil otherwise.
func duetSlots(b *Group, pairs [][2]int) []int {
	if len(pairs) == 0 || b.Runs[pairs[0][1]].Manifest.Duet == nil {
		return nil
	}
	slots := make([]int, len(pairs))
	for i, p := range pairs {
		if d := b.Runs[p[1]].Manifest.Duet; d != nil {
			slots[i] = d.Slot
		}
	}
	return slots
}

// Duet reports whether the comparison's pairs are a duet series' (analysed with the
// slot as a factor).
func (c *Comparison) Duet() bool { return c.slots != nil }
