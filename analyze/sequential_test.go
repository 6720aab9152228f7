package analyze

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// seriesCase is a kind of A/B series: the run-to-run noise (SD of the log figure), the
// true effect of B, and how the noise is drawn.
type seriesCase struct {
	name      string
	sigma     float64
	effectPct float64
	heavy     bool // t(3) noise of the same SD
	disturbed bool // one run of the series (either side, any position) is 90 % slow
}

// seriesOutcome is how many series of a case ended how.
type seriesOutcome struct {
	trials, faster, slower, equivalent, unresolved int
	slowerBy3                                      int // slower with at most 3 runs per side
	runs                                           int // runs per side, summed
}

// simulate runs trials of a series under the plan: runs come in pairs (one per side)
// in ABBA order, and after each pair from MinRuns on the plan's look decides, exactly
// as LookAt does (welch at the plan's level, the threshold, equivalence).
func simulate(c seriesCase, plan SequentialPlan, thresholdPct float64, trials int, seed uint64) seriesOutcome {
	rng := rand.New(rand.NewPCG(seed, 7))
	tau := math.Log1p(thresholdPct / 100)
	effect := math.Log1p(c.effectPct / 100)
	o := seriesOutcome{trials: trials}
	for range trials {
		disturbed := -1
		if c.disturbed {
			disturbed = rng.IntN(2 * plan.MaxRuns)
		}
		var a, b side
		v := Unresolved
		n := 0
		for n < plan.MaxRuns {
			for k, s := range []*side{&a, &b} {
				x := c.sigma * rng.NormFloat64()
				if c.heavy {
					x = c.sigma * studentT3(rng)
				}
				if k == 1 {
					x += effect
				}
				if 2*n+k == disturbed {
					x += math.Log(1.9)
				}
				s.y = append(s.y, x)
			}
			n++
			if n < plan.MinRuns {
				continue
			}
			lo, hi := welch(a, b, plan.Level(n))
			switch {
			case lo > tau:
				v = Slower
			case hi < -tau:
				v = Faster
			case lo > -tau && hi < tau:
				v = Equivalent
			}
			if v != Unresolved {
				break
			}
		}
		o.runs += n
		switch v {
		case Slower:
			o.slower++
			if n <= 3 {
				o.slowerBy3++
			}
		case Faster:
			o.faster++
		case Equivalent:
			o.equivalent++
		default:
			o.unresolved++
		}
	}
	return o
}

func (o seriesOutcome) pct(n int) float64 { return 100 * float64(n) / float64(o.trials) }
func (o seriesOutcome) meanRuns() float64 { return float64(o.runs) / float64(o.trials) }
func (o seriesOutcome) falseCalls() int   { return o.faster + o.slower }
func (o seriesOutcome) String() string {
	return fmt.Sprintf("faster %.2f %%, slower %.2f %% (by 3 runs %.1f %%), equivalent %.1f %%, unresolved %.1f %%; %.2f runs per side",
		o.pct(o.faster), o.pct(o.slower), o.pct(o.slowerBy3), o.pct(o.equivalent), o.pct(o.unresolved), o.meanRuns())
}

var seriesCases = []seriesCase{
	{name: "A/A 1 % noise", sigma: 0.01},
	{name: "A/A 3 % noise", sigma: 0.03},
	{name: "A/A heavy-tailed 3 %", sigma: 0.03, heavy: true},
	{name: "A/A 1 % + one disturbed run", sigma: 0.01, disturbed: true},
	{name: "A/A 3 % + one disturbed run", sigma: 0.03, disturbed: true},
	{name: "A/A 9 % noise", sigma: 0.09},
}

// The series' sequential decision, calibrated on synthetic series up to 10 runs per
// side: between identical builds no look may call a change in more than 5 % of series
// (it is far rarer: the spent interval must also clear the threshold), a build 4 %
// slower (beyond the 2 % threshold) is never called equivalent more often, and a true
// 10 % slowdown at 1 % noise is called slower by 3 runs per side in at least 90 % of
// series.
func TestSequentialCalibration(t *testing.T) {
	plan := SequentialPlan{MinRuns: 2, MaxRuns: 10}
	if err := plan.Check(); err != nil {
		t.Fatal(err)
	}
	const trials = 1500
	for i, c := range seriesCases {
		o := simulate(c, plan, 2, trials, uint64(i+1))
		t.Logf("%-30s %s", c.name, o)
		if o.pct(o.falseCalls()) > 5 {
			t.Errorf("%s: a change called in %.2f %% of series between identical builds", c.name, o.pct(o.falseCalls()))
		}
	}
	for _, c := range []seriesCase{{name: "+4 % at 1 % noise", sigma: 0.01, effectPct: 4}, {name: "+4 % at 2 % noise", sigma: 0.02, effectPct: 4}} {
		o := simulate(c, plan, 2, trials, 99)
		t.Logf("%-30s %s", c.name, o)
		if o.pct(o.equivalent) > 5 || o.pct(o.faster) > 0 {
			t.Errorf("%s: called equivalent in %.2f %%, faster in %.2f %%", c.name, o.pct(o.equivalent), o.pct(o.faster))
		}
	}
	o := simulate(seriesCase{name: "+10 % at 1 % noise", sigma: 0.01, effectPct: 10}, plan, 2, trials, 42)
	t.Logf("%-30s %s", "+10 % at 1 % noise", o)
	if o.pct(o.slowerBy3) < 90 {
		t.Errorf("a true 10 %% slowdown at 1 %% noise is called slower by 3 runs per side in only %.1f %% of series", o.pct(o.slowerBy3))
	}
	// the plan's spending: levels rise towards the first looks, and spend AlphaPct in all
	spent := 0.0
	for n := plan.MinRuns; n <= plan.MaxRuns; n++ {
		spent += 1 - plan.Level(n)
	}
	if math.Abs(spent-0.05) > 1e-12 || plan.Level(2) >= plan.Level(3) || plan.Level(3) >= plan.Level(4) {
		t.Errorf("spending: %.4f in all, levels %.4f %.4f %.4f", spent, plan.Level(2), plan.Level(3), plan.Level(4))
	}
}

// BenchmarkSequentialCalibration prints the calibration with more trials (make bench),
// and the runs a series saves against a fixed design of 10 runs per side.
func BenchmarkSequentialCalibration(b *testing.B) {
	plan := SequentialPlan{MinRuns: 2, MaxRuns: 10, AlphaPct: 5}
	for range b.N {
		for i, c := range append(seriesCases, seriesCase{name: "+10 % at 1 % noise", sigma: 0.01, effectPct: 10},
			seriesCase{name: "+10 % at 3 % noise", sigma: 0.03, effectPct: 10}, seriesCase{name: "+4 % at 2 % noise", sigma: 0.02, effectPct: 4}) {
			o := simulate(c, plan, 2, 10000, uint64(100+i))
			b.Logf("%-30s %s; saves %.1f runs per side against 10", c.name, o, 10-o.meanRuns())
		}
	}
}

// A gate no look of the plan can resolve gets the maximum a new plan would need: the
// smallest one whose last look resolves it at the noise and change seen, none beyond
// 100, none when the noise is unknown.
func TestPlanRunsIsTheSmallestPlanThatResolves(t *testing.T) {
	ptr := func(v float64) *float64 { return &v }
	three := 3
	plan := SequentialPlan{MinRuns: 2, MaxRuns: 3, AlphaPct: 5, Paired: true}
	quiet := Row{Pairs: &three, PairCVPct: ptr(3), DeltaPct: ptr(0.3)}
	m := planRuns(quiet, plan, 2)
	if m == nil || *m <= plan.MaxRuns {
		t.Fatalf("plan runs %v for 3 %% within-pair noise", m)
	}
	at := func(max int) bool { q := plan; q.MaxRuns = max; return projectRuns(quiet, q, max-1, 2) != nil }
	if !at(*m) || at(*m-1) {
		t.Fatalf("a plan of %d resolves: %v; of %d: %v", *m, at(*m), *m-1, at(*m-1))
	}
	if loud := planRuns(Row{Pairs: &three, PairCVPct: ptr(40), DeltaPct: ptr(0.3)}, plan, 2); loud != nil {
		t.Fatalf("40 %% noise: a plan of %d", *loud)
	}
	if unknown := planRuns(Row{Pairs: &three, DeltaPct: ptr(0.3)}, plan, 2); unknown != nil {
		t.Fatalf("unknown noise: a plan of %d", *unknown)
	}
	t.Logf("3 %% within-pair noise, a change of +0.3 %%, ±2 %%: a plan of %d pairs", *m)
}
