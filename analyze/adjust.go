package analyze

import (
	"cmp"
	"fmt"
	"math"

	"github.com/warmstat/warmstat/runfmt"
)

// # The machine's speed set aside (the _adj metrics)
//
// On a virtual machine the host's other tenants make the same vCPU faster or slower by
// up to ±10 % within a minute, and a load's every thread slows with it. Measured on
// this project's 2-core machines (docs/measuring.md): in A/A series of the default at
// scale 0.02, the machine's speed during each run's load — a fixed piece of work timed
// every 100 ms by warmstat (base/canary) — explained 85-95 % of the run-to-run
// variance of the Product mean, the writer's CPU, its JIT and its GC alike. Pairing
// runs that are a minute apart cancels only the part of that drift slower than a pair.
//
// A run's speed x = log of the canary's figure (the geometric mean of its three
// kinds' medians) is a covariate a build does not cause: the canary's clock is its own
// thread's CPU time, which waiting for a CPU does not lengthen. The adjusted figure is
// the regression adjustment of controlled experiments (CUPED, Deng et al., WSDM 2013):
// with y = log(figure),
//
//	y_adj = y − θ·(x − x̄)
//
// where x̄ is the mean speed over both groups' runs. In a paired series of pairedFitFrom
// pairs or more θ is the slope of the pairs' differences on their speeds' differences
// (fitPairedANCOVA), so the pairs still cancel the slow drift and θ costs one degree of
// freedom of n − 1. Before that, and without pairs, θ is the slope of y on x within
// each group, pooled over both (fitANCOVA; each group's own mean set aside, so a change
// of the build does not enter θ). θ is fitted per comparison and per metric, not assumed: measured slopes
// were 2-3 for the Product mean (the JVM's work slows more than the canary's simple
// loops when the host is busy).
//
// What it cannot do: a build that slows the machine for everything else — the canary
// included — would have part of its change set aside. The comparison's */machine row
// shows whether the machine differed between the groups.

// machineOf is a run's machine speed: the geometric mean of its canary's medians, in
// ns, or why it has none.
func machineOf(m *runfmt.Manifest) (float64, string) {
	f := m.Factors
	if f == nil || f.Canary == nil || f.Canary.Samples == 0 {
		return 0, "the run recorded no machine speed (no canary: a run from before warmstat measured it, or an imported one)"
	}
	c := f.Canary
	if c.ALUNs <= 0 || c.L3Ns <= 0 || c.DRAMNs <= 0 {
		return 0, "the run's canary figures are not positive"
	}
	return math.Exp((math.Log(c.ALUNs) + math.Log(c.L3Ns) + math.Log(c.DRAMNs)) / 3), ""
}

// ancova is the adjusted comparison of one metric: with y = log(figure) and x = log
// machine speed of every run of both groups, the least-squares fit of
//
//	y = μ + δ·[run of B] + θ·(x − x̄) + ε
//
// θ̂ is the slope within each group, pooled; δ̂ = (ȳ_B − ȳ_A) − θ̂·(x̄_B − x̄_A) is B's
// change at one machine speed; the residual variance has n_A + n_B − 3 degrees of
// freedom, and Var(δ̂) = s²·(1/n_A + 1/n_B + (x̄_B − x̄_A)²/Sxx), Sxx the pooled
// within-group spread of x. The runs are compared as independent: the comparison of
// groups without pairs (a paired series gets fitPairedANCOVA).
type ancova struct {
	theta, delta float64
	se2          float64 // Var(δ̂)
	s2           float64 // the residual variance of one run's log figure
	df           float64
	ya, yb       float64 // each group's mean log figure at the common speed x̄
	pairs        int     // fitPairedANCOVA: the pairs fitted,
	between2     float64 // and the variance of one run's log figure at one speed, between runs
	why          string  // non-empty: no fit
}

func fitANCOVA(ya, xa, yb, xb []float64) ancova {
	na, nb := float64(len(ya)), float64(len(yb))
	if len(ya) < 2 || len(yb) < 2 || len(ya)+len(yb) < 4 {
		return ancova{why: fmt.Sprintf("%d run(s) in A, %d in B with a machine speed: the adjustment needs at least 2 per side and 4 in all", len(ya), len(yb))}
	}
	mxa, mya, mxb, myb := mean(xa), mean(ya), mean(xb), mean(yb)
	var sxy, sxx float64
	for _, g := range [][4]any{{ya, xa, mya, mxa}, {yb, xb, myb, mxb}} {
		y, x, my, mx := g[0].([]float64), g[1].([]float64), g[2].(float64), g[3].(float64)
		for i := range x {
			sxy += (x[i] - mx) * (y[i] - my)
			sxx += (x[i] - mx) * (x[i] - mx)
		}
	}
	if sxx == 0 {
		return ancova{why: "the machine's speed was the same in every run of each side: nothing to adjust by"}
	}
	f := ancova{theta: sxy / sxx, df: na + nb - 3}
	var rss float64
	for _, g := range [][4]any{{ya, xa, mya, mxa}, {yb, xb, myb, mxb}} {
		y, x, my, mx := g[0].([]float64), g[1].([]float64), g[2].(float64), g[3].(float64)
		for i := range x {
			e := y[i] - my - f.theta*(x[i]-mx)
			rss += e * e
		}
	}
	xbar := (na*mxa + nb*mxb) / (na + nb)
	f.ya, f.yb = mya-f.theta*(mxa-xbar), myb-f.theta*(mxb-xbar)
	f.delta = f.yb - f.ya
	f.s2 = rss / f.df
	f.se2 = f.s2 * (1/na + 1/nb + (mxb-mxa)*(mxb-mxa)/sxx)
	return f
}

// interval is δ̂'s t interval at a confidence level.
func (f ancova) interval(level float64) (float64, float64) {
	h := tq(f.df, level) * math.Sqrt(f.se2)
	return f.delta - h, f.delta + h
}

// pairedFitFrom is the number of pairs from which a paired comparison's _adj rows are
// fitted by the pairs (fitPairedANCOVA); before it, as independent groups (fitANCOVA).
// Both are valid at every look; the choice rests on the count alone, never on the data,
// so the looks' budget holds. The paired fit has n − 2 degrees of freedom where the
// other has 2n − 3: at the plan's later looks its t is 2.0 times the other's at 4 and
// 5 pairs, 1.56 at 6, 1.2 at 10. Its noise was 1.48–1.88 times smaller in the four real
// series of 2026-12-07 (docs/measuring.md, "pairs and the covariate"): so from 6 pairs
// on it gives the narrower interval, and before it the group fit answers a large change
// as early as it always did (the demo's, at 3 pairs).
const pairedFitFrom = 6

// fitPairedANCOVA is the adjusted comparison of a paired series of pairedFitFrom pairs
// or more: each pair's log difference d = y_B − y_A regressed on
// its difference of log machine speed c = x_B − x_A,
//
//	d = δ + θ·c + ε
//
// θ̂ = Scd/Scc, δ̂ = d̄ − θ̂·c̄ is B's change at one machine speed, the residual variance
// s² of one pair's difference has n − 2 degrees of freedom, and Var(δ̂) = s²·(1/n + c̄²/Scc).
// The pairs cancel the machine's slow drift, the covariate its fast swings; the
// independent fit (fitANCOVA) keeps only the second (pairedFitFrom has the measured
// difference). s2 is given per run (half a difference's), as fitANCOVA's.
func fitPairedANCOVA(sa side, xa []float64, sb side, xb []float64, pairs [][2]int) ancova {
	// the figures and the speeds of the same pairs (speeds left sa.at and xa aligned)
	fig, speed := pairUp(sa, sb, pairs), pairUp(side{y: xa, at: sa.at}, side{y: xb, at: sb.at}, pairs)
	d, c, ya, yb, xs, xsb := fig.d, speed.d, fig.ya, fig.yb, speed.ya, speed.yb
	n := float64(len(d))
	f := ancova{pairs: len(d)}
	if len(d) < 3 {
		f.why = fmt.Sprintf("%d pair(s) with a machine speed on both sides: the paired adjustment needs at least 3", len(d))
		return f
	}
	md, mc := mean(d), mean(c)
	var scd, scc float64
	for i := range d {
		scd += (c[i] - mc) * (d[i] - md)
		scc += (c[i] - mc) * (c[i] - mc)
	}
	if scc == 0 {
		f.why = "the machine's speed differed the same way in every pair: nothing to adjust by"
		return f
	}
	f.theta, f.df = scd/scc, n-2
	var rss float64
	for i := range d {
		e := d[i] - md - f.theta*(c[i]-mc)
		rss += e * e
	}
	xbar := (mean(xs) + mean(xsb)) / 2
	f.ya, f.yb = mean(ya)-f.theta*(mean(xs)-xbar), mean(yb)-f.theta*(mean(xsb)-xbar)
	f.delta = f.yb - f.ya // = d̄ − θ̂·c̄
	s2d := rss / f.df
	f.s2 = s2d / 2
	f.se2 = s2d * (1/n + mc*mc/scc)
	// the runs' own spread at one speed, each side's mean aside: what the pairs took out
	var ss float64
	for _, g := range [][2][]float64{{ya, xs}, {yb, xsb}} {
		my, mx := mean(g[0]), mean(g[1])
		for i := range g[0] {
			e := g[0][i] - my - f.theta*(g[1][i]-mx)
			ss += e * e
		}
	}
	f.between2 = ss / (2*n - 2)
	return f
}

// adjustedRow fills r, an adjusted metric's row, from the runs' figures of its base
// metric (sa, sb) and their machine speeds: by the series' pairs from pairedFitFrom
// pairs on (fitPairedANCOVA), else as independent groups (fitANCOVA). Runs without a
// speed leave with the reason.
func (c *Comparison) adjustedRow(r *Row, sa, sb side, ra, rb []*RunSummary, scale float64) []RunNote {
	xa, xb := speeds(c.A.Name, ra, &sa, r.Collection, r.Metric), speeds(c.B.Name, rb, &sb, r.Collection, r.Metric)
	notes := append(sa.out, sb.out...)
	r.RunsA, r.RunsB = sa.n(), sb.n()
	var f ancova
	if len(c.pairs) >= pairedFitFrom {
		f = fitPairedANCOVA(sa, xa, sb, xb, c.pairs)
		r.Pairs, r.RunsA, r.RunsB = &f.pairs, f.pairs, f.pairs
	} else {
		f = fitANCOVA(sa.y, xa, sb.y, xb)
	}
	if f.why != "" {
		r.Reason = f.why
		return notes
	}
	va, vb := math.Exp(f.ya)/scale, math.Exp(f.yb)/scale
	r.A, r.B, r.AdjustSlope = &va, &vb, &f.theta
	r.DeltaPct, r.CVPct = pct(f.delta), pct(math.Sqrt(f.s2))
	if r.Pairs != nil {
		r.PairCVPct, r.CVPct = r.CVPct, pct(math.Sqrt(f.between2))
	}
	if f.s2 == 0 {
		r.Reason = noSpread
		return notes
	}
	lo, hi := f.interval(cmp.Or(c.Options.Level, 0.95))
	if w := sa.bias + sb.bias; w > 0 {
		lo, hi = lo-w, hi+w
		r.ResolutionPct = pct(w)
	}
	r.CILowPct, r.CIHighPct = pct(lo), pct(hi)
	r.Verdict = verdict(*r.CILowPct, *r.CIHighPct, c.Options.ThresholdPct)
	return notes
}

// speeds is the log machine speed of each run s has a figure of; runs without one
// leave s, with the reason.
func speeds(group string, runs []*RunSummary, s *side, coll string, m Metric) []float64 {
	var x []float64
	keep := s.y[:0]
	at := s.at[:0]
	for k, i := range s.at {
		v, why := machineOf(runs[i].Run.Manifest)
		if why != "" {
			s.out = append(s.out, RunNote{Group: group, Run: runs[i].Run.Dir, Rows: []string{coll + "/" + string(m)}, Reason: why})
			continue
		}
		x = append(x, math.Log(v))
		keep, at = append(keep, s.y[k]), append(at, i)
	}
	s.y, s.at = keep, at
	return x
}

// Decomposition is what a paired comparison's noise in the dominant collection's mean
// upsert is made of: each pair's difference B − A of the mean splits exactly into the
// differences of its parts (the applying thread's CPU, its wait for a CPU, and the
// rest: stopped or blocked), so each part's share of the variance of the differences
// is cov(d_part, d_mean) / var(d_mean), and the shares add up to 100 %. MachinePct is
// how much of that variance the machine's speed explains: the R² of the differences on
// the canary's (log scale). Between builds that differ, the change itself is the same in
// every pair and leaves the variance: the decomposition reads the same in an A/B series.
type Decomposition struct {
	Collection string  `json:"collection"`
	Pairs      int     `json:"pairs"`
	SDUs       float64 `json:"sd_us"` // the SD of the pairs' differences of the mean, µs
	CPUPct     float64 `json:"cpu_pct"`
	WaitPct    float64 `json:"wait_pct"`
	BlockedPct float64 `json:"blocked_pct"`
	// MachinePct is nil when the runs recorded no machine speed
	MachinePct *float64 `json:"machine_pct,omitempty"`
}

// decompose is the decomposition of c's dominant mean over its pairs; nil without
// pairs, without the cost columns, or with fewer than 3 pairs.
func decompose(c *Comparison) *Decomposition {
	if c.pairs == nil || c.Dominant == "" || len(c.pairs) < 3 {
		return nil
	}
	type parts struct{ mean, cpu, wait float64 }
	of := func(s *RunSummary) (parts, bool) {
		for _, cs := range s.Collections {
			if cs.Name == c.Dominant && cs.Cost != nil && cs.Cost.CPUMeanNs >= 0 && cs.Cost.WaitMeanNs >= 0 && cs.Count > 0 {
				return parts{cs.MeanNs, cs.Cost.CPUMeanNs, cs.Cost.WaitMeanNs}, true
			}
		}
		return parts{}, false
	}
	var dm, dc, dw, db, dx []float64
	speedKnown := true
	for _, p := range c.pairs {
		a, okA := of(c.ra[p[0]].sum)
		b, okB := of(c.rb[p[1]].sum)
		if !okA || !okB {
			return nil
		}
		dm, dc, dw = append(dm, b.mean-a.mean), append(dc, b.cpu-a.cpu), append(dw, b.wait-a.wait)
		db = append(db, (b.mean-b.cpu-b.wait)-(a.mean-a.cpu-a.wait))
		xa, whyA := machineOf(c.ra[p[0]].sum.Run.Manifest)
		xb, whyB := machineOf(c.rb[p[1]].sum.Run.Manifest)
		if whyA != "" || whyB != "" {
			speedKnown = false
		} else {
			dx = append(dx, math.Log(xb)-math.Log(xa))
		}
	}
	v := variance(dm)
	if v == 0 {
		return nil
	}
	share := func(d []float64) float64 { return 100 * covariance(d, dm) / v }
	out := &Decomposition{Collection: c.Dominant, Pairs: len(dm), SDUs: math.Sqrt(v) / 1e3, CPUPct: share(dc), WaitPct: share(dw), BlockedPct: share(db)}
	if speedKnown && variance(dx) > 0 {
		r := covariance(dx, dm) / math.Sqrt(variance(dx)*v)
		r2 := 100 * r * r
		out.MachinePct = &r2
	}
	return out
}

func covariance(a, b []float64) float64 {
	ma, mb := mean(a), mean(b)
	s := 0.0
	for i := range a {
		s += (a[i] - ma) * (b[i] - mb)
	}
	return s / float64(len(a)-1)
}

// MachineSpeed is a run's machine speed during its load: the geometric mean of its
// canary's medians, in ns (higher is a slower machine); false when it recorded none.
func MachineSpeed(m *runfmt.Manifest) (float64, bool) {
	x, why := machineOf(m)
	return x, why == ""
}
