package analyze

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// machine draws the log factors of one series' runs in the order they ran (ABBA: pair
// k holds positions 2k and 2k+1, A first in even pairs). What neighbouring runs share
// is the machine's state; every run also has noise of its own.
type machine struct {
	name  string
	noise func(rng *rand.Rand, positions int) []float64
}

func independent(sd float64) func(*rand.Rand, int) []float64 {
	return func(rng *rand.Rand, n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = sd * rng.NormFloat64()
		}
		return x
	}
}

// machines: the measured A/A series had 5.5 % between runs and 1.6 % within
// pairs; these span that, and the noise the unpaired interval was calibrated on.
var machines = []machine{
	// no shared state: pairing can only cost degrees of freedom
	{"independent 2 %", independent(0.02)},
	{"heavy-tailed 2 %", func(rng *rand.Rand, n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = 0.02 * studentT3(rng)
		}
		return x
	}},
	// one run of the series (any position) 20 % slow, as after a GC storm
	{"one disturbed run", func(rng *rand.Rand, n int) []float64 {
		x := independent(0.01)(rng, n)
		x[rng.IntN(n)] += math.Log(1.2)
		return x
	}},
	// the machine gets 0.5 % slower with every run
	{"linear drift", func(rng *rand.Rand, n int) []float64 {
		x := independent(0.01)(rng, n)
		for i := range x {
			x[i] += 0.005 * float64(i)
		}
		return x
	}},
	// a slow random walk of the machine (2 % per run) under 1 % of each run's own: the
	// shape of the A/A series (pairs wander by 14 %, within a pair 1-4 %)
	{"random walk", func(rng *rand.Rand, n int) []float64 {
		x := independent(0.01)(rng, n)
		w := 0.05 * rng.NormFloat64()
		for i := range x {
			w += 0.02 * rng.NormFloat64()
			x[i] += w
		}
		return x
	}},
	// the goal: 0.7 % within pairs (0.5 % of each run's own under a walk of
	// 0.5 % per run), whatever the machine does between pairs
	{"goal: 0.7 % in pairs", func(rng *rand.Rand, n int) []float64 {
		x := independent(0.005)(rng, n)
		w := 0.05 * rng.NormFloat64()
		for i := range x {
			w += 0.005 * rng.NormFloat64()
			x[i] += w
		}
		return x
	}},
	// noise far beyond the threshold: only the spending keeps false verdicts down
	{"independent 9 %", independent(0.09)},
	// a busy period: two to four consecutive runs 10 % slow, somewhere in the series
	{"busy period", func(rng *rand.Rand, n int) []float64 {
		x := independent(0.01)(rng, n)
		start, length := rng.IntN(n), 2+rng.IntN(3)
		for i := start; i < min(n, start+length); i++ {
			x[i] += math.Log(1.1)
		}
		return x
	}},
}

// position is where run i of a side ran in an ABBA series.
func position(i int, b bool) int {
	first := i%2 == 0 // A first in even pairs
	if b == first {
		return 2*i + 1
	}
	return 2 * i
}

// rule is an interval for B against A from the first n pairs of log figures.
type rule struct {
	name string
	// interval returns (lo, hi) at the level, ok false when n is too few for it
	interval func(ya, yb []float64, level float64) (lo, hi float64, ok bool)
}

var rules = []rule{
	{"welch-t (unpaired)", func(ya, yb []float64, level float64) (float64, float64, bool) {
		lo, hi := welch(side{y: ya}, side{y: yb}, level)
		return lo, hi, len(ya) >= 2
	}},
	{"paired-t (pairs)", func(ya, yb []float64, level float64) (float64, float64, bool) {
		d := diffs(ya, yb)
		if len(d) < 2 {
			return 0, 0, false
		}
		lo, hi := pairedInterval(d, 0, level)
		return lo, hi, true
	}},
	// ABBA blocks: the mean of each block's two differences (an order effect or linear
	// drift cancels inside a block), t over complete blocks
	{"ABBA blocks", func(ya, yb []float64, level float64) (float64, float64, bool) {
		d := diffs(ya, yb)
		var blocks []float64
		for k := 0; k+1 < len(d); k += 2 {
			blocks = append(blocks, (d[k]+d[k+1])/2)
		}
		if len(blocks) < 2 {
			return 0, 0, false
		}
		lo, hi := pairedInterval(blocks, 0, level)
		return lo, hi, true
	}},
	// pairs with an order term: d = mu + gamma*s (s = +1 when A ran first), df n-2
	{"pairs + order term", func(ya, yb []float64, level float64) (float64, float64, bool) {
		d := diffs(ya, yb)
		n := len(d)
		if n < 3 {
			return 0, 0, false
		}
		var sx, sxx, sy, sxy float64
		for k, v := range d {
			s := 1.0
			if k%2 == 1 {
				s = -1
			}
			sx, sxx, sy, sxy = sx+s, sxx+s*s, sy+v, sxy+s*v
		}
		fn := float64(n)
		det := fn*sxx - sx*sx
		mu := (sxx*sy - sx*sxy) / det
		gamma := (fn*sxy - sx*sy) / det
		var rss float64
		for k, v := range d {
			s := 1.0
			if k%2 == 1 {
				s = -1
			}
			e := v - mu - gamma*s
			rss += e * e
		}
		se := math.Sqrt(rss / (fn - 2) * sxx / det)
		t := tq(fn-2, level)
		return mu - t*se, mu + t*se, true
	}},
}

func diffs(ya, yb []float64) []float64 {
	d := make([]float64, len(ya))
	for i := range ya {
		d[i] = yb[i] - ya[i]
	}
	return d
}

// draw is one series of n pairs: the log figures of A's and B's runs, B's with the
// true log effect.
func draw(rng *rand.Rand, m machine, n int, effect float64) (ya, yb []float64) {
	x := m.noise(rng, 2*n)
	for i := range n {
		ya = append(ya, x[position(i, false)])
		yb = append(yb, x[position(i, true)]+effect)
	}
	return ya, yb
}

// fixedOutcome is a rule at a fixed number of pairs: coverage of the true change
// (threshold 0), A/A false verdicts and power against +5 % (threshold 2 %).
type fixedOutcome struct{ coverage, falseAA, power5 float64 }

func fixed(m machine, r rule, n, trials int, seed uint64) fixedOutcome {
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	tau := math.Log1p(0.02)
	var o fixedOutcome
	for range trials {
		ya, yb := draw(rng, m, n, math.Log(1.05))
		if lo, hi, ok := r.interval(ya, yb, 0.95); ok && lo <= math.Log(1.05) && math.Log(1.05) <= hi {
			o.coverage++
		}
		if lo, _, ok := r.interval(ya, yb, 0.95); ok && lo > tau {
			o.power5++
		}
		ya, yb = draw(rng, m, n, 0)
		if lo, hi, ok := r.interval(ya, yb, 0.95); ok && (lo > tau || hi < -tau) {
			o.falseAA++
		}
	}
	f := float64(trials)
	return fixedOutcome{100 * o.coverage / f, 100 * o.falseAA / f, 100 * o.power5 / f}
}

// sequentialOutcome is a rule in a series under the plan: looks after every pair from
// MinRuns, at the plan's spent levels, the threshold and equivalence as LookAt decides.
type sequentialOutcome struct {
	falseAA     float64 // A/A series called faster or slower at any look, %
	equivAA6    float64 // A/A series called equivalent within 6 pairs, %
	slower5By4  float64 // +5 % series called slower within 4 pairs, %
	meanPairs5  float64 // pairs a +5 % series ran
	wrongEquiv5 float64 // +5 % series called equivalent, %
}

func sequential(m machine, r rule, plan SequentialPlan, thresholdPct float64, trials int, seed uint64) sequentialOutcome {
	rng := rand.New(rand.NewPCG(seed, 11))
	tau := math.Log1p(thresholdPct / 100)
	run := func(effect float64) (Verdict, int) {
		ya, yb := draw(rng, m, plan.MaxRuns, effect)
		for n := plan.FirstLook(); n <= plan.MaxRuns; n++ {
			lo, hi, ok := r.interval(ya[:n], yb[:n], plan.Level(n))
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
	var o sequentialOutcome
	for range trials {
		if v, n := run(0); v == Faster || v == Slower {
			o.falseAA++
		} else if v == Equivalent && n <= 6 {
			o.equivAA6++
		}
		v, n := run(math.Log(1.05))
		if v == Slower && n <= 4 {
			o.slower5By4++
		}
		if v == Equivalent {
			o.wrongEquiv5++
		}
		o.meanPairs5 += float64(n)
	}
	f := float64(trials)
	return sequentialOutcome{100 * o.falseAA / f, 100 * o.equivAA6 / f, 100 * o.slower5By4 / f, o.meanPairs5 / f, 100 * o.wrongEquiv5 / f}
}

// The paired interval, proved on synthetic series whose noise is independent, heavy-
// tailed, disturbed, drifting, or shared by neighbouring runs (a random walk of the
// machine, a busy period over two to four runs): at 4 and 6 pairs its 95 % interval
// holds the true change in at least 93 % of series under every machine; in a
// sequential series (looks after every pair, 2 to 10 pairs, 2 % threshold) no machine
// makes it call a change between identical builds in more than 5 % of series; where
// neighbours share the noise it finds a 5 % slowdown far more often than the unpaired
// interval; and where they share nothing it loses no more than the degrees of freedom
// it gives up; at the goal (0.7 % within pairs) a 5 % slowdown is called
// slower within 4 pairs in at least 90 % of series. The paired plan spends its budget
// where the paired interval can use it (SequentialPlan.Paired); with the unpaired
// plan's spending (35 % at 2 pairs, where t has 1 degree of freedom) pairing would win
// nothing by 4 pairs (measured: 7.9 % against 8.1 % at 2 % independent noise).
func TestPairedCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("calibration takes a few seconds")
	}
	welchT, paired := rules[0], rules[1]
	for i, m := range machines {
		for _, n := range []int{4, 6} {
			p := fixed(m, paired, n, 3000, uint64(10*i+n))
			if p.coverage < 93 {
				t.Errorf("%s, %d pairs: the paired interval holds the true change in %.1f %% (need 93 %%)", m.name, n, p.coverage)
			}
		}
	}
	plan := SequentialPlan{MinRuns: 2, MaxRuns: 10}
	if err := plan.Check(); err != nil {
		t.Fatal(err)
	}
	pplan := plan
	pplan.Paired = true
	for i, m := range machines {
		p := sequential(m, paired, pplan, 2, 3000, uint64(100+i))
		w := sequential(m, welchT, plan, 2, 3000, uint64(100+i))
		t.Logf("%-20s paired: false %.2f %%, +5 %% slower by 4 pairs %.1f %%, A/A equivalent by 6 pairs %.1f %%; welch-t: false %.2f %%, %.1f %%, %.1f %%",
			m.name, p.falseAA, p.slower5By4, p.equivAA6, w.falseAA, w.slower5By4, w.equivAA6)
		if p.falseAA > 5 {
			t.Errorf("%s: a paired series called a change between identical builds in %.2f %% (at most 5 %%)", m.name, p.falseAA)
		}
		switch {
		case strings.HasPrefix(m.name, "random walk") || strings.HasPrefix(m.name, "busy period") || strings.HasPrefix(m.name, "linear drift"):
			if p.slower5By4 < w.slower5By4+10 {
				t.Errorf("%s: paired finds +5 %% by 4 pairs in %.1f %%, unpaired in %.1f %%: the pairing should pay here", m.name, p.slower5By4, w.slower5By4)
			}
		case strings.HasPrefix(m.name, "goal"):
			if p.slower5By4 < 90 {
				t.Errorf("%s: a true 5 %% slowdown is called slower within 4 pairs in %.1f %% of series (the issue's goal: 90 %%)", m.name, p.slower5By4)
			}
		case strings.HasPrefix(m.name, "independent"):
			if p.slower5By4 < w.slower5By4-10 {
				t.Errorf("%s: paired finds +5 %% by 4 pairs in %.1f %%, unpaired in %.1f %%: more lost than the degrees of freedom explain", m.name, p.slower5By4, w.slower5By4)
			}
		}
	}
}

// BenchmarkPairedRules is the evidence for the rule (make bench): per machine, each
// rule's coverage, A/A false verdicts and power at 4 pairs, and its sequential A/A
// false verdicts, power by 4 pairs and equivalence within 6 pairs; the table is in
// the closing note of the precision issue.
func BenchmarkPairedRules(b *testing.B) {
	plan := SequentialPlan{MinRuns: 2, MaxRuns: 10, AlphaPct: 5}
	for b.Loop() {
		var lines []string
		for i, m := range machines {
			for j, r := range rules {
				f := fixed(m, r, 4, 20000, uint64(1000+10*i+j))
				p := plan
				p.Paired = j > 0 // every rule but welch-t has the paired interval's degrees of freedom, or fewer
				s := sequential(m, r, p, 2, 10000, uint64(2000+10*i+j))
				lines = append(lines, fmt.Sprintf("| %s | %s | %.1f | %.2f | %.1f | %.2f | %.1f | %.1f | %.2f |", m.name, r.name,
					f.coverage, f.falseAA, f.power5, s.falseAA, s.slower5By4, s.equivAA6, s.meanPairs5))
			}
		}
		fmt.Println("\n| machine | rule | cover % (4 pairs) | A/A false % (4 pairs) | +5 % found (4 pairs) | series A/A false % | series +5 % slower by 4 pairs | series A/A equivalent by 6 | pairs per +5 % series |\n|---|---|---|---|---|---|---|---|---|\n" +
			strings.Join(lines, "\n"))
	}
}
