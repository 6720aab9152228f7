package analyze

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/runfmt"
)

// The adjusted comparison by pairs on real runs of one build (the group fit's coverage logged beside it) (WARMSTAT_REAL_AA: run directories,
// or directories of them, separated by ':'; skipped when unset): every run in the order
// it started, each pseudo-series takes 2n consecutive runs of them, pairs them ABBA as a
// series does, and looks after every pair from the first look on as ab does. Every
// verdict is false (one build); the interval at each look must hold 0 (the true change)
// in ≥ 93 % of looks at the 95 % level. Windows overlap, so the series are not
// independent: the figure is an estimate of the rate, not a proof of it.
func TestAdjustedOnRealAA(t *testing.T) {
	env := os.Getenv("WARMSTAT_REAL_AA")
	if env == "" {
		t.Skip("WARMSTAT_REAL_AA names no runs of one build")
	}
	var runs []*runfmt.Run
	for _, p := range strings.Split(env, ":") {
		dirs, _, err := runfmt.RunDirs(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dirs {
			r, err := runfmt.Open(d)
			if err != nil {
				t.Fatal(err)
			}
			if r.Manifest.ExitCode == 0 {
				runs = append(runs, r)
			}
		}
	}
	slices.SortFunc(runs, func(a, b *runfmt.Run) int { return a.Manifest.StartedAt.Compare(*b.Manifest.StartedAt) })
	type fig struct{ y, x float64 }
	var figs []fig
	for _, r := range runs {
		s, err := Summarize(r, QuantilesJava)
		if err != nil {
			t.Fatal(err)
		}
		f := figureOf(s, "Product", metricMean)
		x, why := machineOf(r.Manifest)
		if f.why != "" || why != "" {
			t.Fatalf("%s: %s%s", r.Dir, f.why, why)
		}
		figs = append(figs, fig{math.Log(f.ns), math.Log(x)})
	}
	plan := SequentialPlan{MinRuns: 2, MaxRuns: 10, AlphaPct: 5, ThresholdPct: 2, Paired: true}
	plan.Check()
	tau := math.Log1p(0.02)
	rng := rand.New(rand.NewPCG(1, 1))
	var series, falseV, looks, covered, groupLooks, groupCovered int
	for n := plan.FirstLook(); n <= min(plan.MaxRuns, len(figs)/2); n++ {
		for start := 0; start+2*n <= len(figs); start++ {
			w := figs[start : start+2*n]
			var ya, xa, yb, xb []float64
			flip := rng.IntN(2) == 1 // which side runs first in the first pair
			for k := range n {
				p := [2]fig{w[2*k], w[2*k+1]}
				if (k%2 == 1) != flip {
					p[0], p[1] = p[1], p[0]
				}
				ya, xa, yb, xb = append(ya, p[0].y), append(xa, p[0].x), append(yb, p[1].y), append(xb, p[1].x)
			}
			f := pairedFit(ya, xa, yb, xb)
			if g := fitANCOVA(ya, xa, yb, xb); g.why == "" {
				groupLooks++
				if lo, hi := g.interval(0.95); lo <= 0 && 0 <= hi {
					groupCovered++
				}
			}
			if f.why != "" {
				continue
			}
			looks++
			if lo, hi := f.interval(0.95); lo <= 0 && 0 <= hi {
				covered++
			}
			if n == min(plan.MaxRuns, len(figs)/2) || n == plan.FirstLook() {
				series++
				lo, hi := f.interval(plan.Level(n))
				if lo > tau || hi < -tau {
					falseV++
				}
			}
		}
	}
	t.Logf("%d real runs of one build (%s): at 95 %%, the adjusted interval by pairs held 0 in %d of %d windows (%.1f %%), by groups in %d of %d; at the plan's levels, %d false verdicts in %d looks",
		len(figs), filepath.Base(env), covered, looks, 100*float64(covered)/float64(max(looks, 1)), groupCovered, groupLooks, falseV, series)
	if looks > 0 && float64(covered) < 0.93*float64(looks) {
		t.Errorf("coverage %.1f %% below 93 %%", 100*float64(covered)/float64(looks))
	}
}
