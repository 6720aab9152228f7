package seed

import (
	"math"
	"math/rand/v2"
	"sort"
)

// What the generator does with a measured shape's distributions (warmstat shape): a
// count or a size is drawn from its Dist, and the targets of a reference are drawn so
// that their fan-in follows the measured one. A hand-written profile has none of these
// fields, and the generator's parametric draws (Poisson, log-normal, Zipf) stand.

// Sample draws a value from the distribution: a uniform probability mapped through the
// quantile function, linear between the measured levels.
func (d *Dist) Sample(rng *rand.Rand) float64 { return d.Quantile(rng.Float64()) }

// Quantile is the value at probability u in [0, 1], linear between the measured levels.
func (d *Dist) Quantile(u float64) float64 {
	levels := QuantileLevels
	if u <= 0 {
		return d.Q[0]
	}
	j := sort.SearchFloat64s(levels, u) // levels[j-1] < u <= levels[j]
	if j >= len(levels) {
		return d.Q[len(d.Q)-1]
	}
	lo, hi := levels[j-1], levels[j]
	a, b, x := d.Q[j-1], d.Q[j], (u-lo)/(hi-lo)
	if a > 0 && b > a { // geometric between positive levels: a size's tail is convex, a chord would fatten it
		return a * math.Pow(b/a, x)
	}
	return a + (b-a)*x
}

// count draws a whole count from the distribution: the value's integer part, plus one
// with the probability of its fraction, so that the mean of the draws is the mean of
// the interpolated quantile function rather than a rounding's.
func (d *Dist) count(rng *rand.Rand) int {
	v := d.Sample(rng)
	n := math.Floor(v)
	if rng.Float64() < v-n {
		n++
	}
	return int(n)
}

// fanInWeights gives each of n targets a weight drawn from the measured fan-in: the
// targets' probabilities are spread evenly over [0, 1] (stratified, so that even a few
// targets follow the distribution), the share of targets nobody referenced gets weight 0,
// and the rest take the fan-in distribution's quantile, the largest at the top. The ranks
// are shuffled by the seed, so a popular target is not always the first. Drawing a
// reference's target with these weights gives every target an expected fan-in of its
// weight at any scale: the fan-in of production's dimension entities is kept per target,
// not divided with the catalog (a small catalog has fewer targets, so only its extreme
// tail is cut).
func fanInWeights(f *FanIn, n int, rng *rand.Rand) []float64 {
	unreferenced := 0.0
	if f.Targets > 0 {
		unreferenced = 1 - float64(f.Referenced)/float64(f.Targets)
	}
	// A measured fan-in is a draw too: a target that drew w references on average
	// shows w plus Poisson noise. Drawing again from the measured values would add that
	// noise twice, so the spread around the mean is shrunk to the part the noise does
	// not explain (variance - mean): a uniform reference keeps its mean, a hub its size.
	mean, shrink := f.Dist.Mean, 1.0
	if v := f.Dist.SD * f.Dist.SD; v > 0 {
		shrink = math.Sqrt(max(0, 1-mean/v))
	}
	denoise := func(x float64) float64 { return max(0, mean+(x-mean)*shrink) }
	w := make([]float64, n)
	for i := range w {
		u := (float64(i) + 0.5) / float64(n)
		if u < unreferenced {
			continue
		}
		w[i] = denoise(f.Dist.Quantile((u - unreferenced) / (1 - unreferenced)))
	}
	// the largest few were measured one by one (Top): the top ranks take them, a rank
	// at this scale standing for Targets/n ranks of the measured catalog
	of := f.Targets
	if of == 0 {
		of = f.Referenced
	}
	for j := 0; j < n && len(f.Top) > 0; j++ {
		r := (float64(j)+0.5)*float64(of)/float64(n) - 0.5 // the measured rank, 0 the largest
		if r > float64(len(f.Top)-1) {
			break
		}
		lo := int(math.Max(0, math.Floor(r)))
		hi := min(lo+1, len(f.Top)-1)
		w[n-1-j] = denoise(float64(f.Top[lo]) + (float64(f.Top[hi])-float64(f.Top[lo]))*(math.Max(r, 0)-float64(lo)))
	}
	rng.Shuffle(n, func(i, j int) { w[i], w[j] = w[j], w[i] })
	return w
}

// cumulative is a weight table's running sum, normalised: a uniform draw's index by
// binary search. All-zero weights fall back to uniform.
func cumulative(w []float64) []float64 {
	cdf := make([]float64, len(w))
	sum := 0.0
	for i, x := range w {
		sum += x
		cdf[i] = sum
	}
	if sum == 0 {
		for i := range cdf {
			cdf[i] = float64(i+1) / float64(len(cdf))
		}
		return cdf
	}
	for i := range cdf {
		cdf[i] /= sum
	}
	return cdf
}
