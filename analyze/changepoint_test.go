package analyze

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// bruteSplit is bestSplit by the definition, for the test.
func bruteSplit(z []float64, minSeg int) (int, float64) {
	bt, bq := -1, math.Inf(-1)
	for t := minSeg; t <= len(z)-minSeg; t++ {
		x, y := z[:t], z[t:]
		var b, wx, wy float64
		for _, a := range x {
			for _, c := range y {
				b += math.Abs(a - c)
			}
		}
		for i := range x {
			for j := i + 1; j < len(x); j++ {
				wx += math.Abs(x[i] - x[j])
			}
		}
		for i := range y {
			for j := i + 1; j < len(y); j++ {
				wy += math.Abs(y[i] - y[j])
			}
		}
		m, n := float64(len(x)), float64(len(y))
		q := m * n / (m + n) * (2*b/(m*n) - wx/(m*(m-1)/2) - wy/(n*(n-1)/2))
		if q > bq {
			bt, bq = t, q
		}
	}
	return bt, bq
}

// The incremental split statistic is the definition's.
func TestBestSplitIsTheDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{4, 5, 9, 25, 60} {
		z := make([]float64, n)
		for i := range z {
			z[i] = rng.NormFloat64()
			if i > n/3 {
				z[i] += 0.7
			}
		}
		for _, minSeg := range []int{2, 3} {
			if n < 2*minSeg {
				continue
			}
			tau, q, ok := bestSplit(z, minSeg)
			bt, bq := bruteSplit(z, minSeg)
			if !ok || tau != bt || math.Abs(q-bq) > 1e-9*math.Max(1, math.Abs(bq)) {
				t.Errorf("n %d, min %d: split %d Q %.12g, by definition %d Q %.12g", n, minSeg, tau, q, bt, bq)
			}
		}
	}
	if _, _, ok := bestSplit([]float64{1, 2, 3, 4, 5}, 3); ok {
		t.Error("a split of 5 points with at least 3 on each side")
	}
}

// history draws one line of builds: each point's figure (log scale) is its level, the
// machine's slowness times theta and its own noise; speeds are the canary's readings.
func history(rng *rand.Rand, n int, steps map[int]float64, m speedMachine) (figures, speeds []float64) {
	level, w := 0.0, 0.05*rng.NormFloat64()
	for i := range n {
		level += steps[i]
		w += m.walk * rng.NormFloat64()
		slow := w + m.swing*rng.NormFloat64()
		figures = append(figures, 8000*math.Exp(level+m.theta*slow+m.own*rng.NormFloat64()))
		speeds = append(speeds, 300*math.Exp(slow+m.canary*rng.NormFloat64()))
	}
	return figures, speeds
}

// changePointCalibration counts what the search found on synthetic lines.
type changePointCalibration struct {
	lines, builds        int
	falseCPs, falsePlain int
	found10, found5      int
}

func (c changePointCalibration) per100(n int) float64 {
	return float64(n) / float64(c.lines) * 100 / float64(c.builds)
}

// calibrateChangePoints draws lines of n builds on machine m: A/A lines (every change
// point found is false), adjusted for the machine's speed and not, and lines with a 10 %
// and a 5 % step at 60 % of the line, found when a change point lands within one build
// of it.
func calibrateChangePoints(t testing.TB, m speedMachine, lines, n int) changePointCalibration {
	rng := rand.New(rand.NewPCG(11, uint64(len(m.name))))
	c := changePointCalibration{lines: lines, builds: n}
	at := n * 6 / 10
	for range lines {
		f, s := history(rng, n, nil, m)
		seg, err := ChangePoints(f, s, ChangePointOptions{Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		c.falseCPs += len(seg.ChangePoints)
		if plain, _ := ChangePoints(f, nil, ChangePointOptions{Seed: 3}); plain != nil {
			c.falsePlain += len(plain.ChangePoints)
		}
		for _, step := range []float64{0.10, 0.05} {
			f, s := history(rng, n, map[int]float64{at: math.Log1p(step)}, m)
			seg, err := ChangePoints(f, s, ChangePointOptions{Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			if slices.ContainsFunc(seg.changeAt(), func(i int) bool { return i >= at-1 && i <= at+1 }) {
				if step == 0.10 {
					c.found10++
				} else {
					c.found5++
				}
			}
		}
	}
	return c
}

// the machine the history was measured on (its swing set aside by the canary), and a
// steady one
var (
	measuredMachine = speedMachine{"measured at 0.1", 0.01, 0.04, 0.035, 0.01, 2.5, 0}
	steadyMachine   = speedMachine{"steady, own 2 %", 0, 0, 0.02, 0.005, 0, 0}
)

// On synthetic histories the search holds its calibration (a small draw here, seeded;
// BenchmarkChangePointCalibration draws 200 lines of 100 builds for docs/history.md):
// at most 1 false change point per 100 builds, and 10 % steps found within one build of
// where they are.
func TestChangePointCalibration(t *testing.T) {
	for _, m := range []speedMachine{measuredMachine, steadyMachine} {
		c := calibrateChangePoints(t, m, 25, 60)
		t.Logf("%-16s A/A: %.2f false change points per 100 builds (not adjusted: %.2f); a 10 %% step found %d of %d, a 5 %% step %d",
			m.name, c.per100(c.falseCPs), c.per100(c.falsePlain), c.found10, c.lines, c.found5)
		if c.per100(c.falseCPs) > 1 {
			t.Errorf("%s: %.2f false change points per 100 builds, above 1", m.name, c.per100(c.falseCPs))
		}
		if c.found10 < c.lines*8/10 {
			t.Errorf("%s: a 10 %% step found in %d of %d lines", m.name, c.found10, c.lines)
		}
	}
}

// The calibration docs/history.md quotes: false change points per 100 builds on A/A
// lines, adjusted and not, and the share of 10 % and 5 % steps found.
func BenchmarkChangePointCalibration(b *testing.B) {
	for _, m := range []speedMachine{measuredMachine, steadyMachine} {
		b.Run(strings.ReplaceAll(m.name, " ", "_"), func(b *testing.B) {
			for b.Loop() {
				c := calibrateChangePoints(b, m, 200, 100)
				b.ReportMetric(c.per100(c.falseCPs), "falseCP/100builds")
				b.ReportMetric(c.per100(c.falsePlain), "falseCP/100builds-plain")
				b.ReportMetric(100*float64(c.found10)/float64(c.lines), "found%-10step")
				b.ReportMetric(100*float64(c.found5)/float64(c.lines), "found%-5step")
			}
		})
	}
}

// A step is found where it is, with its size and interval; the machine's swing, which
// hides a step in the plain figures, is set aside; bad input is refused.
func TestChangePointsFindTheStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	m := speedMachine{"swinging", 0.01, 0.05, 0.01, 0.005, 2.5, 0}
	f, s := history(rng, 30, map[int]float64{18: math.Log(0.86)}, m)
	seg, err := ChangePoints(f, s, ChangePointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(seg.ChangePoints) != 1 || seg.ChangePoints[0].Index != 18 {
		t.Fatalf("change points %+v, want one at 18", seg.ChangePoints)
	}
	c := seg.ChangePoints[0]
	if c.CILowPct > -14 || c.CIHighPct < -14 || c.P > 0.005 || c.Before != [2]int{0, 18} || c.After != [2]int{18, 30} {
		t.Errorf("change point %+v: want −14 %% inside its interval, p ≤ 0.5 %%, segments [0,18) and [18,30)", c)
	}
	if th := *seg.Slope; th < 2 || th > 3 {
		t.Errorf("slope %.2f, the line was made with 2.5", th)
	}
	for _, bad := range [][]float64{{1, 2, 0, 3}, {1, math.NaN()}, {1, math.Inf(1)}} {
		if _, err := ChangePoints(bad, nil, ChangePointOptions{}); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	if _, err := ChangePoints([]float64{1, 2}, []float64{1}, ChangePointOptions{}); err == nil {
		t.Error("speeds of another length accepted")
	}
	if _, err := ChangePoints([]float64{1, 2}, nil, ChangePointOptions{AlphaPct: 60}); err == nil {
		t.Error("alpha 60 % accepted")
	}
}

// A step measured while the machine sped up (a history whose later builds ran on a
// faster machine): the slope is fitted within the plain figures' segments, so it does
// not take up the step, which is found with its size.
func TestChangePointsThroughAMachineThatSpedUp(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	var figures, speeds []float64
	for i := range 16 {
		x := 0.01 * rng.NormFloat64()
		level := 0.0
		if i >= 12 {
			x -= 0.06 // 6 % faster machine from the step on: as large as the step, on the slope
			level = math.Log(0.86)
		}
		figures = append(figures, 8000*math.Exp(level+2.5*x+0.015*rng.NormFloat64()))
		speeds = append(speeds, 300*math.Exp(x+0.005*rng.NormFloat64()))
	}
	seg, err := ChangePoints(figures, speeds, ChangePointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(seg.ChangePoints) != 1 || seg.ChangePoints[0].Index != 12 {
		t.Fatalf("change points %+v (slope %v), want one at 12", seg.ChangePoints, *seg.Slope)
	}
	if c := seg.ChangePoints[0]; c.CILowPct > -14 || c.CIHighPct < -14 || *seg.Slope < 1.5 || *seg.Slope > 3.5 {
		t.Errorf("change point %+v, slope %.2f: want −14 %% inside its interval and the slope near 2.5", c, *seg.Slope)
	}
}
