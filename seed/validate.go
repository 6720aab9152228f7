package seed

import (
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/warmstat/warmstat/base/strictjson"
)

// ProfileError is a problem at a known place in a profile: file:line: field: message,
// one line ("profile" stands for the file of a profile built in code).
type ProfileError = strictjson.Error

// LoadProfile reads a JSON profile (same shape as DefaultProfile; see `warmstat seed
// --print-profile`) and validates all of it: unknown fields, wrong types and every
// rule of Validate are refused with the file, line and field, before any server is
// touched.
func LoadProfile(path string) (*Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseProfile(path, data)
}

// parseProfile is LoadProfile of a file's bytes; name stands for the file in errors.
func parseProfile(path string, data []byte) (*Profile, error) {
	var p Profile
	lines, err := strictjson.Decode(path, data, &p)
	if err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		var pe *ProfileError
		if errors.As(err, &pe) {
			pe.File, pe.Line = path, lines.At(pe.Field)
		}
		return nil, err
	}
	return &p, nil
}

// ---- semantic rules

var (
	kinds         = []string{"string", "text", "int", "long", "bool", "decimal", "datetime", "range"}
	cardinalities = []string{"zero-or-one", "exactly-one", "zero-or-more", "one-or-more"}
	indexes       = []string{"filtering", "partitioning"}
	identifier    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*$`)
	languageTag   = regexp.MustCompile(`^[a-zA-Z]{2,3}(-[A-Za-z0-9]{2,8})*$`)
	currencyCode  = regexp.MustCompile(`^[A-Z]{3}$`)
)

type checker struct{ err *ProfileError }

// fail records the first problem only: one line, the first place to fix.
func (c *checker) fail(field, format string, args ...any) {
	if c.err == nil {
		c.err = &ProfileError{File: "profile", Field: field, Msg: fmt.Sprintf(format, args...)}
	}
}

func oneOf(v string, allowed []string) bool { return slices.Contains(allowed, v) }

// Validate checks everything seeding relies on, so that a profile is refused before a
// catalog is created: names, kinds, cardinalities against the generated counts,
// index levels, targets and groups, reflected references, shares and sizes.
// Expressions (conditional facets, histograms) are only checked for presence: their
// language is the server's, which judges them when the schema is created, before any
// entity is written.
func (p *Profile) Validate() error {
	var c checker
	p.checkHeader(&c)
	names := p.checkCollectionNames(&c)
	reflected := map[string]map[string]string{} // target collection -> reflected name -> owner
	for i, col := range p.Collections {
		at := fmt.Sprintf("collections[%d]", i)
		p.checkAttributes(&c, at+".attributes", col.Name, col.Attributes, false)
		checkAssociatedData(&c, at, col)
		p.checkPrices(&c, at, col)
		refNames := map[string]bool{}
		for k, r := range col.References {
			p.checkReference(&c, fmt.Sprintf("%s.references[%d]", at, k), col, r, names, refNames, reflected)
		}
	}
	p.checkReflections(&c, reflected)
	if c.err != nil {
		return c.err
	}
	return nil
}

// checkHeader checks what the profile says of itself: its format, the measurement it
// came from, its locales and currencies.
func (p *Profile) checkHeader(c *checker) {
	if p.Format != "" && p.Format != ShapeV1 {
		c.fail("format", "%q is not a format this warmstat reads (%s; a later version is a newer warmstat's)", p.Format, ShapeV1)
	}
	if m := p.Measured; m != nil && !(m.Scale > 0 && m.Scale <= 10) {
		c.fail("measured.scale", "scale %g: a source's scale is above 0 and at most 10", m.Scale)
	}
	if m := p.Measured; m != nil && m.LiveHeapBytes != nil && *m.LiveHeapBytes < 16<<20 {
		c.fail("measured.live_heap_bytes", "%d: a server holding a catalog holds at least 16 MiB", *m.LiveHeapBytes)
	}
	if m := p.Measured; m != nil && m.LiveHeapBytes != nil && m.Entities <= 0 {
		c.fail("measured.entities", "%d: a measured live heap needs the entities it was measured with", m.Entities)
	}
	if m := p.Measured; m != nil && m.Entities < 0 {
		c.fail("measured.entities", "negative count %d", m.Entities)
	}
	if len(p.Locales) == 0 {
		c.fail("locales", "at least one locale is needed")
	}
	for i, l := range p.Locales {
		if !languageTag.MatchString(l) || slices.Index(p.Locales, l) != i {
			c.fail(fmt.Sprintf("locales[%d]", i), "%q is not a language tag, or repeats one", l)
		}
	}
	for i, cur := range p.Currencies {
		if !currencyCode.MatchString(cur) || slices.Index(p.Currencies, cur) != i {
			c.fail(fmt.Sprintf("currencies[%d]", i), "%q is not a three-letter currency code, or repeats one", cur)
		}
	}
}

// checkCollectionNames checks each collection's name, count and shape figures, before
// any reference can name one; names is the set of collections defined.
func (p *Profile) checkCollectionNames(c *checker) (names map[string]bool) {
	if len(p.Collections) == 0 {
		c.fail("collections", "no collections")
	}
	names = map[string]bool{}
	for i, col := range p.Collections {
		at := fmt.Sprintf("collections[%d]", i)
		switch {
		case !identifier.MatchString(col.Name):
			c.fail(at+".name", "%q is not a collection name (letters and digits, starting with a letter)", col.Name)
		case names[col.Name]:
			c.fail(at+".name", "collection %s is defined twice", col.Name)
		case col.Count < 1:
			c.fail(at+".count", "%s: count %d; a collection has at least one entity at scale 1", col.Name, col.Count)
		case col.MeasuredOn < 0:
			c.fail(at+".measured_on", "%s: negative measured_on %d", col.Name, col.MeasuredOn)
		}
		if e := col.Entangled; e != nil && (e.ApplicationsPerEntity < 0 || e.ScannedPerApplication < 0 || e.ScannedPerEntity < 0) {
			c.fail(at+".entangled", "%s: a negative count", col.Name)
		}
		checkDist(c, at+".locales_per_entity", col.Name, col.LocalesPerEntity)
		checkDist(c, at+".hierarchy_depth", col.Name, col.HierarchyDepth)
		checkDist(c, at+".hierarchy_children", col.Name, col.HierarchyChildren)
		names[col.Name] = true
	}
	return names
}

// checkAssociatedData checks a collection's associated data: names, sizes, shares.
func checkAssociatedData(c *checker, at string, col Collection) {
	seenData := map[string]bool{}
	for k, d := range col.AssociatedData {
		dat := fmt.Sprintf("%s.associated_data[%d]", at, k)
		switch {
		case !identifier.MatchString(d.Name) || seenData[d.Name]:
			c.fail(dat+".name", "%s: %q is not a name, or repeats one", col.Name, d.Name)
		case d.MedianBytes < 1 || d.P95Bytes < d.MedianBytes || d.MaxBytes < d.MedianBytes:
			c.fail(dat, "%s.%s: sizes need 1 <= median_bytes <= p95_bytes and median_bytes <= max_bytes (got %d, %d, %d)",
				col.Name, d.Name, d.MedianBytes, d.P95Bytes, d.MaxBytes)
		case !share(d.Share):
			c.fail(dat+".share", "%s.%s: share %g is not in [0, 1]", col.Name, d.Name, d.Share)
		}
		checkDist(c, dat+".bytes", col.Name+"."+d.Name, d.Bytes)
		seenData[d.Name] = true
	}
}

// checkPrices checks a collection's prices, which need the profile's currencies.
func (p *Profile) checkPrices(c *checker, at string, col Collection) {
	pr := col.Prices
	if pr == nil {
		return
	}
	pat := at + ".prices"
	switch {
	case len(p.Currencies) == 0:
		c.fail("currencies", "%s has prices but the profile names no currency", col.Name)
	case pr.Mean <= 0 || pr.Max < 1:
		c.fail(pat, "%s: prices need mean > 0 and max >= 1", col.Name)
	case pr.Lists < 1:
		c.fail(pat+".lists", "%s: at least one price list", col.Name)
	}
	for _, sh := range []struct {
		name string
		v    float64
	}{{"indexed_share", pr.IndexedShare}, {"validity_share", pr.ValidityShare}, {"inner_record_share", pr.InnerRecordShare}, {"none_share", pr.NoneShare}} {
		if !share(sh.v) {
			c.fail(pat+"."+sh.name, "%s: %s %g is not in [0, 1]", col.Name, sh.name, sh.v)
		}
	}
	checkDist(c, pat+".per_entity", col.Name+" prices", pr.PerEntity)
}

// checkReflections refuses a reflected name that shadows the target's own reference.
func (p *Profile) checkReflections(c *checker, reflected map[string]map[string]string) {
	for target, refl := range reflected {
		for name, owner := range refl {
			for i, col := range p.Collections {
				if col.Name != target {
					continue
				}
				for k, r := range col.References {
					if r.Name == name {
						c.fail(fmt.Sprintf("collections[%d].references[%d].name", i, k), "%s.%s is also the reflection of %s", target, name, owner)
					}
				}
			}
		}
	}
}

func share(v float64) bool { return v >= 0 && v <= 1 }

// checkDist refuses a measured distribution that cannot be one: a negative count or
// value, quantiles not one per level or out of order, a mean outside them.
func checkDist(c *checker, at, who string, d *Dist) {
	if d == nil {
		return
	}
	switch {
	case d.N < 0:
		c.fail(at+".n", "%s: negative count %d", who, d.N)
	case d.SD < 0 || math.IsNaN(d.SD):
		c.fail(at+".sd", "%s: standard deviation %g", who, d.SD)
	case len(d.Q) != len(QuantileLevels):
		c.fail(at+".q", "%s: %d quantiles; a distribution has one per level %v", who, len(d.Q), QuantileLevels)
	case d.N > 0 && (d.Mean < d.Q[0] || d.Mean > d.Q[len(d.Q)-1]):
		c.fail(at+".mean", "%s: mean %g outside its quantiles [%g, %g]", who, d.Mean, d.Q[0], d.Q[len(d.Q)-1])
	}
	for i, q := range d.Q {
		switch {
		case q < 0 || math.IsNaN(q) || math.IsInf(q, 0):
			c.fail(fmt.Sprintf("%s.q[%d]", at, i), "%s: quantile %g is not a count or size", who, q)
		case i > 0 && q < d.Q[i-1]:
			c.fail(fmt.Sprintf("%s.q[%d]", at, i), "%s: quantiles out of order (%g after %g)", who, q, d.Q[i-1])
		}
	}
}

func (p *Profile) checkAttributes(c *checker, at, owner string, attrs []Attribute, onReference bool) {
	seen := map[string]bool{}
	for i, a := range attrs {
		aat := fmt.Sprintf("%s[%d]", at, i)
		switch {
		case !identifier.MatchString(a.Name) || seen[a.Name]:
			c.fail(aat+".name", "%s: %q is not an attribute name, or repeats one", owner, a.Name)
		case !oneOf(a.Kind, kinds):
			c.fail(aat+".kind", "%s.%s: unknown kind %q (one of %s)", owner, a.Name, a.Kind, strings.Join(kinds, ", "))
		case !share(a.Share):
			c.fail(aat+".share", "%s.%s: share %g is not in [0, 1] (0 means every entity)", owner, a.Name, a.Share)
		case a.Length < 0:
			c.fail(aat+".length", "%s.%s: negative length", owner, a.Name)
		case a.Localized && len(p.Locales) == 0:
			c.fail(aat+".localized", "%s.%s is localized, but the profile has no locales", owner, a.Name)
		case (a.Unique || a.Global) && onReference:
			c.fail(aat, "%s.%s: reference attributes cannot be unique or global", owner, a.Name)
		case a.Unique && a.Kind != "string":
			c.fail(aat+".unique", "%s.%s: only string attributes can be unique (the generator derives them from the primary key)", owner, a.Name)
		case a.Global && (a.Kind != "string" || !a.Localized || a.Filterable || a.Sortable):
			c.fail(aat+".global", "%s.%s: a global attribute is the catalog's localized, unique string (not filterable or sortable itself)", owner, a.Name)
		case a.Sortable && a.Kind == "range":
			c.fail(aat+".sortable", "%s.%s: a range cannot be sortable", owner, a.Name)
		case len(a.Values) > 0 && a.Kind != "string":
			c.fail(aat+".values", "%s.%s: values are for string attributes", owner, a.Name)
		case len(a.Weights) > 0 && len(a.Weights) != len(a.Values):
			c.fail(aat+".weights", "%s.%s: %d weights for %d values", owner, a.Name, len(a.Weights), len(a.Values))
		case a.Distinct < 0:
			c.fail(aat+".distinct", "%s.%s: negative distinct %d", owner, a.Name, a.Distinct)
		}
		checkDist(c, aat+".lengths", owner+"."+a.Name, a.Lengths)
		for k, w := range a.Weights {
			if w <= 0 {
				c.fail(fmt.Sprintf("%s.weights[%d]", aat, k), "%s.%s: weights must be positive", owner, a.Name)
			}
		}
		seen[a.Name] = true
	}
}

func (p *Profile) checkReference(c *checker, at string, col Collection, r Reference, names, refNames map[string]bool, reflected map[string]map[string]string) {
	who := col.Name + "." + r.Name
	card := r.Cardinality
	if card == "" {
		card = "zero-or-more"
	}
	switch {
	case !identifier.MatchString(r.Name) || refNames[r.Name]:
		c.fail(at+".name", "%s: %q is not a reference name, or repeats one", col.Name, r.Name)
	case !identifier.MatchString(r.Target):
		c.fail(at+".target", "%s: %q is not an entity type", who, r.Target)
	case !oneOf(card, cardinalities):
		c.fail(at+".cardinality", "%s: unknown cardinality %q (one of %s)", who, r.Cardinality, strings.Join(cardinalities, ", "))
	case r.Index != "" && !oneOf(r.Index, indexes):
		c.fail(at+".index", "%s: unknown index %q (filtering, partitioning, or absent for none)", who, r.Index)
	case r.Min < 0 || r.Max < 1 || r.Max < r.Min:
		c.fail(at, "%s: needs 0 <= min <= max and max >= 1 (got min %d, max %d)", who, r.Min, r.Max)
	case r.Mean < 0 || r.Mean > float64(r.Max):
		c.fail(at+".mean", "%s: mean %g outside [0, max %d]", who, r.Mean, r.Max)
	case (card == "zero-or-one" || card == "exactly-one") && r.Max > 1:
		c.fail(at+".max", "%s: cardinality %s allows one reference per entity, max is %d", who, card, r.Max)
	case (card == "exactly-one" || card == "one-or-more") && r.Min < 1:
		c.fail(at+".min", "%s: cardinality %s needs min >= 1", who, card)
	case r.Zipf < 0:
		c.fail(at+".zipf", "%s: negative zipf", who)
	case r.Group != "" && !names[r.Group]:
		c.fail(at+".group", "%s groups by %q, which is not a collection", who, r.Group)
	case r.Faceted && r.Index == "":
		c.fail(at+".faceted", "%s: a faceted reference must be indexed", who)
	case r.FacetedPartially != "" && !r.Faceted:
		c.fail(at+".faceted_partially", "%s: conditional facets need faceted", who)
	case r.Histogram != nil && r.Index == "":
		c.fail(at+".histogram", "%s: a bucketed histogram needs an indexed reference", who)
	case r.Histogram != nil && (!identifier.MatchString(r.Histogram.Name) || r.Histogram.Value == ""):
		c.fail(at+".histogram", "%s: a histogram needs a name (letters and digits) and a value expression", who)
	case r.Reflected != "" && !names[r.Target]:
		c.fail(at+".target", "%s reflects into %q, which is not a collection of the profile", who, r.Target)
	case r.Reflected != "" && r.Index == "":
		c.fail(at+".reflected", "%s: a reflected reference needs an indexed original", who)
	case r.Reflected != "" && !identifier.MatchString(r.Reflected):
		c.fail(at+".reflected", "%s: %q is not a reference name", who, r.Reflected)
	case r.ReflectedIndex != "" && r.ReflectedIndex != "none" && !oneOf(r.ReflectedIndex, indexes):
		c.fail(at+".reflected_index", "%s: unknown reflected_index %q (filtering, partitioning, none, or absent to inherit)", who, r.ReflectedIndex)
	case r.ReflectedIndex != "" && r.Reflected == "":
		c.fail(at+".reflected_index", "%s: reflected_index without reflected", who)
	}
	if r.Reflected != "" {
		if reflected[r.Target] == nil {
			reflected[r.Target] = map[string]string{}
		}
		if prev, dup := reflected[r.Target][r.Reflected]; dup {
			c.fail(at+".reflected", "%s.%s already reflects %s", r.Target, r.Reflected, prev)
		}
		reflected[r.Target][r.Reflected] = who
	}
	if !share(r.GroupedShare) {
		c.fail(at+".grouped_share", "%s: share %g is not in [0, 1]", who, r.GroupedShare)
	}
	checkDist(c, at+".per_entity", who, r.PerEntity)
	if f := r.FanIn; f != nil {
		switch {
		case f.Targets < 0 || f.Referenced < 0 || (f.Targets > 0 && f.Referenced > f.Targets):
			c.fail(at+".fan_in", "%s: %d targets referenced of %d; needs 0 <= referenced <= targets (targets 0: not a collection)", who, f.Referenced, f.Targets)
		case f.TailAlpha < 0 || math.IsNaN(f.TailAlpha):
			c.fail(at+".fan_in.tail_alpha", "%s: tail index %g", who, f.TailAlpha)
		case len(f.Top) > 0 && f.Dist.N > 0 && float64(f.Top[0]) != f.Dist.Q[len(f.Dist.Q)-1]:
			c.fail(at+".fan_in.top", "%s: the largest fan-in %d is not the distribution's maximum %g", who, f.Top[0], f.Dist.Q[len(f.Dist.Q)-1])
		}
		for i := range f.Top {
			if f.Top[i] < 1 || (i > 0 && f.Top[i] > f.Top[i-1]) {
				c.fail(fmt.Sprintf("%s.fan_in.top[%d]", at, i), "%s: the top fan-ins must be positive and descending", who)
			}
		}
		checkDist(c, at+".fan_in.dist", who+" fan-in", &f.Dist)
	}
	p.checkAttributes(c, at+".attributes", who, r.Attributes, true)
	refNames[r.Name] = true
}
