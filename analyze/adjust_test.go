package analyze

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/internal/synthrun"
)

// speedMachine is a series' machine as the canary found it on this project's 2-core
// VMs: its slowness wanders between runs (a walk) and swings from one run to the next
// (the host's other tenants), a run's figures slow by theta times as much as the canary
// (measured 2-3 for the Product mean), each run has noise of its own, and the canary
// reads the slowness with noise of its own. Hidden is a second walk of the figures the
// canary does not read (a helper compiling beside the series: the writer waits for a
// CPU, the canary's CPU clock does not).
type speedMachine struct {
	name                     string
	walk, swing, own, canary float64 // SDs on the log scale
	theta                    float64
	hidden                   float64
}

var speedMachines = []speedMachine{
	// the scale 0.02 A/A series: 10-12 % per run within pairs, 4-6 % once adjusted
	{"measured at 0.02", 0.02, 0.04, 0.04, 0.01, 2.6, 0},
	// mostly swing, little of the run's own: what the adjustment is for
	{"swing-dominated", 0.02, 0.04, 0.007, 0.005, 2.6, 0},
	// no machine effect at all: the adjustment can only cost its degree of freedom
	{"steady machine", 0, 0, 0.02, 0.005, 0, 0},
	// a canary that reads the machine badly (its noise as large as the swing)
	{"noisy canary", 0.01, 0.02, 0.01, 0.02, 2.6, 0},
	// a drift the canary does not see: what pairing is for (2026-12-07's series)
	{"hidden drift", 0.01, 0.01, 0.01, 0.005, 2.6, 0.03},
}

// drawSpeeds is one series of n pairs in ABBA order: the log figures y and log
// speeds x of A's and B's runs, B's figures with the true log effect.
func drawSpeeds(rng *rand.Rand, m speedMachine, n int, effect float64) (ya, xa, yb, xb []float64) {
	slow, hidden := make([]float64, 2*n), make([]float64, 2*n)
	w, h := 0.05*rng.NormFloat64(), 0.0
	for i := range slow {
		w += m.walk * rng.NormFloat64()
		h += m.hidden * rng.NormFloat64()
		slow[i], hidden[i] = w+m.swing*rng.NormFloat64(), h
	}
	for i := range n {
		pa, pb := position(i, false), position(i, true)
		ya = append(ya, m.theta*slow[pa]+hidden[pa]+m.own*rng.NormFloat64())
		yb = append(yb, m.theta*slow[pb]+hidden[pb]+m.own*rng.NormFloat64()+effect)
		xa = append(xa, slow[pa]+m.canary*rng.NormFloat64())
		xb = append(xb, slow[pb]+m.canary*rng.NormFloat64())
	}
	return ya, xa, yb, xb
}

// pairedFit is fitPairedANCOVA of figures whose i-th runs of A and B are a pair.
func pairedFit(ya, xa, yb, xb []float64) ancova {
	var pairs [][2]int
	at := make([]int, len(ya))
	for i := range ya {
		at[i] = i
		pairs = append(pairs, [2]int{i, i})
	}
	return fitPairedANCOVA(side{y: ya, at: at}, xa, side{y: yb, at: at}, xb, pairs)
}

// adjustedInterval is the adjusted comparison's interval from the first n pairs: by
// the pairs (fitPairedANCOVA, every series') or as independent groups (fitANCOVA).
func adjustedInterval(ya, xa, yb, xb []float64, n int, level float64, paired bool) (lo, hi float64, ok bool) {
	f := fitANCOVA(ya[:n], xa[:n], yb[:n], xb[:n])
	if paired {
		f = pairedFit(ya[:n], xa[:n], yb[:n], xb[:n])
	}
	if f.why != "" {
		return 0, 0, false
	}
	lo, hi = f.interval(level)
	return lo, hi, true
}

// The adjusted interval holds its level, fitted by the pairs as a series' gate is from
// pairedFitFrom pairs on, and as independent groups: at a fixed number of pairs each covers the true change
// in ≥ 93 % of series, and a sequential series as ab runs it (looks from 3 pairs to 10,
// the budget of 5 % spent across them, a ±2 % threshold) calls builds that do not
// differ faster or slower in ≤ 5 % of series over all its looks — on every machine, the
// one it cannot help included. Where the machine's swing dominates, the paired fit is
// several times as precise as the plain paired interval; where the figures drift in a
// way the canary does not read, it is narrower than the independent fit, which keeps
// that drift in its runs' noise.
func TestAdjustCalibration(t *testing.T) {
	const trials = 4000
	plan := SequentialPlan{MinRuns: 2, MaxRuns: 10, AlphaPct: 5, ThresholdPct: 2, Paired: true}
	if err := plan.Check(); err != nil {
		t.Fatal(err)
	}
	tau, effect := math.Log1p(0.02), math.Log(1.05)
	for _, m := range speedMachines {
		rng := rand.New(rand.NewPCG(7, uint64(len(m.name))))
		var covered, coveredInd, coveredRaw, falseAA, falseInd int
		var width, widthInd, widthRaw float64
		for range trials {
			ya, xa, yb, xb := drawSpeeds(rng, m, 6, effect)
			for _, fit := range []struct {
				paired  bool
				covered *int
				width   *float64
			}{{true, &covered, &width}, {false, &coveredInd, &widthInd}} {
				if lo, hi, ok := adjustedInterval(ya, xa, yb, xb, 6, 0.95, fit.paired); ok {
					if lo <= effect && effect <= hi {
						*fit.covered++
					}
					*fit.width += hi - lo
				}
			}
			lo, hi := pairedInterval(diffs(ya, yb), 0, 0.95)
			if lo <= effect && effect <= hi {
				coveredRaw++
			}
			widthRaw += hi - lo
			// an A/A series, looked at after every pair from the first look on
			ya, xa, yb, xb = drawSpeeds(rng, m, plan.MaxRuns, 0)
			for _, fit := range []struct {
				paired bool
				wrong  *int
			}{{true, &falseAA}, {false, &falseInd}} {
				for n := plan.FirstLook(); n <= plan.MaxRuns; n++ { // the gate's rule: by pairs from pairedFitFrom
					if lo, hi, ok := adjustedInterval(ya, xa, yb, xb, n, plan.Level(n), fit.paired && n >= pairedFitFrom); ok && (lo > tau || hi < -tau) {
						*fit.wrong++
						break
					}
				}
			}
		}
		cov, covInd, fa := float64(covered)/trials, float64(coveredInd)/trials, float64(falseAA)/trials
		t.Logf("%-18s 6 pairs: coverage %.3f (independent %.3f, plain %.3f), mean width %.2f %% (independent %.2f %%, plain %.2f %%); sequential A/A false verdicts %.3f (independent %.3f)",
			m.name, cov, covInd, float64(coveredRaw)/trials, 100*width/trials, 100*widthInd/trials, 100*widthRaw/trials, fa, float64(falseInd)/trials)
		if cov < 0.93 || covInd < 0.93 {
			t.Errorf("%s: the adjusted intervals cover the true change in %.1f %% (paired) and %.1f %% (independent) of series at 6 pairs, below 93 %%", m.name, 100*cov, 100*covInd)
		}
		if fa > 0.05 {
			t.Errorf("%s: %.1f %% of sequential A/A series ended with a verdict, above 5 %%", m.name, 100*fa)
		}
		if m.name == "swing-dominated" && width*3 > widthRaw {
			t.Errorf("%s: the adjusted interval (%.2f %%) is not a third of the plain one (%.2f %%) where the machine's swing dominates",
				m.name, 100*width/trials, 100*widthRaw/trials)
		}
		if m.name == "hidden drift" && width > 0.85*widthInd {
			t.Errorf("%s: the paired fit's interval (%.2f %%) is not narrower than the independent fit's (%.2f %%) by 15 %%, where the canary misses a drift",
				m.name, 100*width/trials, 100*widthInd/trials)
		}
	}
}

// Runs that recorded the machine's speed and the cost columns get the cost and
// adjusted rows, the adjusted figures with the machine set aside: a change hidden
// from the plain mean by a machine that swung 10 % between runs is resolved once
// adjusted, at the slope the runs were made with. Runs without either have neither
// row, and a gate on one says why.
func TestAdjustedRows(t *testing.T) {
	a, b, pairs := synthPairs(t, t.TempDir(), 5, rand.New(rand.NewPCG(3, 4)), func(k int) uint64 { return uint64(11*k - 1) })
	c, err := Compare(a, b, CompareOptions{ThresholdPct: 2, Method: Paired, Pairs: pairs})
	if err != nil {
		t.Fatal(err)
	}
	row := func(name string) Row {
		for _, r := range c.Rows {
			if r.Name() == name {
				return r
			}
		}
		t.Fatalf("no row %s", name)
		return Row{}
	}
	adj := row("Product/mean_adj")
	if adj.Verdict != Faster || *adj.CILowPct > -10 || *adj.CIHighPct < -10 {
		t.Errorf("Product/mean_adj: %s %+.1f %% [%+.1f, %+.1f], want faster with -10 %% inside", adj.Verdict, *adj.DeltaPct, *adj.CILowPct, *adj.CIHighPct)
	}
	if th := *adj.AdjustSlope; th < 2 || th > 3 {
		t.Errorf("Product/mean_adj's slope %.2f, the runs were made with 2.5", th)
	}
	if plain := row("Product/mean"); *plain.CIHighPct-*plain.CILowPct < 3*(*adj.CIHighPct-*adj.CILowPct) {
		t.Errorf("the adjusted interval [%+.1f, %+.1f] is not a third as wide as the plain [%+.1f, %+.1f]",
			*adj.CILowPct, *adj.CIHighPct, *plain.CILowPct, *plain.CIHighPct)
	}
	mean, cpu, alloc := row("Product/mean"), row("Product/cpu"), row("Product/alloc")
	if r := *cpu.A / *mean.A; math.Abs(r-0.9) > 0.001 {
		t.Errorf("Product/cpu is %.4f of the mean, the runs' CPU was 0.9 of every upsert", r)
	}
	if cpu.Unit != "us" || alloc.Unit != "KB" {
		t.Errorf("units: cpu %q, alloc %q", cpu.Unit, alloc.Unit)
	}
	if r := row("*/machine"); r.A == nil || r.Verdict == Insufficient {
		t.Errorf("*/machine: %+v", r)
	}

	// runs without the machine's speed or the cost columns: no such rows
	plainDir := t.TempDir()
	pa, _ := synthrun.Group(plainDir, 3, 1, synthrun.Spec{Label: "A"})
	pb, _ := synthrun.Group(plainDir, 3, 11, synthrun.Spec{Label: "B"})
	ga, _ := LoadGroup("A", pa, LoadOptions{})
	gb, _ := LoadGroup("B", pb, LoadOptions{})
	pc, err := Compare(ga, gb, CompareOptions{ThresholdPct: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range pc.Rows {
		if _, adj := adjusted[r.Metric]; adj || r.Metric == metricCPU || r.Metric == metricAlloc || r.Metric == metricMachine {
			t.Errorf("a comparison of runs without cost or machine figures has row %s", r.Name())
		}
	}
	_, err = Compare(ga, gb, CompareOptions{ThresholdPct: 2, Gate: true, Gates: []string{"Product/mean_adj"}})
	if err == nil || !strings.Contains(err.Error(), "no run has this figure") {
		t.Errorf("a gate on an adjusted figure of runs without one: %v", err)
	}
}

// A series' _adj row is fitted as groups before pairedFitFrom pairs and by its pairs
// from then on: the row says which (Pairs, the within-pair noise beside the
// between-run one), the look says it (ByPairs), and both find the change the runs
// were made with.
func TestAdjustedFitByPairCount(t *testing.T) {
	for _, n := range []int{pairedFitFrom - 1, pairedFitFrom} {
		a, b, pairs := synthPairs(t, t.TempDir(), n, rand.New(rand.NewPCG(5, uint64(n))), func(k int) uint64 { return uint64(10*k + 1) })
		plan := SequentialPlan{MinRuns: 2, MaxRuns: 10, AlphaPct: 5, ThresholdPct: 2, Paired: true, Gates: []string{"Product/mean_adj"}}
		l, err := LookAt(a, b, plan, CompareOptions{ThresholdPct: 2, Method: Paired, Pairs: pairs, Gates: plan.Gates})
		if err != nil {
			t.Fatal(err)
		}
		g := l.Gates[0]
		byPairs := n >= pairedFitFrom
		var row Row
		for _, r := range l.Comparison.Rows {
			if r.Name() == "Product/mean_adj" {
				row = r
			}
		}
		if g.ByPairs != byPairs || (row.Pairs != nil) != byPairs || (row.PairCVPct != nil) != byPairs || !g.Adjusted {
			t.Errorf("%d pairs: ByPairs %v, row pairs %v, within-pair noise %v; want fitted by pairs: %v", n, g.ByPairs, row.Pairs, row.PairCVPct, byPairs)
		}
		if g.DeltaPct == nil || math.Abs(*g.DeltaPct+10) > 2 || g.LowPct == nil || *g.LowPct > -10 || *g.HighPct < -10 {
			t.Errorf("%d pairs: Product/mean_adj %v [%v, %v], the runs were made 10 %% faster", n, g.DeltaPct, g.LowPct, g.HighPct)
		}
	}
}

// synthPairs writes n pairs of synthetic runs with cost columns and the machine's
// speed into dir (B made 10 % faster, the machine swinging 5 % between runs, slope
// 2.5), run k of each side seeded seed(k), and loads the two groups.
func synthPairs(t *testing.T, dir string, n int, rng *rand.Rand, seed func(k int) uint64) (a, b *Group, pairs []Pair) {
	t.Helper()
	for k := 1; k <= n; k++ {
		for _, g := range []struct {
			label  string
			effect float64
		}{{"A", 1}, {"B", 0.9}} {
			d := filepath.Join(dir, g.label, fmt.Sprintf("run-%d", k))
			if _, err := synthrun.Write(d, synthrun.Spec{Label: g.label, Seed: seed(k), Effect: g.effect,
				Tau: 0.003, Machine: 0.05 * rng.NormFloat64(), Theta: 2.5, Cost: true}); err != nil {
				t.Fatal(err)
			}
		}
		pairs = append(pairs, Pair{A: filepath.Join(dir, "A", fmt.Sprintf("run-%d", k)), B: filepath.Join(dir, "B", fmt.Sprintf("run-%d", k))})
	}
	var err error
	if a, err = LoadGroup("A", filepath.Join(dir, "A"), LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, err = LoadGroup("B", filepath.Join(dir, "B"), LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	return a, b, pairs
}
