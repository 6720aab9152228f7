package analyze

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Equivalent is a sequential verdict: the whole interval lies inside ±threshold, so
// the builds differ by less than the noise threshold.
const Equivalent Verdict = "equivalent"

// SequentialPlan is how an A/B series is analysed while it runs. It looks after every
// pair of runs (one per side) from MinRuns to MaxRuns runs per side, and each look's
// interval is wider than a single comparison's, so that looking again and again does
// not manufacture a verdict: the false-verdict budget AlphaPct (default 5 %) is spent
// across the looks: with three or more looks 35 % of it at the first, 25 % at the
// second, the rest evenly over the others; with two looks 60 % and 40 %; with one look
// all of it. By the union bound, between identical builds the chance that any look
// calls faster, slower (or, for builds that differ by more than the threshold,
// equivalent) is at most AlphaPct per gate, whatever the noise; the threshold makes it
// far smaller in practice (the calibration test measures it). Spending early buys the
// early stop a large change deserves.
type SequentialPlan struct {
	MinRuns, MaxRuns int
	AlphaPct         float64
	// checked only (the series applies them to each look's comparison): a gate must be
	// COLLECTION/METRIC with a known metric, the threshold a percentage below 100
	ThresholdPct float64
	Gates        []string
	// Watch are metrics judged at every look as the gates are, and shown, but not
	// waited for: the series stops when the gates have their answers, whatever the
	// watched metrics' (a question's supporting figures, such as its allocation).
	Watch []string
	// Paired plans a series analysed by its pairs (paired-t). The paired interval has
	// n-1 degrees of freedom: at 2 and 3 pairs (1 and 2) its intervals are too wide
	// to resolve any change a series is run for, so a paired plan makes its first look
	// at 3 pairs (FirstLook) and spends where the interval can use it: 10 % at 3
	// pairs, 45 % at 4, the rest evenly over the later looks.
	Paired bool
	// Duet plans a duet series (paired, with the slot as a factor: n-2 degrees of
	// freedom): its first look is at 4 duets, two in each slot placement, where the
	// paired plan's is at 3, and it spends as the paired plan does from there.
	Duet bool
}

// FirstLook is the number of runs per side (pairs) at the first look.
func (p SequentialPlan) FirstLook() int {
	if p.Duet {
		return min(max(p.MinRuns, 4), p.MaxRuns)
	}
	if p.Paired {
		return min(max(p.MinRuns, 3), p.MaxRuns)
	}
	return p.MinRuns
}

// Check refuses a plan that cannot be run.
func (p *SequentialPlan) Check() error {
	if p.AlphaPct == 0 {
		p.AlphaPct = 5
	}
	switch {
	case p.MinRuns < 2:
		return &OptionError{"MinRuns", fmt.Sprint(p.MinRuns), "an interval needs at least 2 runs per side"}
	case p.MaxRuns < p.MinRuns:
		return &OptionError{"MaxRuns", fmt.Sprint(p.MaxRuns), fmt.Sprintf("must be at least the minimum runs (%d)", p.MinRuns)}
	case p.MaxRuns > 100:
		return &OptionError{"MaxRuns", fmt.Sprint(p.MaxRuns), "at most 100 runs per side"}
	case math.IsNaN(p.AlphaPct) || p.AlphaPct <= 0 || p.AlphaPct >= 50:
		return &OptionError{"AlphaPct", fmt.Sprint(p.AlphaPct), "the false-verdict budget is a percentage above 0 and below 50"}
	case math.IsNaN(p.ThresholdPct) || p.ThresholdPct < 0 || p.ThresholdPct >= 100:
		return &OptionError{"ThresholdPct", fmt.Sprint(p.ThresholdPct), "the noise threshold is a percentage from 0 up to (not including) 100"}
	}
	for _, g := range p.Gates {
		if err := checkGateForm(g); err != nil {
			return err
		}
	}
	for i, w := range p.Watch {
		if err := checkGateForm(w); err != nil {
			err.(*OptionError).Option = "Watch"
			return err
		}
		if slices.Contains(p.Gates, w) {
			return &OptionError{"Watch", w, "a metric is a gate (waited for) or watched (shown), not both"}
		}
		if slices.Contains(p.Watch[:i], w) {
			return &OptionError{"Watch", w, "watched twice"}
		}
	}
	return nil
}

// checkGateForm refuses a gate that no comparison could have, before any run: the
// collection is known only once runs exist, the metric now.
func checkGateForm(g string) error {
	coll, metric, ok := strings.Cut(g, "/")
	known := slices.Contains(collectionMetrics(), Metric(metric)) || coll == "*" && slices.Contains(wholeRunMetrics(), Metric(metric))
	if ok && coll != "" && known {
		return nil
	}
	metrics, clocks := allMetricNames()
	return &OptionError{"Gates", g, fmt.Sprintf("a gate is COLLECTION/METRIC, METRIC one of %s, and for * (the whole run) also %s",
		strings.Join(metrics, ", "), strings.Join(clocks, ", "))}
}

// Level is the confidence of the interval at the look after n runs per side.
func (p SequentialPlan) Level(n int) float64 {
	first := p.FirstLook()
	n = min(max(n, first), p.MaxRuns)
	looks := p.MaxRuns - first + 1
	// the shares of the budget at the first, the second, and each later look
	s1, s2 := 0.35, 0.25
	if p.Paired && first == 3 || p.Duet && first == 4 {
		s1, s2 = 0.10, 0.45
	}
	var share float64
	switch {
	case looks == 1:
		share = 1
	case looks == 2 && !p.Paired:
		share = []float64{0.6, 0.4}[n-first]
	case looks == 2:
		share = []float64{s1 / (s1 + s2), s2 / (s1 + s2)}[n-first]
	case n == first:
		share = s1
	case n == first+1:
		share = s2
	default:
		share = (1 - s1 - s2) / float64(looks-2)
	}
	return 1 - p.AlphaPct/100*share
}

// GateLook is one gate's state at a look.
type GateLook struct {
	Gate         string   `json:"gate"`
	RunsA, RunsB int      `json:"-"`
	DeltaPct     *float64 `json:"delta_pct"`
	LowPct       *float64 `json:"ci_low_pct"`
	HighPct      *float64 `json:"ci_high_pct"`
	Verdict      Verdict  `json:"verdict"`
	Reason       string   `json:"reason,omitempty"`
	// MoreRuns projects how many further runs per side would resolve the gate at the
	// noise seen so far (nil when resolved, or when even the plan's maximum would not).
	MoreRuns *int `json:"more_runs,omitempty"`
	// NoisePct is the noise the interval was built from: one run's within-pair noise
	// (paired) or the between-run variation (unpaired); BetweenRunPct is the latter in
	// both cases, for comparison.
	NoisePct      *float64 `json:"noise_pct,omitempty"`
	BetweenRunPct *float64 `json:"between_run_cv_pct,omitempty"`
	// Adjusted: the gate's figure has the machine's speed set aside (an _adj metric),
	// so NoisePct is what is left of one run's noise once the speed is known
	Adjusted bool `json:"adjusted,omitempty"`
	// ByPairs: adjusted by the series' pairs (from pairedFitFrom pairs), so NoisePct is
	// within a pair
	ByPairs bool `json:"adjusted_by_pairs,omitempty"`
	// SlotPct (a duet series): the slot's effect the interval set aside (Row.SlotPct).
	SlotPct *float64 `json:"slot_effect_pct,omitempty"`
	// Watched: a metric the series shows but does not wait for (SequentialPlan.Watch)
	Watched bool `json:"watched,omitempty"`
	// PlanRuns, when not even the plan's maximum would resolve the gate, is the
	// maximum (runs per side, or pairs) a new series would need at this noise and
	// change (nil: more than 100, or unknown).
	PlanRuns *int `json:"plan_runs,omitempty"`
}

// Resolved reports whether the gate has its answer.
func (g GateLook) Resolved() bool {
	return g.Verdict == Faster || g.Verdict == Slower || g.Verdict == Equivalent
}

// Look is one interim analysis of a series.
type Look struct {
	RunsA, RunsB int        `json:"-"`
	Method       Method     `json:"method"`
	Pairs        int        `json:"pairs,omitempty"` // paired: the pairs looked at
	Level        float64    `json:"level"`
	Gates        []GateLook `json:"gates"`
	// Done: every gate is resolved (the watched metrics need not be), or the plan's
	// maximum is reached.
	Done bool `json:"done"`
	// Comparison is the comparison at the look's level (its rows, notes, refusals).
	Comparison *Comparison `json:"-"`
}

// LookAt analyses the gated metrics of a series' groups with the plan's interval for
// the runs they hold. o's Method must be welch-t (the interval the plan is calibrated
// for); o.Level is set from the plan. A refusal (conditions differ) is returned as
// compare returns it.
func LookAt(a, b *Group, plan SequentialPlan, o CompareOptions) (*Look, error) {
	if err := plan.Check(); err != nil {
		return nil, err
	}
	if o.Method != "" && o.Method != methodWelch && o.Method != methodPaired {
		return nil, &OptionError{"Method", string(o.Method), "a series is analysed with paired-t or welch-t, the intervals its plan is calibrated for"}
	}
	n := min(len(a.Runs), len(b.Runs))
	if o.Method == methodPaired {
		n = len(o.Pairs)
	}
	o.Level, o.Gate = plan.Level(n), true
	early := n < plan.FirstLook() // a paired plan's first look is at 3 pairs (a duet's at 4): shown, not judged
	c, err := Compare(a, b, o)
	if err != nil {
		return nil, err
	}
	l := &Look{RunsA: len(a.Runs), RunsB: len(b.Runs), Method: c.Options.Method, Pairs: len(c.pairs), Level: o.Level, Comparison: c}
	done := true
	for _, g := range c.Gates {
		k := slices.IndexFunc(c.Rows, func(r Row) bool { return r.Name() == g.Gate })
		r := c.Rows[k]
		gl := GateLook{Gate: g.Gate, RunsA: r.RunsA, RunsB: r.RunsB, DeltaPct: r.DeltaPct, LowPct: r.CILowPct, HighPct: r.CIHighPct,
			Verdict: r.Verdict, Reason: r.Reason, NoisePct: r.CVPct, BetweenRunPct: r.CVPct, SlotPct: r.SlotPct}
		if r.Pairs != nil {
			gl.NoisePct = r.PairCVPct
		}
		gl.Adjusted = r.AdjustSlope != nil
		gl.ByPairs = gl.Adjusted && r.Pairs != nil
		gl.Watched = slices.Contains(plan.Watch, g.Gate)
		if r.Verdict == Unresolved && *r.CILowPct > -o.ThresholdPct && *r.CIHighPct < o.ThresholdPct {
			gl.Verdict = Equivalent
		}
		if early && gl.Resolved() {
			gl.Verdict, gl.Reason = Unresolved, fmt.Sprintf("the plan's first look is at %d pairs", plan.FirstLook())
		}
		if !gl.Resolved() {
			done = done && gl.Watched
			gl.MoreRuns = projectRuns(r, plan, n, o.ThresholdPct)
			if gl.MoreRuns == nil && gl.Reason == "" {
				gl.PlanRuns = planRuns(r, plan, o.ThresholdPct)
			}
		}
		l.Gates = append(l.Gates, gl)
	}
	l.Done = done || n >= plan.MaxRuns
	return l, nil
}

// planRuns is, for a gate this plan cannot resolve, the smallest --max-runs of a new
// plan (same budget, same first look) whose last look would resolve it at the noise
// and change seen so far; nil beyond maxPlanRuns or when the noise is unknown. A
// series cannot be extended instead: its budget was spread over its own maximum.
func planRuns(r Row, plan SequentialPlan, thresholdPct float64) *int {
	for m := plan.MaxRuns + 1; m <= maxPlanRuns; m++ {
		q := plan
		q.MaxRuns = m
		if more := projectRuns(r, q, m-1, thresholdPct); more != nil {
			return &m
		}
	}
	return nil
}

// maxPlanRuns bounds planRuns: beyond it, the answer is to lower the noise.
const maxPlanRuns = 100

// projectRuns is the smallest number of further runs per side after which the plan's
// interval, at the between-run noise and the change seen so far, would clear the
// threshold one way or the other; nil when none up to the plan's maximum would.
func projectRuns(r Row, plan SequentialPlan, n int, thresholdPct float64) *int {
	noise, df := r.CVPct, func(m int) float64 { return float64(2*m - 2) }
	if r.Pairs != nil { // paired: the within-pair noise, t(pairs - 1)
		noise, df = r.PairCVPct, pairedDF
	}
	if r.SlotPct != nil { // a duet's: the noise once the slot is known, t(pairs - 2)
		df = duetDF
	}
	switch {
	case r.AdjustSlope != nil && r.Pairs != nil: // adjusted by pairs: a pair's noise once its speeds are known, t(pairs - 2)
		noise, df = r.PairCVPct, func(m int) float64 { return float64(m - 2) }
	case r.AdjustSlope != nil: // adjusted, unpaired: the runs' noise once their speed is known, t(2m - 3)
		noise, df = r.CVPct, func(m int) float64 { return float64(2*m - 3) }
	}
	if noise == nil || r.DeltaPct == nil {
		return nil
	}
	s := math.Log1p(*noise / 100)
	d := math.Log1p(*r.DeltaPct / 100)
	tau := math.Log1p(thresholdPct / 100)
	room := math.Abs(math.Abs(d) - tau) // to clear the threshold, or to fit inside it
	for m := n + 1; m <= plan.MaxRuns; m++ {
		if tq(df(m), plan.Level(m))*s*math.Sqrt(2/float64(m)) < room {
			more := m - n
			return &more
		}
	}
	return nil
}
