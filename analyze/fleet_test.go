package analyze

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/warmstat/warmstat/runfmt"
)

// A synthetic fleet: k machines, each running pairs of A and B. A machine has its own
// speed (×0.7 to ×1.3) and its own run-to-run noise (1 % to 5 %, log SD of one run);
// both runs of a pair share the machine's wander at that moment (3 %, cancelled by the
// pairing); B's true change on a machine is its kind's (kinds alternate machine by
// machine). A run is its figures alone (fleetRun): the noise is all the run's.
type fleetSpec struct {
	machines, pairs int
	effects         []float64 // true multiplier of B per machine kind (one kind: homogeneous)
}

// fleetRun is a run as the fleet calibration reads it: Product's mean upsert (7 ms
// times the run's factor) and nothing else that costs time to draw, so that thousands
// of fleets of up to 128 runs can be drawn.
func fleetRun(factor float64) runData {
	mean := factor * 7e6
	m := &runfmt.Manifest{Timings: runfmt.Timings{ResolutionNs: 1, LoadWallNs: int64(mean * 1100), UpsertNs: int64(mean * 1000)}}
	st := Stats{Count: 1000, SumNs: int64(mean * 1000), MeanNs: mean, MedianNs: mean, P95Ns: mean * 2, P99Ns: mean * 3}
	s := &RunSummary{Run: &runfmt.Run{Dir: "synthetic", Manifest: m}, Quantiles: QuantilesJava, Overall: st,
		Collections: []CollectionSummary{{Name: "Product", Stats: st, WallNs: m.Timings.LoadWallNs, UpsertNs: m.Timings.UpsertNs}}}
	s.derive()
	return runData{sum: s}
}

// fleetTrial draws one fleet and returns its machines' paired comparisons.
func fleetTrial(rng *rand.Rand, s fleetSpec) (*Fleet, []float64) {
	f := &Fleet{Options: CompareOptions{Quantiles: QuantilesJava, Level: 0.95}, Collections: []string{"Product"}, Dominant: "Product"}
	var truth []float64
	for m := range s.machines {
		speed := 0.7 + 0.6*rng.Float64()
		noise := 0.01 + 0.04*rng.Float64()
		effect := s.effects[m%len(s.effects)]
		c := &Comparison{A: &Group{Name: "A"}, B: &Group{Name: "B"}, Collections: []string{"Product"}, Dominant: "Product"}
		for i := range s.pairs {
			wander := math.Exp(0.03 * rng.NormFloat64())
			c.ra = append(c.ra, fleetRun(speed*wander*math.Exp(noise*rng.NormFloat64())))
			c.rb = append(c.rb, fleetRun(effect*speed*wander*math.Exp(noise*rng.NormFloat64())))
			c.pairs = append(c.pairs, [2]int{i, i})
			truth = append(truth, math.Log(effect))
		}
		f.Machines = append(f.Machines, c)
		f.Series = append(f.Series, fmt.Sprintf("machine-%d", m+1))
	}
	return f, truth
}

// singleTrial is the same number of pairs run by one machine of the fleet's kind alone
// (its speed and noise drawn as a fleet machine's).
func singleTrial(rng *rand.Rand, s fleetSpec, threshold float64) Verdict {
	speed := 0.7 + 0.6*rng.Float64()
	noise := 0.01 + 0.04*rng.Float64()
	c := &Comparison{A: &Group{Name: "A"}, B: &Group{Name: "B"}, Collections: []string{"Product"}, Dominant: "Product",
		Options: CompareOptions{ThresholdPct: threshold, Quantiles: QuantilesJava, Level: 0.95}}
	var ra, rb []runData
	for i := range s.machines * s.pairs {
		wander := math.Exp(0.03 * rng.NormFloat64())
		ra = append(ra, fleetRun(speed*wander*math.Exp(noise*rng.NormFloat64())))
		rb = append(rb, fleetRun(s.effects[0]*speed*wander*math.Exp(noise*rng.NormFloat64())))
		c.pairs = append(c.pairs, [2]int{i, i})
	}
	r, _ := c.row("Product", metricMean, ra, rb, nil)
	return r.Verdict
}

type fleetCalib struct {
	trials, covered, judged, slower, faster, differs, single int
}

func (c fleetCalib) coverage() float64  { return float64(c.covered) / float64(max(1, c.judged)) }
func (c fleetCalib) rate(n int) float64 { return float64(n) / float64(max(1, c.trials)) }

// calibrateFleet runs seeded trials of s on Product's mean upsert and counts the
// combined row's verdicts at threshold, whether its interval holds the fleet's true
// (pair-weighted mean) change, and the heterogeneity statements; with single, also
// the verdicts of one machine running all the pairs alone.
func calibrateFleet(s fleetSpec, trials int, threshold float64, seed uint64, single bool) fleetCalib {
	rng := rand.New(rand.NewPCG(seed, uint64(s.machines*100+s.pairs)))
	out := fleetCalib{trials: trials}
	for range trials {
		f, truth := fleetTrial(rng, s)
		f.Options.ThresholdPct = threshold
		r := f.row("Product", metricMean)
		switch r.Verdict {
		case Slower:
			out.slower++
		case Faster:
			out.faster++
		}
		if r.CILowPct != nil {
			out.judged++
			t := 100 * (math.Exp(mean(truth)) - 1)
			if *r.CILowPct <= t && t <= *r.CIHighPct {
				out.covered++
			}
		}
		if r.Heterogeneity != nil && r.Heterogeneity.Differs {
			out.differs++
		}
		if single && singleTrial(rng, s, threshold) == Slower {
			out.single++
		}
	}
	return out
}

// The combined interval of a fleet, measured: between identical builds it calls a
// change in at most 5 % of trials at the 2 % threshold and says the machines differ
// in about 5 % (its level); with a true +5 % it holds the truth in at least 93 % of
// trials (threshold 0), also when the machines' changes really differ (then the
// truth is their mean); a +10 % change is found about as often as by one machine
// running every pair alone; and where the change really differs between two kinds of
// machine (+2 % and +15 %), the heterogeneity is stated in at least 90 % of trials
// with 4 machines or more. The figures per fleet size are in BenchmarkFleetCalibration.
func TestFleetCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("calibration takes a few seconds")
	}
	for _, k := range []int{2, 4, 8} {
		for _, pairs := range []int{3, 5} {
			s := fleetSpec{machines: k, pairs: pairs}
			aa := calibrateFleet(fleetSpec{k, pairs, []float64{1}}, 400, 2, 31, false)
			if r := aa.rate(aa.slower + aa.faster); r > 0.05 {
				t.Errorf("A/A, %d machines × %d pairs: a change called in %.1f%% of trials (limit 5%%)", k, pairs, 100*r)
			}
			if r := aa.rate(aa.differs); r > 0.10 {
				t.Errorf("A/A, %d machines × %d pairs: the machines said to differ in %.1f%% of trials (level 5%%)", k, pairs, 100*r)
			}
			s.effects = []float64{1.05}
			cov := calibrateFleet(s, 400, 0, 32, false)
			if c := cov.coverage(); c < 0.93 {
				t.Errorf("+5 %%, %d machines × %d pairs: the interval holds the truth in %.1f%% of trials (need 93%%)", k, pairs, 100*c)
			}
			s.effects = []float64{1.02, 1.15}
			het := calibrateFleet(s, 400, 0, 33, false)
			if c := het.coverage(); c < 0.93 {
				t.Errorf("+2 %%/+15 %% by kind, %d machines × %d pairs: coverage of the mean change %.1f%% (need 93%%)", k, pairs, 100*c)
			}
			if r := het.rate(het.differs); k >= 4 && pairs >= 5 && r < 0.90 {
				t.Errorf("+2 %%/+15 %% by kind, %d machines × %d pairs: heterogeneity stated in only %.1f%% of trials (need 90%%)", k, pairs, 100*r)
			}
		}
	}
	pw := calibrateFleet(fleetSpec{4, 3, []float64{1.10}}, 400, 2, 34, true)
	if f, s := pw.rate(pw.slower), pw.rate(pw.single); f < 0.9*s {
		t.Errorf("+10 %%, 4 machines × 3 pairs: slower in %.1f%% of trials, one machine with 12 pairs %.1f%%", 100*f, 100*s)
	}
}

// BenchmarkFleetCalibration (make bench) reports, per fleet size, on Product's mean
// upsert: A/A false verdicts at 2 % and false heterogeneity statements; coverage of a
// true +5 % (threshold 0); power against +5 % and +10 % at 2 %, beside one machine
// running every pair alone; and, with changes of +2 % and +15 % on alternate machines,
// the coverage of their mean and how often the difference is stated.
func BenchmarkFleetCalibration(b *testing.B) {
	for _, k := range []int{2, 4, 8} {
		for _, pairs := range []int{3, 5, 8} {
			b.Run(fmt.Sprintf("machines=%d/pairs=%d", k, pairs), func(b *testing.B) {
				for b.Loop() {
					aa := calibrateFleet(fleetSpec{k, pairs, []float64{1}}, 2000, 2, 41, false)
					cov := calibrateFleet(fleetSpec{k, pairs, []float64{1.05}}, 2000, 0, 42, false)
					p5 := calibrateFleet(fleetSpec{k, pairs, []float64{1.05}}, 1000, 2, 43, true)
					p10 := calibrateFleet(fleetSpec{k, pairs, []float64{1.10}}, 1000, 2, 44, true)
					het := calibrateFleet(fleetSpec{k, pairs, []float64{1.02, 1.15}}, 2000, 0, 45, false)
					b.ReportMetric(100*aa.rate(aa.slower+aa.faster), "falseAA%")
					b.ReportMetric(100*aa.rate(aa.differs), "falseHet%")
					b.ReportMetric(100*cov.coverage(), "cover%")
					b.ReportMetric(100*p5.rate(p5.slower), "power5%")
					b.ReportMetric(100*p5.rate(p5.single), "power5%-one")
					b.ReportMetric(100*p10.rate(p10.slower), "power10%")
					b.ReportMetric(100*p10.rate(p10.single), "power10%-one")
					b.ReportMetric(100*het.coverage(), "coverHet%")
					b.ReportMetric(100*het.rate(het.differs), "hetStated%")
				}
			})
		}
	}
}
