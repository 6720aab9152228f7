package shape

import (
	"math"
	"slices"

	"github.com/axiomhq/hyperloglog"
	"github.com/warmstat/warmstat/seed"
)

// counts is an exact histogram of small whole numbers (a count per entity, a length):
// value -> how often it was seen.
type counts map[int64]int64

func (c counts) add(v int64) { c[v]++ }

// dist is the histogram as a seed.Dist: the mean and the nearest-rank quantile at each
// level (the least value with at least that share of the observations at or below it).
func (c counts) dist() *seed.Dist {
	d := &seed.Dist{Q: make([]float64, len(seed.QuantileLevels))}
	values := make([]int64, 0, len(c))
	var sum, squares float64
	for v, n := range c {
		values = append(values, v)
		d.N += n
		sum += float64(v) * float64(n)
		squares += float64(v) * float64(v) * float64(n)
	}
	if d.N == 0 {
		return d
	}
	slices.Sort(values)
	mean := sum / float64(d.N)
	d.Mean = round(mean)
	d.SD = round(math.Sqrt(max(0, squares/float64(d.N)-mean*mean)))
	var seen int64
	k := 0
	for i, p := range seed.QuantileLevels {
		rank := max(1, int64(math.Ceil(p*float64(d.N))))
		for seen+c[values[k]] < rank {
			seen += c[values[k]]
			k++
		}
		d.Q[i] = float64(values[k])
	}
	d.Mean = min(max(d.Mean, d.Q[0]), d.Q[len(d.Q)-1]) // rounding must not leave the range
	return d
}

// round keeps four significant digits: a shape's figures are measurements, and fewer
// digits keep a figure from matching a value of the catalog by accident.
func round(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	scale := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*scale) / scale
}

// distinct estimates the number of distinct values: exact for small sets, HyperLogLog
// (github.com/axiomhq/hyperloglog: sparse below a few thousand values, about 1 % above,
// a few KiB however many values) for large ones. It holds hashes only, never a value.
type distinct struct{ sk *hyperloglog.Sketch }

func newDistinct() *distinct { return &distinct{sk: hyperloglog.New14()} }

func (d *distinct) add(value []byte) { d.sk.Insert(value) }

func (d *distinct) estimate() int64 { return int64(d.sk.Estimate()) }
