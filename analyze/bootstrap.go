package analyze

import (
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// resampleSet is what it takes to redraw a statistic of a with-replacement resample
// of one run's samples: the SD for the mean, and for each quantile the sorted values
// of the ranks a resample can plausibly pick. The k-th order statistic of a resample
// of n is x[floor(n*U)], U ~ Beta(k+1, n-k), whose SD is about sqrt(p(1-p)/n); a
// window of ±8 SD (plus slack) around rank k holds it except with negligible
// probability, so no run is ever fully sorted.
type resampleSet struct {
	n       int
	sd      float64
	windows map[Metric]window
}

type window struct {
	lo     int     // rank of sorted[0]
	sorted []int64 // the values of ranks lo .. lo+len-1, ascending
}

func newResampleSet(v []int64, q Quantiles) resampleSet {
	n := len(v)
	rs := resampleSet{n: n, sd: sampleSD(v), windows: map[Metric]window{}}
	if n == 0 {
		return rs
	}
	type span struct{ lo, hi int }
	spans := map[Metric]span{}
	prev := -1
	overlap := n < 8192 // small runs: one sort is cheap, and windows may overlap
	for _, m := range []Metric{metricMedian, metricP95, metricP99} {
		p := quantileOf[m] / 100
		k, _ := rank(n, quantileOf[m], q)
		half := int(8*math.Sqrt(p*(1-p)*float64(n))) + 3
		sp := span{max(0, k-half), min(n-1, k+half)}
		overlap = overlap || sp.lo <= prev
		prev = sp.hi
		spans[m] = sp
	}
	if overlap {
		sorted := slices.Clone(v)
		slices.Sort(sorted)
		for m, sp := range spans {
			rs.windows[m] = window{lo: sp.lo, sorted: sorted[sp.lo : sp.hi+1]}
		}
		return rs
	}
	from := 0 // v[:from] holds the smallest ranks already placed
	for _, m := range []Metric{metricMedian, metricP95, metricP99} {
		sp := spans[m]
		if sp.lo > from {
			selectNth(v[from:], sp.lo-from)
		}
		if sp.hi > sp.lo {
			selectNth(v[sp.lo+1:], sp.hi-sp.lo-1)
		}
		w := slices.Clone(v[sp.lo : sp.hi+1])
		slices.Sort(w)
		rs.windows[m] = window{lo: sp.lo, sorted: w}
		from = sp.hi + 1
	}
	return rs
}

// bootstrap is a percentile interval of mean(log θ_B*) - mean(log θ_A*): runs are
// resampled with replacement; with the two-stage method each resampled run's
// statistic is then redrawn from its own with-replacement resampling distribution.
func (c *Comparison) bootstrap(coll string, m Metric, ra, rb []runData, ia, ib []int, rng *rand.Rand) (float64, float64) {
	within := c.Options.Method == methodTwoStage && slices.Contains(latencyMetrics, m)
	da := drawers(ra, ia, coll, m, within, c.Options.Quantiles)
	db := drawers(rb, ib, coll, m, within, c.Options.Quantiles)
	side := func(d []drawer) float64 {
		s := 0.0
		for range d {
			s += d[rng.IntN(len(d))].draw(rng)
		}
		return s / float64(len(d))
	}
	B := c.Options.Resamples
	diffs := make([]float64, B)
	for i := range diffs {
		diffs[i] = side(db) - side(da)
	}
	slices.Sort(diffs)
	return diffs[int(math.Floor(0.025*float64(B-1)))], diffs[int(math.Ceil(0.975*float64(B-1)))]
}

// drawer draws the log statistic of one run, either fixed (cluster bootstrap, or a
// per-run clock) or as the statistic of one with-replacement resample of the run's
// samples, without materializing the resample.
type drawer struct {
	logPoint float64
	fixed    bool
	n        int
	mean     bool
	point    float64
	seMean   float64 // sd/sqrt(n): the mean of a resample is normal by the CLT
	win      window
	a, b     float64 // a quantile of a resample is x[floor(n*U)], U ~ Beta(a, b)
	mu, sdU  float64 // normal approximation of that Beta for large n
}

var quantileOf = map[Metric]float64{metricMedian: 50, metricP95: 95, metricP99: 99}

func drawers(runs []runData, idx []int, coll string, m Metric, within bool, q Quantiles) []drawer {
	out := make([]drawer, len(idx))
	for i, k := range idx {
		v := figureOf(runs[k].sum, coll, m).ns
		d := drawer{logPoint: math.Log(v), point: v, fixed: true}
		if set, ok := runs[k].samples[coll]; within && ok && set.n > 0 {
			n := set.n
			d.fixed, d.n = false, n
			if m == metricMean {
				d.mean, d.seMean = true, set.sd/math.Sqrt(float64(n))
			} else {
				kth, _ := rank(n, quantileOf[m], q)
				d.win = set.windows[m]
				d.a, d.b = float64(kth+1), float64(n-kth)
				d.mu = d.a / (d.a + d.b)
				d.sdU = math.Sqrt(d.mu * (1 - d.mu) / (d.a + d.b + 1))
			}
		}
		out[i] = d
	}
	return out
}

func (d *drawer) draw(rng *rand.Rand) float64 {
	if d.fixed {
		return d.logPoint
	}
	n := d.n
	if d.mean {
		return math.Log(math.Max(d.point+rng.NormFloat64()*d.seMean, 1))
	}
	var u float64
	if n >= 1000 {
		u = d.mu + rng.NormFloat64()*d.sdU
	} else {
		u = distuv.Beta{Alpha: d.a, Beta: d.b, Src: rng}.Rand()
	}
	i := int(math.Floor(float64(n)*u)) - d.win.lo
	i = max(0, min(len(d.win.sorted)-1, i)) // outside the ±8 SD window: clamp (negligible)
	return math.Log(math.Max(float64(d.win.sorted[i]), 1))
}

func sampleSD(x []int64) float64 {
	if len(x) < 2 {
		return 0
	}
	m := 0.0
	for _, v := range x {
		m += float64(v)
	}
	m /= float64(len(x))
	s := 0.0
	for _, v := range x {
		s += (float64(v) - m) * (float64(v) - m)
	}
	return math.Sqrt(s / float64(len(x)-1))
}
