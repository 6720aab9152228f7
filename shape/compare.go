package shape

import (
	"fmt"
	"math"
	"slices"

	"github.com/warmstat/warmstat/seed"
)

// A Difference is where one shape strays from another beyond the tolerance of a
// regenerated catalog.
type Difference struct {
	Where string // collection, collection.attribute, collection.reference ...
	What  string // the figure
	Got   string // in the shape compared
	Want  string // in the reference shape
	Limit string // the tolerance it broke
}

// Tolerances of Compare: how far the shape of a catalog generated from a shape may stray
// from it and still be that shape. Counts are exact. A share (presence, grouping) may
// differ by 0.03 or 3.5 binomial standard errors, whichever is larger. A quantile may
// differ by the figure's tolerance below, or by 3.5 standard errors of its rank (the
// median of 400 values is known to ±2.5 % of them, whatever the values). Counts and
// lengths per entity (references, prices, value lengths) by 5 % or 1 at the median and
// the 90th percentile, their mean by 10 %. A fan-in by 15 % or 3 there (a target's fan-in is
// drawn, so a small one carries Poisson noise), its largest by 25 % or 3. Distinct values
// by 10 % (for values that rarely repeat, their number per value: it follows presence). Associated-data sizes (log-normal, a 95th percentile twenty times the median)
// by 20 %: their quantiles' own sampling error on a thousand values is about 8 %.
// Distributions of fewer than 50 values are not compared, and the lengths of an attribute
// with fewer than 20 distinct values only by their range (the shape keeps how many
// values there are, not how often each is used).
const (
	shareAbs  = 0.03
	countRel  = 0.05
	fanRel    = 0.15
	fanAbs    = 3
	topRel    = 0.25
	uniqueRel = 0.10
	bytesRel  = 0.20
	minValues = 50
)

func near(a, b, rel, abs float64) bool {
	return math.Abs(a-b) <= abs || math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))
}

// distDifference compares two distributions at the median, the 90th percentile and the
// mean ("" when within).
func distDifference(got, want *seed.Dist, rel, abs float64) (what, g, w string) {
	if (got == nil) != (want == nil) {
		return "distribution", fmt.Sprint(got != nil), fmt.Sprint(want != nil)
	}
	if want == nil || want.N < minValues || got.N < minValues {
		return "", "", ""
	}
	for _, k := range []int{5, 7} {
		if !near(got.Q[k], want.Q[k], rel, abs) && !rankNear(got, want, k) {
			return fmt.Sprintf("p%g", seed.QuantileLevels[k]*100), fmt.Sprint(got.Q[k]), fmt.Sprint(want.Q[k])
		}
	}
	if !near(got.Mean, want.Mean, 2*rel, abs) {
		return "mean", fmt.Sprint(got.Mean), fmt.Sprint(want.Mean)
	}
	return "", "", ""
}

// rankNear: got's quantile k falls, in want's distribution, within 3.5 standard errors
// of the level it stands for — the sampling error of a quantile measured on N values
// (its rank varies by sqrt(p(1-p)/N)), on both sides. A few hundred values measure a
// 90th percentile only to a few percent of the values, which no fixed share says.
func rankNear(got, want *seed.Dist, k int) bool {
	p := seed.QuantileLevels[k]
	u := cdf(want, got.Q[k])
	return math.Abs(u-p) <= 3.5*math.Sqrt(p*(1-p)*(1/float64(got.N)+1/float64(want.N)))
}

// cdf is the share of a distribution at or below v, linear between its quantile levels
// (a value on a flat stretch counts at the stretch's middle).
func cdf(d *seed.Dist, v float64) float64 {
	levels := seed.QuantileLevels
	if v < d.Q[0] {
		return 0
	}
	if v >= d.Q[len(d.Q)-1] {
		return 1
	}
	lo, hi := -1, -1
	for i, q := range d.Q {
		if q <= v {
			lo = i
		}
		if q >= v && hi < 0 {
			hi = i
		}
	}
	if d.Q[hi] == d.Q[lo] { // v is a measured value held over several levels
		first := lo
		for first > 0 && d.Q[first-1] == v {
			first--
		}
		return (levels[first] + levels[lo]) / 2
	}
	return levels[lo] + (levels[hi]-levels[lo])*(v-d.Q[lo])/(d.Q[hi]-d.Q[lo])
}

func presenceOf(absent bool, share float64) float64 {
	switch {
	case absent:
		return 0
	case share == 0:
		return 1
	}
	return share
}

func shareLimit(p float64, n int64) float64 {
	if n <= 0 {
		return shareAbs
	}
	return max(shareAbs, 3.5*math.Sqrt(p*(1-p)/float64(n)))
}

// Compare lists where shape got strays from shape want beyond the tolerances above:
// got is typically the shape of a catalog generated from want at want's scale.
func Compare(got, want *seed.Profile) []Difference {
	var d differences
	if got.Measured != nil && want.Measured != nil && got.Measured.Scale != want.Measured.Scale {
		d.add("catalog", "source scale", fmt.Sprint(got.Measured.Scale), fmt.Sprint(want.Measured.Scale), "equal")
	}
	for _, cw := range want.Collections {
		cg, ok := named(got.Collections, cw.Name, func(c seed.Collection) string { return c.Name })
		if !ok {
			d.add(cw.Name, "collection", "missing", "present", "")
			continue
		}
		d.collection(cg, cw)
	}
	return d.out
}

// differences collects Compare's findings, in the order of the wanted profile.
type differences struct{ out []Difference }

func (d *differences) add(where, what, g, w, limit string) {
	d.out = append(d.out, Difference{Where: where, What: what, Got: g, Want: w, Limit: limit})
}

// dist adds a distribution that differs by more than rel (relative) or abs.
func (d *differences) dist(where, what string, g, w *seed.Dist, rel, abs float64) {
	if f, gs, ws := distDifference(g, w, rel, abs); f != "" {
		d.add(where, what+" "+f, gs, ws, fmt.Sprintf("%g %% or %g", rel*100, abs))
	}
}

// collection compares one collection found in both profiles: its counts, attributes,
// entanglement, references, prices, associated data and locales.
func (d *differences) collection(cg, cw seed.Collection) {
	switch {
	case cg.MeasuredOn != cw.MeasuredOn:
		d.add(cw.Name, "entities measured", fmt.Sprint(cg.MeasuredOn), fmt.Sprint(cw.MeasuredOn), "exact")
	case cg.Count != cw.Count:
		d.add(cw.Name, "entities at scale 1", fmt.Sprint(cg.Count), fmt.Sprint(cw.Count), "exact")
	}
	d.attrs(cw.Name, cg.Attributes, cw.Attributes)
	// back-references met per entity are the sum over targets of f(f-1)/2 for each
	// target's fan-in f (whatever the order), so they follow the largest fan-ins
	if ew := cw.Entangled; ew != nil {
		switch eg := cg.Entangled; {
		case eg == nil:
			d.add(cw.Name, "back-references scanned per entity", "none", fmt.Sprint(ew.ScannedPerEntity), "25 %")
		case !near(eg.ScannedPerEntity, ew.ScannedPerEntity, topRel, fanAbs):
			d.add(cw.Name, "back-references scanned per entity", fmt.Sprint(eg.ScannedPerEntity), fmt.Sprint(ew.ScannedPerEntity), "25 % or 3")
		}
	}
	for _, rw := range cw.References {
		d.reference(cw.Name, cg, rw)
	}
	if cw.Prices != nil && cg.Prices != nil {
		d.dist(cw.Name, "prices per entity", cg.Prices.PerEntity, cw.Prices.PerEntity, countRel, 1)
	}
	for _, dw := range cw.AssociatedData {
		where := cw.Name + "." + dw.Name
		dg, ok := named(cg.AssociatedData, dw.Name, func(d seed.AssociatedData) string { return d.Name })
		if !ok {
			d.add(where, "associated data", "missing", "present", "")
			continue
		}
		pw, pg := presenceOf(dw.Absent, dw.Share), presenceOf(dg.Absent, dg.Share)
		if !near(pg, pw, 0, shareAbs) {
			d.add(where, "presence", fmt.Sprint(pg), fmt.Sprint(pw), "0.03")
			continue
		}
		d.dist(where, "bytes", dg.Bytes, dw.Bytes, bytesRel, 2)
	}
	d.dist(cw.Name, "locales per entity", cg.LocalesPerEntity, cw.LocalesPerEntity, 0, 0)
}

// reference compares one wanted reference of a collection with the one measured: its
// count per entity, its fan-in, its grouping and its attributes.
func (d *differences) reference(collection string, cg seed.Collection, rw seed.Reference) {
	where := collection + "." + rw.Name
	rg, ok := named(cg.References, rw.Name, func(r seed.Reference) string { return r.Name })
	if !ok {
		d.add(where, "reference", "missing", "present", "")
		return
	}
	d.dist(where, "per entity", rg.PerEntity, rw.PerEntity, countRel, 1)
	if rw.FanIn != nil && rg.FanIn != nil {
		d.dist(where, "fan-in", &rg.FanIn.Dist, &rw.FanIn.Dist, fanRel, fanAbs)
		if len(rw.FanIn.Top) > 0 && len(rg.FanIn.Top) > 0 && !near(float64(rg.FanIn.Top[0]), float64(rw.FanIn.Top[0]), topRel, fanAbs) {
			d.add(where, "largest fan-in", fmt.Sprint(rg.FanIn.Top[0]), fmt.Sprint(rw.FanIn.Top[0]), "25 % or 3")
		}
	}
	if !near(rg.GroupedShare, rw.GroupedShare, 0, shareAbs) {
		d.add(where, "grouped share", fmt.Sprint(rg.GroupedShare), fmt.Sprint(rw.GroupedShare), "0.03")
	}
	d.attrs(where, rg.Attributes, rw.Attributes)
}

// attrs compares the wanted attributes of an owner (a collection or a reference) with
// those measured: presence, then lengths and distinct values.
func (d *differences) attrs(owner string, gs, ws []seed.Attribute) {
	for _, w := range ws {
		where := owner + "." + w.Name
		g, ok := named(gs, w.Name, func(a seed.Attribute) string { return a.Name })
		if !ok {
			d.add(where, "attribute", "missing", "present", "")
			continue
		}
		pw, pg := presenceOf(w.Absent, w.Share), presenceOf(g.Absent, g.Share)
		var n int64
		if w.Lengths != nil {
			n = w.Lengths.N
		}
		switch {
		case !near(pg, pw, 0, shareLimit(pw, n)):
			d.add(where, "presence", fmt.Sprint(pg), fmt.Sprint(pw), fmt.Sprintf("%.3g", shareLimit(pw, n)))
		case w.Absent || g.Absent:
		case w.Distinct < 20 && w.Lengths.N > 2*w.Distinct:
			if g.Lengths.Q[0] < w.Lengths.Q[0] || g.Lengths.Q[len(g.Lengths.Q)-1] > w.Lengths.Q[len(w.Lengths.Q)-1] {
				d.add(where, "lengths range", fmt.Sprint(g.Lengths.Q[0], "-", g.Lengths.Q[len(g.Lengths.Q)-1]),
					fmt.Sprint(w.Lengths.Q[0], "-", w.Lengths.Q[len(w.Lengths.Q)-1]), "within")
			}
		default:
			d.dist(where, "lengths", g.Lengths, w.Lengths, countRel, 1)
			// values that rarely repeat: distinct per value, whose count follows the
			// presence; values that repeat: the number of them
			gd, wd, what := float64(g.Distinct), float64(w.Distinct), "distinct values"
			if w.Distinct*2 >= w.Lengths.N && g.Lengths.N > 0 {
				gd, wd, what = gd/float64(g.Lengths.N), wd/float64(w.Lengths.N), "distinct values per value"
			}
			if w.Lengths.N >= minValues && !near(gd, wd, uniqueRel, 0) && !near(float64(g.Distinct), float64(w.Distinct), 0, 1) {
				d.add(where, what, fmt.Sprintf("%.3g", gd), fmt.Sprintf("%.3g", wd), "10 %")
			}
		}
	}
}

// named is the element of xs with the given name.
func named[T any](xs []T, name string, nameOf func(T) string) (T, bool) {
	i := slices.IndexFunc(xs, func(x T) bool { return nameOf(x) == name })
	if i < 0 {
		var zero T
		return zero, false
	}
	return xs[i], true
}
