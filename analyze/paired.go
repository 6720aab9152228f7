package analyze

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"time"
)

// methodPaired: a t-interval over the pairs of an interleaved series (a run of A and
// the run of B beside it in time): each pair's log difference B - A is one
// observation, so that the machine's slow wandering, which moves both runs of a pair
// together, leaves the interval. Needs CompareOptions.Pairs (a series records them).
const methodPaired Method = "paired-t"

// Pair is one pair of a series: a run of A and the run of B next to it in time, by
// their run directories (as in the groups' Runs). First is the side that ran first.
type Pair struct {
	A     string `json:"a"`
	B     string `json:"b"`
	First string `json:"first,omitempty"` // "A" or "B"
}

// pairIndex maps Pairs onto the groups' runs; a pair naming a run that is in neither
// group is an error (the pairing is not of these groups).
func pairIndex(a, b *Group, pairs []Pair) ([][2]int, error) {
	key := func(dir string) string { // the same directory however it was spelled
		if abs, err := filepath.Abs(dir); err == nil {
			return abs
		}
		return filepath.Clean(dir)
	}
	ia, ib := map[string]int{}, map[string]int{}
	for i, r := range a.Runs {
		ia[key(r.Dir)] = i
	}
	for i, r := range b.Runs {
		ib[key(r.Dir)] = i
	}
	var out [][2]int
	usedA, usedB := map[int]bool{}, map[int]bool{}
	for _, p := range pairs {
		x, okA := ia[key(p.A)]
		y, okB := ib[key(p.B)]
		if !okA || !okB {
			missing := p.A
			if okA {
				missing = p.B
			}
			return nil, &OptionError{"Pairs", missing, "a paired run is not among the compared groups' runs"}
		}
		if usedA[x] || usedB[y] {
			return nil, &OptionError{"Pairs", p.A + " " + p.B, "a run is in two pairs"}
		}
		usedA[x], usedB[y] = true, true
		out = append(out, [2]int{x, y})
	}
	return out, nil
}

// pairedSide is one row's figure for every pair where both runs have it.
type pairedSide struct {
	d      []float64 // log(B) - log(A) per pair
	ya, yb []float64
	slot   []int   // a duet's pairs: the slot B's run had (1 or 2); nil otherwise
	u2     float64 // rounding variance of one difference (both runs')
	bias   float64 // rounding bound of one difference
}

// pairUp gathers the pairs' figures; slots, when given, is the slot of each pair's B
// run (a duet series), in the order of pairs.
func pairUp(sa, sb side, pairs [][2]int, slots ...[]int) pairedSide {
	posA, posB := map[int]int{}, map[int]int{}
	for k, i := range sa.at {
		posA[i] = k
	}
	for k, i := range sb.at {
		posB[i] = k
	}
	var p pairedSide
	for i, pr := range pairs {
		ka, okA := posA[pr[0]]
		kb, okB := posB[pr[1]]
		if !okA || !okB {
			continue
		}
		p.ya, p.yb = append(p.ya, sa.y[ka]), append(p.yb, sb.y[kb])
		p.d = append(p.d, sb.y[kb]-sa.y[ka])
		if len(slots) > 0 && slots[0] != nil {
			p.slot = append(p.slot, slots[0][i])
		}
	}
	p.u2, p.bias = sa.u2+sb.u2, sa.bias+sb.bias
	return p
}

// fill gives r the pairs' count, each side's geometric mean and the mean change; it
// returns the count.
func (p pairedSide) fill(r *Row, scale float64) int {
	n := len(p.d)
	r.Pairs, r.RunsA, r.RunsB = &n, n, n
	if n > 0 {
		va, vb := math.Exp(mean(p.ya))/scale, math.Exp(mean(p.yb))/scale
		r.A, r.B = &va, &vb
		r.DeltaPct = pct(mean(p.d))
	}
	return n
}

// pairedRow fills r's interval from the pairs: mean difference, t(n-1) interval of the
// pairs' differences (their variance plus what rounding hides), widened for rounding.
func (c *Comparison) pairedRow(r *Row, sa, sb side, scale float64) {
	p := pairUp(sa, sb, c.pairs, c.slots)
	if c.slots != nil {
		c.duetRow(r, p, scale)
		return
	}
	n := p.fill(r, scale)
	if n >= 2 {
		noise := pct(math.Sqrt(variance(p.d) / 2)) // one run's noise once its partner is known
		r.PairCVPct = noise
	}
	switch {
	case n < 2:
		r.Reason = fmt.Sprintf("%d pair(s) with this figure on both sides: a paired interval needs at least 2", n)
		return
	case variance(p.d) == 0 && p.u2 == 0:
		r.Reason = noSpread
		return
	}
	lo, hi := pairedInterval(p.d, p.u2, cmp.Or(c.Options.Level, 0.95))
	if p.bias > 0 {
		lo, hi = lo-p.bias, hi+p.bias
		r.ResolutionPct = pct(p.bias)
	}
	r.CILowPct, r.CIHighPct = pct(lo), pct(hi)
	r.Verdict = verdict(*r.CILowPct, *r.CIHighPct, c.Options.ThresholdPct)
}

// slotFit is a duet series' pairs with the slot as a factor, as a crossover design
// is analysed with its period: each pair's difference d = δ + σ·s + ε, s = +1 when
// B's run had slot 2 and −1 when it had slot 1 (a series alternates them pair by
// pair), so δ is the builds' change with the slots' difference set aside and σ is
// what slot 2 costs a run against slot 1 (both builds' runs change places, so the
// difference of the two groups' means is twice it). δ̂ = (m₁ + m₂)/2 and σ̂ = (m₂ − m₁)/2
// from the mean differences of the pairs with B in slot 1 (n₁) and in slot 2 (n₂); the
// residual variance has n − 2 degrees of freedom, and Var(δ̂) = s²/4 · (1/n₁ + 1/n₂),
// which is s²/n when the slots are balanced: the paired interval's, one degree of
// freedom fewer.
type slotFit struct {
	delta, slot float64 // δ̂ and σ̂
	rss         float64 // residual sum of squares
	n1, n2      int
}

// fitSlots fits d against the slots; ok is false unless both slots have pairs and
// there are at least 3 (one degree of freedom left).
func fitSlots(d []float64, slots []int) (f slotFit, ok bool) {
	var s1, s2 float64
	for i, v := range d {
		if slots[i] == 2 {
			f.n2, s2 = f.n2+1, s2+v
		} else {
			f.n1, s1 = f.n1+1, s1+v
		}
	}
	if f.n1 == 0 || f.n2 == 0 || len(d) < 3 {
		return f, false
	}
	m1, m2 := s1/float64(f.n1), s2/float64(f.n2)
	f.delta, f.slot = (m1+m2)/2, (m2-m1)/2
	for i, v := range d {
		m := m1
		if slots[i] == 2 {
			m = m2
		}
		f.rss += (v - m) * (v - m)
	}
	return f, true
}

// df is the residual degrees of freedom.
func (f slotFit) df() float64 { return float64(f.n1 + f.n2 - 2) }

// interval is δ̂'s t(n−2) interval, each difference's variance including u2.
func (f slotFit) interval(u2, level float64) (float64, float64) {
	se := math.Sqrt((f.rss/f.df() + u2) / 4 * (1/float64(f.n1) + 1/float64(f.n2)))
	t := tq(f.df(), level)
	return f.delta - t*se, f.delta + t*se
}

// duetRow fills r from a duet series' pairs with the slot as a factor (slotFit): the
// change, the slot's effect, one run's noise once its partner and slot are known, and
// the interval.
func (c *Comparison) duetRow(r *Row, p pairedSide, scale float64) {
	n := p.fill(r, scale)
	f, ok := fitSlots(p.d, p.slot)
	if !ok {
		r.Reason = fmt.Sprintf("%d duet(s) with this figure, %d with B in slot 1 and %d in slot 2: a duet series is analysed with the slot as a factor, which needs both slots and 3 duets", n, f.n1, f.n2)
		return
	}
	r.DeltaPct, r.SlotPct = pct(f.delta), pct(f.slot)
	r.PairCVPct = pct(math.Sqrt(f.rss / f.df() / 2))
	if f.rss == 0 && p.u2 == 0 {
		r.Reason = noSpread
		return
	}
	lo, hi := f.interval(p.u2, cmp.Or(c.Options.Level, 0.95))
	if p.bias > 0 {
		lo, hi = lo-p.bias, hi+p.bias
		r.ResolutionPct = pct(p.bias)
	}
	r.CILowPct, r.CIHighPct = pct(lo), pct(hi)
	r.Verdict = verdict(*r.CILowPct, *r.CIHighPct, c.Options.ThresholdPct)
}

// pairsToResolve is the smallest number of pairs whose 95 % paired half-width,
// t(n-1)*sqrt(2/n)*noise (noise: one run's within-pair noise), leaves an effect of
// effectPct clear of the threshold; 0 when none up to 1000 would.
func pairsToResolve(noisePct, effectPct, thresholdPct float64) int {
	return toResolve(noisePct, effectPct, thresholdPct, pairedDF)
}

// pairedDF is the paired interval's degrees of freedom with n pairs.
func pairedDF(n int) float64 { return float64(n - 1) }

// duetDF is a duet series' interval's degrees of freedom with n duets (the slot is a
// factor too).
func duetDF(n int) float64 { return float64(n - 2) }

// pairedInterval is the t(n-1) interval (confidence level) of the mean of the pairs'
// log differences d, each difference's variance including u2 (what rounding hides).
func pairedInterval(d []float64, u2, level float64) (float64, float64) {
	n := float64(len(d))
	m := mean(d)
	se := math.Sqrt((variance(d) + u2) / n)
	t := tq(n-1, level)
	return m - t*se, m + t*se
}

// PairsByStartTime pairs the i-th run of A with the i-th of B in start order, for runs
// interleaved without a series (by hand, or by scripts/noise.sh): refused unless both
// groups hold as many runs and the two runs of every pair ran back to back (no run of
// either group started between them).
func PairsByStartTime(a, b *Group) ([]Pair, error) {
	if len(a.Runs) != len(b.Runs) {
		return nil, fmt.Errorf("pairing by start time needs as many runs on each side (A %d, B %d); a series' sides are paired by its series.json", len(a.Runs), len(b.Runs))
	}
	type run struct {
		at   time.Time
		side string
		i    int
	}
	var all []run
	for _, g := range []*Group{a, b} {
		for i, r := range g.Runs {
			if r.Manifest.StartedAt == nil {
				return nil, fmt.Errorf("run %s records no start time: its neighbour is unknown", r.Dir)
			}
			all = append(all, run{*r.Manifest.StartedAt, g.Name, i})
		}
	}
	slices.SortStableFunc(all, func(x, y run) int { return x.at.Compare(y.at) })
	pos := map[string]int{}
	for k, r := range all {
		pos[r.side+fmt.Sprint(r.i)] = k
	}
	var pairs []Pair
	for i := range a.Runs {
		pa, pb := pos["A"+fmt.Sprint(i)], pos["B"+fmt.Sprint(i)]
		if pa-pb != 1 && pb-pa != 1 {
			return nil, fmt.Errorf("runs %s and %s (the %d. of each side) did not run back to back: they are no pair", a.Runs[i].Dir, b.Runs[i].Dir, i+1)
		}
		first := "A"
		if pb < pa {
			first = "B"
		}
		pairs = append(pairs, Pair{A: a.Runs[i].Dir, B: b.Runs[i].Dir, First: first})
	}
	return pairs, nil
}
