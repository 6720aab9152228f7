package analyze

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/warmstat/warmstat/runfmt"
)

// # Many machines, one change
//
// A fleet is the same paired series run on several machines at once (warmstat ab
// --pairs N on each). Machines differ in speed and in noise, so their runs cannot be
// pooled as one group; but inside a pair both builds ran on one machine beside each
// other, so each pair's log difference d = log(B) - log(A) estimates the same change
// whatever the machine's speed. CombineFleet keeps every pair inside its machine:
//
//   - machine m's change is the mean of its n_m differences, d̄_m, with its own
//     variance v_m (the pairs' spread plus what rounding hides): machines may differ
//     in noise, and none borrows another's;
//   - the fleet's change is the pair-weighted mean d̂ = Σ n_m d̄_m / N (the plain
//     mean of the machines' changes when each ran the same number of pairs), with
//     SE² = Σ n_m v_m / N² and Satterthwaite's degrees of freedom
//     ν = (Σ c_m)² / Σ c_m²/(n_m - 1), c_m = n_m v_m / N²: Welch's interval,
//     generalised from two groups to k machines. A noisy machine widens the interval
//     by its share; it is not down-weighted by a variance estimated from a handful
//     of pairs (weights from 2-7 degrees of freedom are noise themselves, and such
//     intervals are measured too narrow);
//   - whether the change itself differs between machines is a separate question,
//     answered by a test of the machines' changes that lets each machine have its own
//     noise (a parametric bootstrap of one-way ANOVA with unequal variances; see
//     heterogeneity); a difference is stated with its evidence, and the interval
//     stays that of the fleet's mean change, not widened to hide it.
//
// Verdicts, thresholds, gates and clock resolution follow Compare. The calibration
// test (TestFleetCalibration, make bench) measures coverage, false verdicts, power
// and the heterogeneity statement on synthetic fleets.

// FleetSeries is one machine's series: its two groups and its pairs.
type FleetSeries struct {
	Name  string // how the series was named (its directory)
	A, B  *Group
	Pairs []Pair
}

// HeterogeneityAlpha is the level at which a fleet's machines are said to see
// different changes.
const HeterogeneityAlpha = 0.05

// machineFields are the contract's conditions of the machine itself: they may differ
// between a fleet's series (never within one).
var machineFields = []string{"cores", "cpu", "memory-limit"}

// MachineChange is one machine's change on one row, from its own pairs.
type MachineChange struct {
	Series    string   `json:"series"`
	Pairs     int      `json:"pairs"`
	DeltaPct  *float64 `json:"delta_pct"`
	CILowPct  *float64 `json:"ci_low_pct"` // its own paired interval, at the fleet's level
	CIHighPct *float64 `json:"ci_high_pct"`
	NoisePct  *float64 `json:"within_pair_cv_pct"`
}

// Heterogeneity is whether the machines' changes differ by more than their noise.
type Heterogeneity struct {
	Statistic float64 `json:"statistic"` // the weighted spread of the machines' changes
	DF1       float64 `json:"machines_minus_1"`
	P         float64 `json:"p"`
	Differs   bool    `json:"differs"`
}

// FleetRow is one metric combined across the machines: Row holds the fleet's figures
// (A and B the geometric means of every paired run, Pairs the pairs of all machines).
type FleetRow struct {
	Row
	DF            *float64        `json:"df,omitempty"`
	Machines      []MachineChange `json:"machines"`
	Heterogeneity *Heterogeneity  `json:"heterogeneity,omitempty"`
	// HeterogeneityReason says why there is no heterogeneity test (one machine noiseless).
	HeterogeneityReason string `json:"heterogeneity_reason,omitempty"`
}

// Fleet is build B against build A on several machines, combined.
type Fleet struct {
	Series      []string
	Machines    []*Comparison // each machine's own paired comparison
	Options     CompareOptions
	Dominant    string
	Collections []string
	Rows        []FleetRow
	Gates       []GateResult
}

// FleetRefusal is a combination warmstat will not make: a condition other than the
// machine differs between the series, a run is in two series, or one series' own
// comparison is refused.
type FleetRefusal struct {
	Mismatches []FleetMismatch `json:"mismatches,omitempty"`
	Duplicates []Duplicate     `json:"duplicates,omitempty"`
	Series     string          `json:"series,omitempty"` // the series refused on its own
	Within     *Refusal        `json:"-"`
}

// FleetMismatch is one condition of one side whose value differs between series.
type FleetMismatch struct {
	Field  string          `json:"field"`
	Side   string          `json:"side,omitempty"` // "A" or "B"; "" for a setting of the series' plans
	Values []SeriesSetting `json:"values"`
}

// SeriesSetting is one value and the series (their names) that carry it.
type SeriesSetting struct {
	Value  string   `json:"value"`
	Series []string `json:"series"`
}

func (r *FleetRefusal) Error() string {
	var parts []string
	if r.Within != nil {
		parts = append(parts, "series "+r.Series+": "+r.Within.Error())
	}
	for _, m := range r.Mismatches {
		var v []string
		for _, s := range m.Values {
			v = append(v, fmt.Sprintf("%s (%s)", s.Value, strings.Join(s.Series, ", ")))
		}
		what := m.Field
		if m.Side != "" {
			what += " of " + m.Side
		}
		parts = append(parts, fmt.Sprintf("%s differs between the series: %s", what, strings.Join(v, " against ")))
	}
	for _, d := range r.Duplicates {
		parts = append(parts, fmt.Sprintf("run %s is in more than one series (%s): a copied series is not another machine", d.RunID, strings.Join(d.Runs, "; ")))
	}
	return "refused: " + strings.Join(parts, "; ")
}

// CombineFleet combines the paired series of several machines (see the section on
// fleets above). o's Method and Pairs are ignored: every series is compared by its
// own pairs. Series that differ in anything but the machine (a contract field other
// than cores, cpu and memory-limit; the builds' jars; the workload) are refused with a
// *FleetRefusal, as is a run found in two series.
func CombineFleet(series []FleetSeries, o CompareOptions) (*Fleet, error) {
	if len(series) < 2 {
		return nil, &OptionError{"Series", fmt.Sprint(len(series)), "a fleet combines the series of at least 2 machines"}
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	if ref := fleetContract(series); ref != nil {
		return nil, ref
	}
	f := &Fleet{Options: o}
	for _, s := range series {
		mo := o
		mo.Method, mo.Pairs, mo.Gate, mo.Gates = methodPaired, s.Pairs, false, nil
		c, err := Compare(s.A, s.B, mo)
		var ref *Refusal
		if errors.As(err, &ref) {
			return nil, &FleetRefusal{Series: s.Name, Within: ref}
		}
		if err != nil {
			return nil, fmt.Errorf("series %s: %w", s.Name, err)
		}
		f.Series = append(f.Series, s.Name)
		f.Machines = append(f.Machines, c)
	}
	f.Collections, f.Dominant = fleetCollections(f.Machines)
	for _, coll := range append(slices.Clone(f.Collections), Overall) {
		for _, m := range collectionMetrics() {
			if r := f.row(coll, m); shown(r.Row, m) {
				f.Rows = append(f.Rows, r)
			}
		}
	}
	for _, m := range wholeRunMetrics() {
		if r := f.row(Overall, m); shown(r.Row, m) {
			f.Rows = append(f.Rows, r)
		}
	}
	if o.Gate {
		rows := make([]Row, len(f.Rows))
		for i, r := range f.Rows {
			rows[i] = r.Row
		}
		prefetch := slices.ContainsFunc(f.Machines, func(c *Comparison) bool { return c.prefetch })
		gates, err := judgeGates(rows, o.Gates, f.Dominant, f.Collections, prefetch)
		if err != nil {
			return nil, err
		}
		f.Gates = gates
	}
	return f, nil
}

// fleetContract refuses series that differ in a condition other than the machine's
// (each side's values compared across the series; within a series Compare checks),
// in the build's identity (every jar's digest) or in the workload replayed, and a
// run found in two series.
func fleetContract(series []FleetSeries) *FleetRefusal {
	ref := &FleetRefusal{}
	var all []*Group
	for _, s := range series {
		all = append(all, s.A, s.B)
	}
	ref.Duplicates = duplicates(all...)
	fields := slices.Clone(contract)
	fields = append(fields,
		contractField{"server-jars", true, func(m *runfmt.Manifest) string {
			if m.Server.Build == nil {
				return "unknown"
			}
			return orUnknown(m.Server.Build.ClasspathSHA256)
		}},
		contractField{"workload", true, func(m *runfmt.Manifest) string {
			if m.Source == nil {
				return "none (live)"
			}
			return orUnknown(m.Source.WorkloadSHA256)
		}})
	for _, f := range fields {
		if slices.Contains(machineFields, f.name) {
			continue
		}
		for _, side := range []string{"A", "B"} {
			var vals []SeriesSetting
			for _, s := range series {
				g := s.A
				if side == "B" {
					g = s.B
				}
				v := settings(values(g, f))
				if len(v) != 1 { // differs within the series: its own comparison refuses it
					continue
				}
				k := slices.IndexFunc(vals, func(x SeriesSetting) bool { return x.Value == v[0].Value })
				if k < 0 {
					vals = append(vals, SeriesSetting{Value: v[0].Value})
					k = len(vals) - 1
				}
				vals[k].Series = append(vals[k].Series, s.Name)
			}
			if len(vals) > 1 {
				ref.Mismatches = append(ref.Mismatches, FleetMismatch{Field: f.name, Side: side, Values: vals})
			}
		}
	}
	if len(ref.Mismatches) == 0 && len(ref.Duplicates) == 0 {
		return nil
	}
	return ref
}

// fleetCollections are the collections every machine compared, in the first
// machine's order, and the dominant one.
func fleetCollections(cs []*Comparison) ([]string, string) {
	var out []string
	for _, coll := range cs[0].Collections {
		if !slices.ContainsFunc(cs, func(c *Comparison) bool { return !slices.Contains(c.Collections, coll) }) {
			out = append(out, coll)
		}
	}
	dom := cs[0].Dominant
	if !slices.Contains(out, dom) && len(out) > 0 {
		dom = out[0]
	}
	return out, dom
}

// row combines one metric across the machines.
func (f *Fleet) row(coll string, m Metric) FleetRow {
	unit, scale := m.unit()
	r := FleetRow{Row: Row{Collection: coll, Metric: m, Unit: unit, Verdict: Insufficient}}
	level := cmp.Or(f.Options.Level, 0.95)
	if base, adj := adjusted[m]; adj {
		f.adjustedRow(&r, coll, base, scale, level)
		return r
	}
	var sides []pairedSide
	var ya, yb []float64
	for i, c := range f.Machines {
		sa, sb := gather(c.A.Name, summaries(c.ra), coll, m), gather(c.B.Name, summaries(c.rb), coll, m)
		p := pairUp(sa, sb, c.pairs)
		sides = append(sides, p)
		ya, yb = append(ya, p.ya...), append(yb, p.yb...)
		mc := MachineChange{Series: f.Series[i], Pairs: len(p.d)}
		if len(p.d) > 0 {
			mc.DeltaPct = pct(mean(p.d))
		}
		if len(p.d) >= 2 {
			mc.NoisePct = pct(math.Sqrt(variance(p.d) / 2))
			if variance(p.d)+p.u2 > 0 {
				lo, hi := pairedInterval(p.d, p.u2, level)
				mc.CILowPct, mc.CIHighPct = pct(lo-p.bias), pct(hi+p.bias)
			}
		}
		r.Machines = append(r.Machines, mc)
	}
	n := len(ya)
	r.Pairs, r.RunsA, r.RunsB = &n, n, n
	if n > 0 {
		va, vb := math.Exp(mean(ya))/scale, math.Exp(mean(yb))/scale
		r.A, r.B = &va, &vb
	}
	for i, p := range sides {
		if len(p.d) < 2 {
			r.Reason = fmt.Sprintf("series %s has %d pair(s) with this figure on both sides: each machine needs at least 2", f.Series[i], len(p.d))
			return r
		}
	}
	est := combinePairs(sides, level)
	r.DeltaPct = pct(est.delta)
	r.PairCVPct = pct(est.noise)
	if est.se == 0 {
		r.Reason = noSpread
		return r
	}
	lo, hi := est.delta-est.t*est.se, est.delta+est.t*est.se
	if est.bias > 0 {
		lo, hi = lo-est.bias, hi+est.bias
		r.ResolutionPct = pct(est.bias)
	}
	r.CILowPct, r.CIHighPct = pct(lo), pct(hi)
	r.DF = &est.df
	r.Verdict = verdict(*r.CILowPct, *r.CIHighPct, f.Options.ThresholdPct)
	r.Heterogeneity, r.HeterogeneityReason = heterogeneity(sides, f.Options.Seed)
	return r
}

// adjustedRow combines an adjusted metric across the machines: each machine's change
// at its own machine's speed (its own fit, θ per machine), weighted by its runs, the
// degrees of freedom by Welch-Satterthwaite.
func (f *Fleet) adjustedRow(r *FleetRow, coll string, base Metric, scale, level float64) {
	type fit struct {
		ancova
		n float64
	}
	var fits []fit
	var total, ya, yb float64
	for i, c := range f.Machines {
		sa, sb := gather(c.A.Name, summaries(c.ra), coll, base), gather(c.B.Name, summaries(c.rb), coll, base)
		xa, xb := speeds(c.A.Name, summaries(c.ra), &sa, coll, r.Metric), speeds(c.B.Name, summaries(c.rb), &sb, coll, r.Metric)
		a := fitANCOVA(sa.y, xa, sb.y, xb)
		if a.why != "" {
			r.Reason = fmt.Sprintf("series %s: %s", f.Series[i], a.why)
			return
		}
		n := float64(sa.n() + sb.n())
		fits, total = append(fits, fit{a, n}), total+n
		mc := MachineChange{Series: f.Series[i], Pairs: min(sa.n(), sb.n()), DeltaPct: pct(a.delta), NoisePct: pct(math.Sqrt(a.s2))}
		if a.s2 > 0 {
			lo, hi := a.interval(level)
			mc.CILowPct, mc.CIHighPct = pct(lo), pct(hi)
		}
		r.Machines = append(r.Machines, mc)
	}
	var delta, se2, sumC2 float64
	for _, a := range fits {
		w := a.n / total
		delta, se2, sumC2 = delta+w*a.delta, se2+w*w*a.se2, sumC2+w*w*a.se2*w*w*a.se2/a.df
		ya, yb = ya+w*a.ya, yb+w*a.yb
	}
	va, vb := math.Exp(ya)/scale, math.Exp(yb)/scale
	r.A, r.B, r.DeltaPct = &va, &vb, pct(delta)
	if se2 == 0 {
		r.Reason = noSpread
		return
	}
	df := se2 * se2 / sumC2
	h := tq(df, level) * math.Sqrt(se2)
	r.CILowPct, r.CIHighPct, r.DF = pct(delta-h), pct(delta+h), &df
	r.Verdict = verdict(*r.CILowPct, *r.CIHighPct, f.Options.ThresholdPct)
	r.HeterogeneityReason = "not tested for a figure adjusted for the machine's speed"
}

// fleetEstimate is a row's combined change on the log scale.
type fleetEstimate struct {
	delta, se, df, t float64
	bias             float64 // the largest rounding bound of a machine's differences
	noise            float64 // the machines' pooled within-pair noise of one run (log scale)
}

// combinePairs is the pair-weighted mean of the machines' changes with its
// Satterthwaite t (each machine at least 2 pairs).
func combinePairs(sides []pairedSide, level float64) fleetEstimate {
	var e fleetEstimate
	var total, pooled, pooledDF float64
	for _, p := range sides {
		total += float64(len(p.d))
	}
	var sumC, sumC2 float64
	for _, p := range sides {
		n := float64(len(p.d))
		e.delta += n * mean(p.d) / total
		c := n * (variance(p.d) + p.u2) / (total * total)
		sumC += c
		sumC2 += c * c / (n - 1)
		e.bias = max(e.bias, p.bias)
		pooled += (n - 1) * variance(p.d)
		pooledDF += n - 1
	}
	e.se = math.Sqrt(sumC)
	e.noise = math.Sqrt(pooled / pooledDF / 2)
	if sumC > 0 {
		e.df = sumC * sumC / sumC2
		e.t = tq(e.df, level)
	}
	return e
}

// heterogeneity tests whether the machines' mean differences differ, by the
// parametric bootstrap of Krishnamoorthy, Lu and Mathew (2007): the statistic is the
// weighted spread of the machines' means, T = Σ w_m d̄_m² - (Σ w_m d̄_m)² / Σ w_m with
// w_m = n_m / v_m; its distribution without a difference is simulated from each
// machine's own noise, the means drawn as N(0, v_m/n_m) and the variances as
// v_m χ²(n_m - 1)/(n_m - 1). Welch's F, its closed-form rival, was measured too
// liberal with a machine's variance known from 2 degrees of freedom (14 % false
// statements at 8 machines × 3 pairs, for 5 %); this holds its level there. The
// draws are seeded, so the same series give the same p.
func heterogeneity(sides []pairedSide, seed uint64) (*Heterogeneity, string) {
	k := len(sides)
	if k < 2 {
		return nil, "one machine"
	}
	n, mu, v := make([]float64, k), make([]float64, k), make([]float64, k)
	for _, p := range sides {
		if len(p.d) < minPairsForHeterogeneity {
			return nil, fmt.Sprintf("a machine's noise needs %d pairs or more to tell a difference between machines from it", minPairsForHeterogeneity)
		}
	}
	for i, p := range sides {
		n[i], mu[i], v[i] = float64(len(p.d)), mean(p.d), variance(p.d)+p.u2
		if v[i] == 0 {
			return nil, "a machine's pairs all agree exactly: its noise is unknown"
		}
	}
	stat := func(mu, v []float64) float64 {
		var sw, swm, swm2 float64
		for i := range mu {
			w := n[i] / v[i]
			sw, swm, swm2 = sw+w, swm+w*mu[i], swm2+w*mu[i]*mu[i]
		}
		return swm2 - swm*swm/sw
	}
	t := stat(mu, v)
	rng := rand.New(rand.NewPCG(seed, 0x4b4c4d))
	chi := make([]distuv.ChiSquared, k)
	for i := range chi {
		chi[i] = distuv.ChiSquared{K: n[i] - 1, Src: rng}
	}
	bm, bv := make([]float64, k), make([]float64, k)
	exceed := 0
	for range heterogeneityDraws {
		for i := range k {
			bm[i] = rng.NormFloat64() * math.Sqrt(v[i]/n[i])
			bv[i] = v[i] * chi[i].Rand() / (n[i] - 1)
		}
		if stat(bm, bv) >= t {
			exceed++
		}
	}
	h := &Heterogeneity{Statistic: t, DF1: float64(k - 1), P: float64(exceed+1) / float64(heterogeneityDraws+1)}
	h.Differs = h.P < HeterogeneityAlpha
	return h, ""
}

// minPairsForHeterogeneity: with 2 pairs a machine's noise rests on 1 degree of freedom,
// and a difference between machines cannot be told from it (measured down to 3 pairs).
const minPairsForHeterogeneity = 3

// heterogeneityDraws is the parametric bootstrap's size: p to about ±0.003 at 0.05.
const heterogeneityDraws = 5000
