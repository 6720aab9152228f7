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
// reads the slowness with noise of its own.
type speedMachine struct {
	name                     string
	walk, swing, own, canary float64 // SDs on the log scale
	theta                    float64
}

var speedMachines = []speedMachine{
	// the scale 0.02 A/A series: 10-12 % per run within pairs, 4-6 % once adjusted
	{"measured at 0.02", 0.02, 0.04, 0.04, 0.01, 2.6},
	// mostly swing, little of the run's own: what the adjustment is for
	{"swing-dominated", 0.02, 0.04, 0.007, 0.005, 2.6},
	// no machine effect at all: the adjustment can only cost its degree of freedom
	{"steady machine", 0, 0, 0.02, 0.005, 0},
	// a canary that reads the machine badly (its noise as large as the swing)
	{"noisy canary", 0.01, 0.02, 0.01, 0.02, 2.6},
}

// drawSpeeds is one series of n pairs in ABBA order: the log figures y and log
// speeds x of A's and B's runs, B's figures with the true log effect.
func drawSpeeds(rng *rand.Rand, m speedMachine, n int, effect float64) (ya, xa, yb, xb []float64) {
	slow := make([]float64, 2*n)
	w := 0.05 * rng.NormFloat64()
	for i := range slow {
		w += m.walk * rng.NormFloat64()
		slow[i] = w + m.swing*rng.NormFloat64()
	}
	for i := range n {
		pa, pb := position(i, false), position(i, true)
		ya = append(ya, m.theta*slow[pa]+m.own*rng.NormFloat64())
		yb = append(yb, m.theta*slow[pb]+m.own*rng.NormFloat64()+effect)
		xa = append(xa, slow[pa]+m.canary*rng.NormFloat64())
		xb = append(xb, slow[pb]+m.canary*rng.NormFloat64())
	}
	return ya, xa, yb, xb
}

// adjustedInterval is the adjusted comparison's interval from the first n pairs.
func adjustedInterval(ya, xa, yb, xb []float64, n int, level float64) (lo, hi float64, ok bool) {
	f := fitANCOVA(ya[:n], xa[:n], yb[:n], xb[:n])
	if f.why != "" {
		return 0, 0, false
	}
	lo, hi = f.interval(level)
	return lo, hi, true
}

// The adjusted interval holds its level: at a fixed number of pairs it covers
// the true change in ≥ 93 % of series, and a sequential series as ab runs it (looks
// from 3 pairs to 10, the budget of 5 % spent across them, a ±2 % threshold) calls
// builds that do not differ faster or slower in ≤ 5 % of series over all its looks —
// on every machine, the one it cannot help included. Where the machine's swing
// dominates, it is several times as precise as the plain paired interval.
func TestAdjustCalibration(t *testing.T) {
	const trials = 4000
	plan := SequentialPlan{MinRuns: 2, MaxRuns: 10, AlphaPct: 5, ThresholdPct: 2, Paired: true}
	if err := plan.Check(); err != nil {
		t.Fatal(err)
	}
	tau := math.Log1p(0.02)
	for _, m := range speedMachines {
		rng := rand.New(rand.NewPCG(7, uint64(len(m.name))))
		var covered, coveredRaw, falseAA int
		var width, widthRaw float64
		for range trials {
			ya, xa, yb, xb := drawSpeeds(rng, m, 6, math.Log(1.05))
			if lo, hi, ok := adjustedInterval(ya, xa, yb, xb, 6, 0.95); ok {
				if lo <= math.Log(1.05) && math.Log(1.05) <= hi {
					covered++
				}
				width += hi - lo
			}
			lo, hi := pairedInterval(diffs(ya, yb), 0, 0.95)
			if lo <= math.Log(1.05) && math.Log(1.05) <= hi {
				coveredRaw++
			}
			widthRaw += hi - lo
			// an A/A series, looked at after every pair from the first look on
			ya, xa, yb, xb = drawSpeeds(rng, m, plan.MaxRuns, 0)
			for n := plan.FirstLook(); n <= plan.MaxRuns; n++ {
				if lo, hi, ok := adjustedInterval(ya, xa, yb, xb, n, plan.Level(n)); ok && (lo > tau || hi < -tau) {
					falseAA++
					break
				}
			}
		}
		cov, fa := float64(covered)/trials, float64(falseAA)/trials
		t.Logf("%-18s 6 pairs: coverage %.3f (plain %.3f), mean width %.2f %% (plain %.2f %%); sequential A/A false verdicts %.3f",
			m.name, cov, float64(coveredRaw)/trials, 100*width/trials, 100*widthRaw/trials, fa)
		if cov < 0.93 {
			t.Errorf("%s: the adjusted interval covers the true change in %.1f %% of series at 6 pairs, below 93 %%", m.name, 100*cov)
		}
		if fa > 0.05 {
			t.Errorf("%s: %.1f %% of sequential A/A series ended with a verdict, above 5 %%", m.name, 100*fa)
		}
		if m.name == "swing-dominated" && width*3 > widthRaw {
			t.Errorf("%s: the adjusted interval (%.2f %%) is not a third of the plain one (%.2f %%) where the machine's swing dominates",
				m.name, 100*width/trials, 100*widthRaw/trials)
		}
	}
}

// Runs that recorded the machine's speed and the cost columns get the cost and
// adjusted rows, the adjusted figures with the machine set aside: a change hidden
// from the plain mean by a machine that swung 10 % between runs is resolved once
// adjusted, at the slope the runs were made with. Runs without either have neither
// row, and a gate on one says why.
func TestAdjustedRows(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	var pairs []Pair
	for k := 1; k <= 5; k++ {
		for _, g := range []struct {
			label  string
			effect float64
		}{{"A", 1}, {"B", 0.9}} {
			d := filepath.Join(dir, g.label, fmt.Sprintf("run-%d", k))
			if _, err := synthrun.Write(d, synthrun.Spec{Label: g.label, Seed: uint64(10*k) + uint64(len(pairs)), Effect: g.effect,
				Tau: 0.003, Machine: 0.05 * rng.NormFloat64(), Theta: 2.5, Cost: true}); err != nil {
				t.Fatal(err)
			}
		}
		pairs = append(pairs, Pair{A: filepath.Join(dir, "A", fmt.Sprintf("run-%d", k)), B: filepath.Join(dir, "B", fmt.Sprintf("run-%d", k))})
	}
	a, err := LoadGroup("A", filepath.Join(dir, "A"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadGroup("B", filepath.Join(dir, "B"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
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
