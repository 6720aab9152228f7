package analyze

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// duetMachine draws a duet series' log figures: per duet i the machine's state of
// that moment, which both runs share, each run's own noise, and the slot's effect on
// the run in slot 2. B's slot alternates as a series places it: slot 2 in odd duets
// (A in slot 1), slot 1 in even ones.
type duetMachine struct {
	name   string
	walk   float64                         // the machine's random walk per duet (and 5 % between series)
	own    func(rng *rand.Rand) float64    // one run's own log noise
	slot   float64                         // what slot 2 costs a run (log)
	unfair float64                         // how much more of the machine's state slot 2 gets (0: both alike)
	hit    func(rng *rand.Rand, n int) int // a duet whose slot-2 run is 10 % slow (-1: none)
}

func normal(sd float64) func(*rand.Rand) float64 {
	return func(rng *rand.Rand) float64 { return sd * rng.NormFloat64() }
}

var duetMachines = []duetMachine{
	{name: "shared walk 2 %, own 0.5 %, slot 3 %", walk: 0.02, own: normal(0.005), slot: math.Log(1.03)},
	// as measured on this machine's first duets (scale 0.002): slot 2 7 % slower
	{name: "slot 7 %, own 1 %", walk: 0.02, own: normal(0.01), slot: math.Log(1.07)},
	{name: "no slot effect, own 0.7 %", walk: 0.02, own: normal(0.007)},
	{name: "heavy-tailed own 1 %, slot 3 %", walk: 0.02, own: func(rng *rand.Rand) float64 { return 0.01 * studentT3(rng) }, slot: math.Log(1.03)},
	// an interrupt storm on one CPU: one duet's slot-2 run 10 % slow
	{name: "one slot-2 run disturbed", walk: 0.02, own: normal(0.005), slot: math.Log(1.03),
		hit: func(rng *rand.Rand, n int) int { return rng.IntN(n) }},
	// the machine's state falls on slot 2 20 % harder than on slot 1
	{name: "machine noise unequal (slot 2 ×1.2)", walk: 0.02, own: normal(0.005), slot: math.Log(1.03), unfair: 0.2},
	// nothing shared: the duet buys nothing, the slot costs a degree of freedom
	{name: "independent 2 %, slot 3 %", own: normal(0.02), slot: math.Log(1.03)},
}

// draw is one duet series of n duets with B's true log effect.
func (m duetMachine) draw(rng *rand.Rand, n int, effect float64) (ya, yb []float64, slotB []int) {
	w := 0.05 * rng.NormFloat64()
	hit := -1
	if m.hit != nil {
		hit = m.hit(rng, n)
	}
	for i := range n {
		w += m.walk * rng.NormFloat64()
		bSlot := 2 - i%2 // duet 1 (i = 0): A in slot 1, B in slot 2
		run := func(slot int) float64 {
			y := w + m.own(rng)
			if slot == 2 {
				y += m.slot + m.unfair*w
				if i == hit {
					y += math.Log(1.1)
				}
			}
			return y
		}
		ya = append(ya, run(3-bSlot))
		yb = append(yb, run(bSlot)+effect)
		slotB = append(slotB, bSlot)
	}
	return ya, yb, slotB
}

// duetRule is an interval of B against A from a duet series' first n duets.
type duetRule struct {
	name     string
	interval func(d []float64, slots []int, level float64) (lo, hi float64, ok bool)
}

var duetRules = []duetRule{
	// what warmstat does (Comparison.duetRow): the slot as a factor, t(n-2)
	{"slot as a factor", func(d []float64, slots []int, level float64) (float64, float64, bool) {
		f, ok := fitSlots(d, slots)
		if !ok || f.rss == 0 {
			return 0, 0, false
		}
		lo, hi := f.interval(0, level)
		return lo, hi, true
	}},
	// what pairing alone would do: the slots' difference left in the noise (and, at an
	// odd number of duets, in the estimate)
	{"paired-t, slot ignored", func(d []float64, _ []int, level float64) (float64, float64, bool) {
		if len(d) < 2 {
			return 0, 0, false
		}
		lo, hi := pairedInterval(d, 0, level)
		return lo, hi, true
	}},
}

type duetOutcome struct {
	coverage, falseAA, found5 float64 // fixed n: %
}

func duetFixed(m duetMachine, r duetRule, n, trials int, seed uint64) duetOutcome {
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	tau, e := math.Log1p(0.02), math.Log(1.05)
	var o duetOutcome
	for range trials {
		ya, yb, s := m.draw(rng, n, e)
		if lo, hi, ok := r.interval(diffs(ya, yb), s, 0.95); ok {
			if lo <= e && e <= hi {
				o.coverage++
			}
			if lo > tau {
				o.found5++
			}
		}
		ya, yb, s = m.draw(rng, n, 0)
		if lo, hi, ok := r.interval(diffs(ya, yb), s, 0.95); ok && (lo > tau || hi < -tau) {
			o.falseAA++
		}
	}
	f := float64(trials) / 100
	return duetOutcome{o.coverage / f, o.falseAA / f, o.found5 / f}
}

// duetSequential is a duet series under plan: looks after every duet from the plan's
// first look, at its spent levels, with the threshold and equivalence as LookAt decides.
// It returns the A/A series called faster or slower at any look and the +5 % series
// called slower within 6 duets, in %.
func duetSequential(m duetMachine, r duetRule, plan SequentialPlan, thresholdPct float64, trials int, seed uint64) (falseAA, slower5By6 float64) {
	rng := rand.New(rand.NewPCG(seed, 13))
	tau := math.Log1p(thresholdPct / 100)
	run := func(effect float64) (Verdict, int) {
		ya, yb, s := m.draw(rng, plan.MaxRuns, effect)
		d := diffs(ya, yb)
		for n := plan.FirstLook(); n <= plan.MaxRuns; n++ {
			lo, hi, ok := r.interval(d[:n], s[:n], plan.Level(n))
			switch {
			case !ok:
			case lo > tau:
				return Slower, n
			case hi < -tau:
				return Faster, n
			case lo > -tau && hi < tau:
				return Equivalent, n
			}
		}
		return Unresolved, plan.MaxRuns
	}
	for range trials {
		if v, _ := run(0); v == Faster || v == Slower {
			falseAA++
		}
		if v, n := run(math.Log(1.05)); v == Slower && n <= 6 {
			slower5By6++
		}
	}
	return 100 * falseAA / float64(trials), 100 * slower5By6 / float64(trials)
}

// The duet analysis, proved on synthetic duet series: the machine's state shared by
// both runs of a duet (a random walk between duets), each run's own noise, normal or
// heavy-tailed, a slot that costs its runs up to 7 %, one slot's run disturbed, the
// machine's state falling harder on one slot, or nothing shared at all. With the slot
// as a factor the 95 % interval holds the true change in at least 93 % of series at
// 4, 5, 6 and 8 duets under every machine, and a sequential duet series (looks from 4
// to 10 duets, 2 % threshold) calls a change between identical builds in at most 5 %
// of series. Ignoring the slot, as plain pairing would, is logged beside it: it loses
// its coverage at an odd number of duets when the slot costs 7 %.
func TestDuetCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("calibration takes a few seconds")
	}
	slot := duetRules[0]
	for i, m := range duetMachines {
		for _, n := range []int{4, 5, 6, 8} {
			o := duetFixed(m, slot, n, 3000, uint64(10*i+n))
			plain := duetFixed(m, duetRules[1], n, 3000, uint64(10*i+n))
			t.Logf("%-38s %d duets: slot as a factor covers %.1f %% (A/A false %.2f %%, +5 %% found %.1f %%); slot ignored %.1f %% (%.2f %%, %.1f %%)",
				m.name, n, o.coverage, o.falseAA, o.found5, plain.coverage, plain.falseAA, plain.found5)
			if o.coverage < 93 {
				t.Errorf("%s, %d duets: the interval holds the true change in %.1f %% (need 93 %%)", m.name, n, o.coverage)
			}
		}
	}
	plan := SequentialPlan{MinRuns: 2, MaxRuns: 10, Paired: true, Duet: true}
	if err := plan.Check(); err != nil {
		t.Fatal(err)
	}
	if plan.FirstLook() != 4 {
		t.Fatalf("a duet plan's first look is at %d duets", plan.FirstLook())
	}
	for i, m := range duetMachines {
		f, p := duetSequential(m, slot, plan, 2, 3000, uint64(200+i))
		t.Logf("%-38s series: A/A false %.2f %%, +5 %% slower by 6 duets %.1f %%", m.name, f, p)
		if f > 5 {
			t.Errorf("%s: a duet series called a change between identical builds in %.2f %% (at most 5 %%)", m.name, f)
		}
		if strings.HasPrefix(m.name, "shared walk") && p < 80 {
			t.Errorf("%s: a true 5 %% slowdown is called slower within 6 duets in %.1f %% of series", m.name, p)
		}
	}
}

// BenchmarkDuetCalibration prints the duet analysis' calibration table (make bench):
// per machine and rule, coverage, A/A false verdicts and +5 % found at 4 and 5 duets,
// and the sequential series' A/A false verdicts and +5 % slower within 6 duets.
func BenchmarkDuetCalibration(b *testing.B) {
	plan := SequentialPlan{MinRuns: 2, MaxRuns: 10, Paired: true, Duet: true, AlphaPct: 5}
	for b.Loop() {
		var lines []string
		for i, m := range duetMachines {
			for j, r := range duetRules {
				f4 := duetFixed(m, r, 4, 20000, uint64(3000+10*i+j))
				f5 := duetFixed(m, r, 5, 20000, uint64(4000+10*i+j))
				sf, sp := duetSequential(m, r, plan, 2, 10000, uint64(5000+10*i+j))
				lines = append(lines, fmt.Sprintf("| %s | %s | %.1f | %.1f | %.2f | %.1f | %.2f | %.1f |", m.name, r.name,
					f4.coverage, f5.coverage, f4.falseAA, f4.found5, sf, sp))
			}
		}
		fmt.Println("\n| machine | rule | cover % (4 duets) | cover % (5) | A/A false % (4) | +5 % found (4) | series A/A false % | series +5 % slower by 6 |\n|---|---|---|---|---|---|---|---|\n" +
			strings.Join(lines, "\n"))
	}
}
