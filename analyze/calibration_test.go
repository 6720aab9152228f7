package analyze

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// synthRun is one run of a synthetic build: n lognormal(σ=0.5) upsert latencies
// around meanNs, all scaled by the build's true effect and by the run's own random
// factor exp(N(0, tau)) — the between-run noise that real runs show.
func synthRun(rng *rand.Rand, n int, meanNs, effect, tau float64, keep bool) perRun {
	scale := effect * math.Exp(tau*rng.NormFloat64())
	v := make([]int64, n)
	var sum int64
	for i := range v {
		v[i] = int64(scale * meanNs * math.Exp(0.5*rng.NormFloat64()-0.125))
		sum += v[i]
	}
	p := perRun{lat: map[string]map[Metric]float64{}, clock: map[Metric]float64{}}
	st := StatsOf(v, QuantilesJava)
	if keep {
		p.samples = map[string]resampleSet{"Product": newResampleSet(v, QuantilesJava)}
	}
	p.lat["Product"] = map[Metric]float64{MetricMean: st.MeanNs, MetricMedian: st.MedianNs, MetricP95: st.P95Ns, MetricP99: st.P99Ns}
	wall := float64(sum) * 1.08
	p.clock[MetricLoadWall] = wall
	p.clock[MetricIngest] = wall * 0.95
	p.clock[MetricUpsert] = float64(sum)
	return p
}

type calib struct {
	runs      int
	tau       float64
	effect    float64
	verdicts  map[Metric]map[string]int
	trials    int
	anyCalled int // trials where any metric got faster/slower
}

func (c calib) rate(m Metric, v ...string) float64 {
	n := 0
	for _, x := range v {
		n += c.verdicts[m][x]
	}
	return float64(n) / float64(c.trials)
}

// calibrate runs seeded trials of A (effect 1) against B (effect) with the given
// method and returns how often each verdict came out.
func calibrate(method Method, runs, trials, n int, tau, effect float64, seed uint64) calib {
	rng := rand.New(rand.NewPCG(seed, uint64(runs)))
	res := calib{runs: runs, tau: tau, effect: effect, trials: trials, verdicts: map[Metric]map[string]int{}}
	metrics := []Metric{MetricMean, MetricMedian, MetricP95, MetricP99, MetricLoadWall, MetricIngest}
	for _, m := range metrics {
		res.verdicts[m] = map[string]int{}
	}
	keep := method == MethodTwoStage
	for t := 0; t < trials; t++ {
		ra := make([]perRun, runs)
		rb := make([]perRun, runs)
		for i := range runs {
			ra[i] = synthRun(rng, n, 7e6, 1, tau, keep)
			rb[i] = synthRun(rng, n, 7e6, effect, tau, keep)
		}
		c := &Comparison{Options: CompareOptions{ThresholdPct: 2, Method: method, Resamples: 400, Seed: seed + uint64(t), Quantiles: QuantilesJava},
			Collections: []string{"Product"}, Dominant: "Product"}
		rng2 := rand.New(rand.NewPCG(uint64(t), seed))
		called := false
		for _, m := range metrics {
			coll := "Product"
			if slices.Contains(RunMetrics, m) {
				coll = Overall
			}
			r := c.row(coll, m, ra, rb, rng2)
			res.verdicts[m][r.Verdict]++
			called = called || r.Verdict == Faster || r.Verdict == Slower
		}
		if called {
			res.anyCalled++
		}
	}
	return res
}

// With identical builds the default method calls a change (faster or slower) in at
// most 6% of trials at 2, 3 and 5 runs per build, per metric; with a true 10%
// slowdown, 1% between-run noise and 5 runs it says slower in at least 90%.
func TestCompareCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("calibration takes a few seconds")
	}
	for _, runs := range []int{2, 3, 5} {
		for _, tau := range []float64{0.01, 0.03} {
			c := calibrate(MethodWelchT, runs, 300, 2000, tau, 1.0, 7)
			for m := range c.verdicts {
				if fp := c.rate(m, Faster, Slower); fp > 0.06 {
					t.Errorf("A/A, %d runs, tau %.0f%%: %s called a change in %.1f%% of trials (limit 6%%)", runs, tau*100, m, 100*fp)
				}
			}
			t.Logf("A/A welch-t R=%d tau=%.0f%%: false calls mean %.1f%% p99 %.1f%% load %.1f%%, any metric %.1f%%",
				runs, tau*100, 100*c.rate(MetricMean, Faster, Slower), 100*c.rate(MetricP99, Faster, Slower),
				100*c.rate(MetricLoadWall, Faster, Slower), 100*float64(c.anyCalled)/float64(c.trials))
		}
	}
	c := calibrate(MethodWelchT, 5, 300, 2000, 0.01, 1.10, 11)
	for _, m := range []Metric{MetricMean, MetricLoadWall, MetricIngest} {
		if p := c.rate(m, Slower); p < 0.90 {
			t.Errorf("10%% slowdown, 5 runs, tau 1%%: %s said slower in only %.1f%% (need 90%%)", m, 100*p)
		}
		if f := c.rate(m, Faster); f > 0 {
			t.Errorf("10%% slowdown called faster for %s", m)
		}
	}
	t.Logf("power welch-t R=5 tau=1%% +10%%: slower mean %.1f%% load %.1f%% p99 %.1f%% median %.1f%%",
		100*c.rate(MetricMean, Slower), 100*c.rate(MetricLoadWall, Slower), 100*c.rate(MetricP99, Slower), 100*c.rate(MetricMedian, Slower))
}

// The alternatives the research note discusses, measured with the same generator:
// this is the evidence for choosing welch-t as the default (see README).
func TestCompareMethodsMeasured(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	for _, method := range []Method{MethodTwoStage, MethodCluster} {
		for _, runs := range []int{2, 5} {
			c := calibrate(method, runs, 120, 2000, 0.03, 1.0, 5)
			t.Logf("A/A %s R=%d tau=3%%: false calls mean %.1f%% p99 %.1f%% load %.1f%%", method, runs,
				100*c.rate(MetricMean, Faster, Slower), 100*c.rate(MetricP99, Faster, Slower), 100*c.rate(MetricLoadWall, Faster, Slower))
		}
	}
}

// BenchmarkCalibration: more trials than the unit test, for `make bench`; reports the
// false-call rate (A/A) and the power (+10%) as metrics.
func BenchmarkCalibration(b *testing.B) {
	for _, method := range []Method{MethodWelchT, MethodTwoStage, MethodCluster} {
		for _, runs := range []int{2, 3, 5} {
			b.Run(fmt.Sprintf("%s/runs=%d", method, runs), func(b *testing.B) {
				for b.Loop() {
					aa := calibrate(method, runs, 1000, 2000, 0.02, 1.0, 99)
					pw := calibrate(method, runs, 300, 2000, 0.01, 1.10, 98)
					b.ReportMetric(100*aa.rate(MetricMean, Faster, Slower), "A/A-false-%mean")
					b.ReportMetric(100*aa.rate(MetricP99, Faster, Slower), "A/A-false-%p99")
					b.ReportMetric(100*aa.rate(MetricLoadWall, Faster, Slower), "A/A-false-%load")
					b.ReportMetric(100*pw.rate(MetricMean, Slower), "power-%mean")
				}
			})
		}
	}
}
