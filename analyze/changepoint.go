package analyze

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// # Change points of a history
//
// A history is one figure of many builds in their order, each build measured once or
// a few times. A change point is where the figure's level moved: the builds before it
// and after it differ by more than their noise. warmstat finds them with E-divisive
// means (Matteson and James, JASA 2014), the method Apache Otava and MongoDB's
// performance CI use: for a split of a segment into X (before) and Y (after), with
// m and n points,
//
//	Q = (m·n/(m+n)) · ( 2/(m·n) Σ|x−y| − 1/C(m,2) Σ|x−x'| − 1/C(n,2) Σ|y−y'| )
//
// (the energy distance between the two sides, scaled by their sizes); the split
// with the largest Q is the candidate, and its significance is a permutation test:
// the segment's points are shuffled Permutations times and p = (1 + the shuffles whose
// best split scores at least Q) / (1 + Permutations), the shuffles seeded so that the
// same history gives the same answer. A significant candidate splits its segment and
// the search goes on in the parts (the candidate with the largest Q across all parts
// next), until none is significant. Each side of a split keeps at least MinSegment
// points. Figures are compared on the log scale, as everywhere in warmstat.
//
// The figure may be adjusted for the machine's speed first (speeds given): with y the
// log figure and x the log speed of each point, the level is a step function and
// y = level(segment) + θ·x + ε; θ is fitted within the segments found (starting from
// the plain figures' change points), the points set to one speed, and the change
// points found again, three times.
//
// Calibrated on synthetic A/A histories (no change anywhere: every change point found
// is false) and on histories with a 5 % and a 10 % step (changepoint_test.go;
// docs/history.md has the figures).

// ChangePointOptions tune the search. The zero value is the calibrated default.
type ChangePointOptions struct {
	// AlphaPct is the significance a change point needs (default 0.5 %).
	AlphaPct float64
	// Permutations is how many shuffles the test draws (default 999).
	Permutations int
	// MinSegment is the fewest points on each side of a change point (default 3).
	MinSegment int
	// Seed seeds the shuffles.
	Seed uint64
}

func (o *ChangePointOptions) defaults() error {
	if o.AlphaPct == 0 {
		o.AlphaPct = 0.5
	}
	if o.Permutations == 0 {
		o.Permutations = 999
	}
	if o.MinSegment == 0 {
		o.MinSegment = 3
	}
	switch {
	case math.IsNaN(o.AlphaPct) || o.AlphaPct <= 0 || o.AlphaPct >= 50:
		return &OptionError{"AlphaPct", fmt.Sprint(o.AlphaPct), "a change point's significance is a percentage above 0 and below 50"}
	case o.Permutations < 99 || o.Permutations > 100_000:
		return &OptionError{"Permutations", fmt.Sprint(o.Permutations), "from 99 to 100,000 shuffles"}
	case o.MinSegment < 2:
		return &OptionError{"MinSegment", fmt.Sprint(o.MinSegment), "a segment needs at least 2 points to have a spread"}
	}
	return nil
}

// ChangePoint is one change point of a figure's sequence: the level moved between
// point Index-1 and point Index.
type ChangePoint struct {
	Index int `json:"index"` // the first point after the change
	// DeltaPct is the change of the level, after against before (geometric means of the
	// two segments around it, the points set to one machine speed when adjusted), and
	// its 95 % Welch interval
	DeltaPct  float64 `json:"delta_pct"`
	CILowPct  float64 `json:"ci_low_pct"`
	CIHighPct float64 `json:"ci_high_pct"`
	P         float64 `json:"p"` // the permutation test's p-value
	// Before and After are the segments' points: [from, to) indices
	Before [2]int `json:"before"`
	After  [2]int `json:"after"`
}

// Segmentation is a sequence's change points and what they rest on.
type Segmentation struct {
	Points       int           `json:"points"`
	ChangePoints []ChangePoint `json:"change_points"`
	// Slope is θ when the figure was adjusted for the machine's speed (nil: not adjusted)
	Slope *float64 `json:"adjust_slope,omitempty"`
	// Adjusted are the log figures set to one machine speed (the figures themselves, on
	// the log scale, when not adjusted): what the change points were found in
	Adjusted []float64 `json:"-"`
	// NoisePct is one point's noise: the residual spread around the segments' levels
	NoisePct *float64 `json:"noise_pct,omitempty"`
	// Levels are the segments' levels between the change points, in order: the
	// geometric means of their figures (at one machine speed when adjusted)
	Levels []float64 `json:"levels"`
}

// ChangePoints finds the change points of figures (positive, in their order). speeds,
// when not nil, is each point's machine speed (the canary, positive), and the figures
// are adjusted for it; a point without a speed cannot be adjusted, so speeds must be
// given for all or none.
func ChangePoints(figures, speeds []float64, o ChangePointOptions) (*Segmentation, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	if speeds != nil && len(speeds) != len(figures) {
		return nil, fmt.Errorf("%d figures and %d speeds", len(figures), len(speeds))
	}
	y := make([]float64, len(figures))
	for i, f := range figures {
		if !(f > 0) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("figure %d is %v: a figure must be positive", i, f)
		}
		y[i] = math.Log(f)
	}
	var x []float64
	if speeds != nil {
		x = make([]float64, len(speeds))
		for i, s := range speeds {
			if !(s > 0) || math.IsInf(s, 0) {
				return nil, fmt.Errorf("speed %d is %v: a speed must be positive", i, s)
			}
			x[i] = math.Log(s)
		}
	}
	seg := &Segmentation{Points: len(y)}
	adj := slices.Clone(y)
	var cuts []int
	if x != nil {
		// θ within the segments found so far, the points set to one speed, the change
		// points found again. The first segments are the plain figures' own: fitted over
		// a line with a step in it, θ would take up the part of the step that lines up
		// with the machine's speed (a history measured while the machine sped up
		// hides its step in the slope).
		cuts = eDivisive(y, o)
		for range 3 {
			theta, ok := segmentSlope(y, x, cuts)
			if !ok {
				break
			}
			seg.Slope = &theta
			xbar := mean(x)
			for i := range y {
				adj[i] = y[i] - theta*(x[i]-xbar)
			}
			cuts = eDivisive(adj, o)
		}
	}
	if seg.Slope == nil {
		cuts = eDivisive(adj, o)
	}
	seg.Adjusted = adj
	slices.Sort(cuts)
	bounds := append(append([]int{0}, cuts...), len(adj))
	for k, c := range cuts {
		before, after := adj[bounds[k]:c], adj[c:bounds[k+2]]
		d := mean(after) - mean(before)
		lo, hi := welch(side{y: before}, side{y: after}, 0.95)
		cp := ChangePoint{Index: c, DeltaPct: 100 * (math.Exp(d) - 1), CILowPct: 100 * (math.Exp(lo) - 1), CIHighPct: 100 * (math.Exp(hi) - 1),
			Before: [2]int{bounds[k], c}, After: [2]int{c, bounds[k+2]}}
		cp.P = significance(adj[bounds[k]:bounds[k+2]], o)
		seg.ChangePoints = append(seg.ChangePoints, cp)
	}
	var rss float64
	df := len(adj) - len(bounds) + 1
	if seg.Slope != nil {
		df--
	}
	for k := 0; k+1 < len(bounds); k++ {
		s := adj[bounds[k]:bounds[k+1]]
		m := mean(s)
		for _, v := range s {
			rss += (v - m) * (v - m)
		}
		seg.Levels = append(seg.Levels, math.Exp(m))
	}
	if df > 0 {
		n := 100 * math.Sqrt(rss/float64(df))
		seg.NoisePct = &n
	}
	return seg, nil
}

// segmentSlope is θ, the slope of y on x within the segments that cuts divide y into,
// pooled; false when x does not vary within them.
func segmentSlope(y, x []float64, cuts []int) (float64, bool) {
	c := slices.Sorted(slices.Values(cuts))
	bounds := append(append([]int{0}, c...), len(y))
	var sxy, sxx float64
	for k := 0; k+1 < len(bounds); k++ {
		ys, xs := y[bounds[k]:bounds[k+1]], x[bounds[k]:bounds[k+1]]
		my, mx := mean(ys), mean(xs)
		for i := range ys {
			sxy += (xs[i] - mx) * (ys[i] - my)
			sxx += (xs[i] - mx) * (xs[i] - mx)
		}
	}
	if sxx == 0 {
		return 0, false
	}
	return sxy / sxx, true
}

// eDivisive is the change points of z: the hierarchical E-divisive search, each
// candidate kept when its permutation test is significant at o.AlphaPct.
func eDivisive(z []float64, o ChangePointOptions) []int {
	type segment struct{ from, to int }
	segs := []segment{{0, len(z)}}
	var cuts []int
	for {
		best, bestQ, bestSeg := -1, math.Inf(-1), -1
		for k, s := range segs {
			if tau, q, ok := bestSplit(z[s.from:s.to], o.MinSegment); ok && q > bestQ {
				best, bestQ, bestSeg = s.from+tau, q, k
			}
		}
		if best < 0 {
			return cuts
		}
		s := segs[bestSeg]
		if significance(z[s.from:s.to], o) > o.AlphaPct/100 {
			return cuts
		}
		cuts = append(cuts, best)
		segs = append(segs[:bestSeg], append([]segment{{s.from, best}, {best, s.to}}, segs[bestSeg+1:]...)...)
	}
}

// significance is the permutation test's p-value of a segment's best split: how often
// shuffled points split better.
func significance(z []float64, o ChangePointOptions) float64 {
	_, q, ok := bestSplit(z, o.MinSegment)
	if !ok {
		return 1
	}
	// the same segment gets the same shuffles whoever asks
	h := uint64(len(z))
	for _, v := range z {
		h = h*1099511628211 ^ math.Float64bits(v)
	}
	rng := rand.New(rand.NewPCG(o.Seed, h))
	perm := slices.Clone(z)
	above := 0
	for range o.Permutations {
		rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		if _, qp, _ := bestSplit(perm, o.MinSegment); qp >= q {
			above++
		}
	}
	return float64(1+above) / float64(1+o.Permutations)
}

// bestSplit is the split τ of z (z[:τ] before, z[τ:] after) with the largest scaled
// energy distance Q, each side at least min points; ok false when z is too short.
func bestSplit(z []float64, minSeg int) (tau int, q float64, ok bool) {
	n := len(z)
	if n < 2*minSeg {
		return 0, 0, false
	}
	// left[t] = Σ_{j<t} |z_t − z_j|, right[t] = Σ_{j>t} |z_t − z_j|: every sum the
	// statistic needs at every split follows from them (O(n) memory, no matrix)
	left, right := make([]float64, n), make([]float64, n)
	for t := range n {
		for j := range t {
			d := math.Abs(z[t] - z[j])
			left[t] += d
			right[j] += d
		}
	}
	// within the points before t, and from t on
	withinBefore := make([]float64, n+1)
	for t := 1; t <= n; t++ {
		withinBefore[t] = withinBefore[t-1] + left[t-1]
	}
	withinAfter := make([]float64, n+1)
	for t := n - 1; t >= 0; t-- {
		withinAfter[t] = withinAfter[t+1] + right[t]
	}
	q = math.Inf(-1)
	// between(t) = Σ_{i<t≤j} |z_i − z_j|; moving t to t+1 takes point t from after to before
	between := right[0]
	for t := 1; t < minSeg; t++ {
		between += right[t] - left[t]
	}
	for t := minSeg; t <= n-minSeg; t++ {
		if t > minSeg {
			between += right[t-1] - left[t-1]
		}
		m, k := float64(t), float64(n-t)
		e := 2*between/(m*k) - withinBefore[t]/(m*(m-1)/2) - withinAfter[t]/(k*(k-1)/2)
		if s := m * k / (m + k) * e; s > q {
			q, tau = s, t
		}
	}
	return tau, q, true
}

// changeAt is a convenience for tests and reports: the change points' indices.
func (s *Segmentation) changeAt() []int {
	var out []int
	for _, c := range s.ChangePoints {
		out = append(out, c.Index)
	}
	return slices.SortedFunc(slices.Values(out), cmp.Compare[int])
}
