// Package shape measures a catalog's shape: its schema and the distributions that decide
// the write path's cost (entities per collection; per attribute its presence, value
// lengths and distinct values; per reference the references per entity, the fan-in of
// its targets and its groups; prices, associated data, locales, hierarchy), written in
// seed's profile vocabulary so that `warmstat seed --shape` generates a catalog of that
// shape at any scale. A shape never holds a value of the catalog: no attribute value,
// associated-data content, price amount or primary key — lengths, counts and shares only.
package shape

import (
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evita/pb"
	"github.com/warmstat/warmstat/seed"
	"github.com/warmstat/warmstat/workload"
	"google.golang.org/protobuf/proto"
)

// Options of a measurement.
type Options struct {
	// From names the source's kind in the shape: workload, snapshot or server.
	From string
	// Anonymise renames the catalog, collections, attributes, references, associated
	// data and price lists consistently (see Anonymise).
	Anonymise bool
	// Progress, if set, receives a line per collection.
	Progress io.Writer
	// Now stamps the shape (tests fix it).
	Now func() time.Time
}

// values of one attribute (entity or reference attribute).
type attrStats struct {
	carriers int64 // entities (or references) carrying it, in any locale
	lengths  counts
	distinct *distinct
}

type refStats struct {
	perEntity counts
	fanIn     map[int32]int64
	refs      int64
	grouped   int64
	attrs     map[string]*attrStats
}

type collStats struct {
	entities       int64
	attrs          map[string]*attrStats
	data           map[string]*attrStats // associated data: carriers and sizes
	refs           map[string]*refStats
	locales        counts
	prices         counts
	pricesNone     int64
	priceCount     int64
	indexedPrices  int64
	validityPrices int64
	innerRecord    int64
	lists          map[string]bool
	parent         map[int32]int32
	localized      bool
	// reflectedIn names, per reference of this collection whose target holds its
	// reflected side, that target; backRefs (shared by all collections) counts the
	// back-references each target holds so far, in load order
	reflectedIn  map[string]string
	backRefs     map[string]map[int32]int64
	applications int64
	backRefsMet  int64
}

func newAttr() *attrStats { return &attrStats{lengths: counts{}, distinct: newDistinct()} }

// MeasureFile measures the workload file at path into the shape file out (never an
// existing one) and returns the shape. from names the source in an error of its
// reading, as the user named it (a snapshot or a server read into a temporary file).
func MeasureFile(path, out, from string, opt Options) (*seed.Profile, error) {
	r, err := workload.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	p, err := Measure(r, opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	return p, Write(out, p)
}

// Measure reads a whole workload and returns its catalog's shape.
func Measure(r *workload.Reader, opt Options) (*seed.Profile, error) {
	h := r.Header()
	if h.MaxPerCollection > 0 || len(h.CollectionSubset) > 0 {
		return nil, errors.New("the workload holds a part of its catalog (a subset of its collections, or a cap per collection): a shape is taken of a whole catalog")
	}
	p, notKept, err := skeleton(r.CatalogSchema(), r.EntitySchemas())
	if err != nil {
		return nil, err
	}
	stats := map[string]*collStats{}
	reflectedIn, backRefs := map[string]map[string]string{}, map[string]map[int32]int64{}
	for _, t := range r.EntitySchemas() {
		for _, back := range t.GetReferences() {
			if name := back.GetReflectedReferenceName(); name != nil {
				owner := back.GetEntityType()
				if reflectedIn[owner] == nil {
					reflectedIn[owner] = map[string]string{}
				}
				reflectedIn[owner][name.GetValue()] = t.GetName()
				backRefs[t.GetName()] = map[int32]int64{}
			}
		}
	}
	for {
		c, err := r.NextCollection()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		st := &collStats{attrs: map[string]*attrStats{}, data: map[string]*attrStats{}, refs: map[string]*refStats{},
			locales: counts{}, prices: counts{}, lists: map[string]bool{}, parent: map[int32]int32{},
			reflectedIn: reflectedIn[c.Name], backRefs: backRefs}
		stats[c.Name] = st
		for {
			pk, req, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			if err := st.entity(c.Name, pk, req); err != nil {
				return nil, err
			}
		}
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, "shape %-24s %9d entities\n", c.Name, st.entities)
		}
	}
	scale := 1.0
	if h.SnapshotScale != nil && *h.SnapshotScale > 0 {
		scale = *h.SnapshotScale
	}
	var total int64
	for i := range p.Collections {
		c := &p.Collections[i]
		st := stats[c.Name]
		if st == nil {
			return nil, fmt.Errorf("%s: in the schema but not in the workload", c.Name)
		}
		total += st.entities
		st.fill(c, stats)
		c.Count = max(1, int(math.Round(float64(st.entities)/scale)))
	}
	// a collection with no entity has nothing to generate from: the generator needs one
	p.Collections = slices.DeleteFunc(p.Collections, func(c seed.Collection) bool {
		if stats[c.Name].entities == 0 {
			notKept = append(notKept, c.Name+": no entities (left out)")
			return true
		}
		return false
	})
	now := time.Now
	if opt.Now != nil {
		now = opt.Now
	}
	p.Measured = &seed.Measured{Tool: "warmstat shape", MeasuredAt: now().UTC().Format(time.RFC3339), From: opt.From,
		Catalog: h.Catalog, SourceVersion: h.SourceVersion, Entities: total, Scale: scale, NotKept: notKept}
	if h.SnapshotLiveHeapBytes != nil && len(h.CollectionSubset) == 0 && h.MaxPerCollection == 0 {
		// the whole snapshot's live heap, measured: only a whole catalog's entities match it
		live := *h.SnapshotLiveHeapBytes
		p.Measured.LiveHeapBytes = &live
	}
	if opt.Anonymise {
		Anonymise(p)
	}
	return p, nil
}

// entity adds one upsert request to the collection's statistics.
func (st *collStats) entity(coll string, pk int32, req []byte) error {
	var u pb.GrpcUpsertEntityRequest
	if err := proto.Unmarshal(req, &u); err != nil {
		return fmt.Errorf("%s: an entity's upsert request: %v", coll, err)
	}
	st.entities++
	locales := map[string]bool{}
	// what this entity carries, each counted once however many locales carry it
	seen := map[*attrStats]bool{}
	type refAttr struct {
		ref        string
		pk, ipk    int32
		attributes *attrStats
	}
	refSeen := map[refAttr]bool{}
	perRef := map[string]int64{}
	var prices int64
	for _, m := range u.GetEntityMutation().GetEntityUpsertMutation().GetMutations() {
		switch m := m.GetMutation().(type) {
		case *pb.GrpcLocalMutation_UpsertAttributeMutation:
			a := m.UpsertAttributeMutation
			if loc := a.GetAttributeLocale().GetLanguageTag(); loc != "" {
				locales[loc] = true
				st.localized = true
			}
			s := st.attr(st.attrs, a.GetAttributeName())
			if !seen[s] {
				seen[s] = true
				s.carriers++
			}
			s.value(a.GetAttributeValue())
		case *pb.GrpcLocalMutation_UpsertAssociatedDataMutation:
			d := m.UpsertAssociatedDataMutation
			if loc := d.GetAssociatedDataLocale().GetLanguageTag(); loc != "" {
				locales[loc] = true
				st.localized = true
			}
			s := st.attr(st.data, d.GetAssociatedDataName())
			if !seen[s] {
				seen[s] = true
				s.carriers++
			}
			s.lengths.add(int64(len(d.GetAssociatedDataValue())))
		case *pb.GrpcLocalMutation_UpsertPriceMutation:
			pr := m.UpsertPriceMutation
			prices++
			st.priceCount++
			st.lists[pr.GetPriceList()] = true
			if pr.GetIndexed() {
				st.indexedPrices++
			}
			if len(pr.GetValidity()) > 0 {
				st.validityPrices++
			}
		case *pb.GrpcLocalMutation_SetPriceInnerRecordHandlingMutation:
			if m.SetPriceInnerRecordHandlingMutation.GetPriceInnerRecordHandling() != evita.InnerRecordNone {
				st.innerRecord++
			}
		case *pb.GrpcLocalMutation_SetParentMutation:
			st.parent[pk] = m.SetParentMutation.GetPrimaryKey()
		case *pb.GrpcLocalMutation_InsertReferenceMutation:
			ins := m.InsertReferenceMutation
			rs := st.ref(ins.GetReferenceName())
			rs.refs++
			rs.fanIn[ins.GetReferencePrimaryKey()]++
			perRef[ins.GetReferenceName()]++
			if target, ok := st.reflectedIn[ins.GetReferenceName()]; ok {
				held := st.backRefs[target]
				st.applications++
				st.backRefsMet += held[ins.GetReferencePrimaryKey()]
				held[ins.GetReferencePrimaryKey()]++
			}
		case *pb.GrpcLocalMutation_SetReferenceGroupMutation:
			st.ref(m.SetReferenceGroupMutation.GetReferenceName()).grouped++
		case *pb.GrpcLocalMutation_ReferenceAttributeMutation:
			ra := m.ReferenceAttributeMutation
			a := ra.GetAttributeMutation().GetUpsertAttributeMutation()
			s := st.attr(st.ref(ra.GetReferenceName()).attrs, a.GetAttributeName())
			key := refAttr{ra.GetReferenceName(), ra.GetReferencePrimaryKey(), ra.GetInternalPrimaryKey(), s}
			if !refSeen[key] {
				refSeen[key] = true
				s.carriers++
			}
			s.value(a.GetAttributeValue())
		}
	}
	st.locales.add(int64(len(locales)))
	if prices > 0 {
		st.prices.add(prices)
	} else {
		st.pricesNone++
	}
	for name, rs := range st.refs {
		rs.perEntity.add(perRef[name]) // an entity without this reference counts as 0
	}
	return nil
}

func (st *collStats) attr(m map[string]*attrStats, name string) *attrStats {
	s := m[name]
	if s == nil {
		s = newAttr()
		m[name] = s
	}
	return s
}

func (st *collStats) ref(name string) *refStats {
	rs := st.refs[name]
	if rs == nil {
		// entities read before this reference first appeared had none of it
		rs = &refStats{perEntity: counts{}, fanIn: map[int32]int64{}, attrs: map[string]*attrStats{}}
		if st.entities > 1 {
			rs.perEntity[0] = st.entities - 1
		}
		st.refs[name] = rs
	}
	return rs
}

// value records a GrpcEvitaValue's length (a string's characters, another value's
// encoded bytes) and adds it to the distinct estimate.
func (s *attrStats) value(v []byte) {
	fs, _ := fields(v)
	for _, f := range fs {
		if f.num >= 100 { // the value's type and version, not the value
			continue
		}
		if f.num == 1 {
			s.lengths.add(int64(utf8.RuneCount(f.bytes)))
		} else {
			s.lengths.add(int64(max(1, len(f.bytes))))
		}
		s.distinct.add(v)
		return
	}
}

// fill writes the statistics into the skeleton's collection.
func (st *collStats) fill(c *seed.Collection, all map[string]*collStats) {
	c.MeasuredOn = st.entities
	c.Source = "measured on " + plural(st.entities, "entity", "entities")
	if st.applications > 0 {
		c.Entangled = &seed.Entangled{ApplicationsPerEntity: round(float64(st.applications) / float64(st.entities)),
			ScannedPerApplication: round(float64(st.backRefsMet) / float64(st.applications)),
			ScannedPerEntity:      round(float64(st.backRefsMet) / float64(st.entities))}
	}
	if st.localized {
		c.LocalesPerEntity = st.locales.dist()
	}
	if c.Hierarchy {
		c.HierarchyDepth, c.HierarchyChildren = st.hierarchy()
	}
	for i := range c.Attributes {
		a := &c.Attributes[i]
		fillAttribute(a, st.attrs[a.Name], st.entities)
	}
	for i := range c.AssociatedData {
		d := &c.AssociatedData[i]
		s := st.data[d.Name]
		if s == nil || s.carriers == 0 {
			d.Absent = true
			continue
		}
		d.Share = presence(s.carriers, st.entities)
		d.Bytes = s.lengths.dist()
		d.MedianBytes = max(1, int(d.Bytes.Q[5]))
		d.P95Bytes = max(d.MedianBytes, int(d.Bytes.Q[8]))
		d.MaxBytes = max(d.MedianBytes, int(d.Bytes.Q[len(d.Bytes.Q)-1]))
	}
	if pr := c.Prices; pr != nil {
		if st.priceCount > 0 {
			pr.PerEntity = st.prices.dist()
			pr.Mean = pr.PerEntity.Mean
			pr.Max = int(pr.PerEntity.Q[len(pr.PerEntity.Q)-1])
			pr.IndexedShare = round(float64(st.indexedPrices) / float64(st.priceCount))
			pr.ValidityShare = round(float64(st.validityPrices) / float64(st.priceCount))
		} else {
			pr.Mean, pr.Max = 1, 1
		}
		pr.Lists = max(1, len(st.lists))
		pr.NoneShare = round(float64(st.pricesNone) / float64(max(1, st.entities)))
		pr.InnerRecordShare = round(float64(st.innerRecord) / float64(max(1, st.entities)))
	}
	for i := range c.References {
		st.fillReference(&c.References[i], all)
	}
}

// hierarchy is the distribution of the entities' depths (a root's is 0) and of their
// children's counts.
func (st *collStats) hierarchy() (depths, childCounts *seed.Dist) {
	kids := map[int32]int64{} // a parent's children
	for _, parent := range st.parent {
		kids[parent]++
	}
	depth, children := counts{}, counts{}
	for pk := range st.parent {
		d, at := int64(0), pk
		for range len(st.parent) + 1 { // a cycle ends at the map's size
			parent, ok := st.parent[at]
			if !ok {
				break
			}
			d, at = d+1, parent
		}
		depth.add(d)
	}
	depth[0] += st.entities - int64(len(st.parent)) // the roots
	for _, n := range kids {
		children.add(n)
	}
	children[0] += st.entities - int64(len(kids))
	return depth.dist(), children.dist()
}

// fillReference fills one reference's figures: per entity, grouped, its fan-in over
// the target collection (all: every collection's statistics) and its attributes.
func (st *collStats) fillReference(r *seed.Reference, all map[string]*collStats) {
	rs := st.refs[r.Name]
	if rs == nil {
		rs = &refStats{perEntity: counts{0: st.entities}, fanIn: map[int32]int64{}, attrs: map[string]*attrStats{}}
	}
	r.PerEntity = rs.perEntity.dist()
	r.Mean = r.PerEntity.Mean
	r.Min = int(r.PerEntity.Q[0])
	r.Max = max(1, int(r.PerEntity.Q[len(r.PerEntity.Q)-1]))
	if rs.refs > 0 && r.Group != "" { // a group the generator cannot make is in not_kept, not here
		r.GroupedShare = round(float64(rs.grouped) / float64(rs.refs))
	}
	fan := counts{}
	for _, n := range rs.fanIn {
		fan.add(n)
	}
	f := &seed.FanIn{Referenced: int64(len(rs.fanIn)), Dist: *fan.dist()}
	if t := all[r.Target]; t != nil {
		f.Targets = t.entities
	}
	top := make([]int64, 0, len(rs.fanIn))
	for _, n := range rs.fanIn {
		top = append(top, n)
	}
	slices.SortFunc(top, func(a, b int64) int { return int(b - a) })
	f.Top = top[:min(10, len(top))]
	f.TailAlpha = hill(top)
	r.FanIn = f
	for k := range r.Attributes {
		a := &r.Attributes[k]
		fillAttribute(a, rs.attrs[a.Name], rs.refs)
	}
}

// presence is a share of carriers as the profile says it: 0 means every one.
func presence(carriers, of int64) float64 {
	if of == 0 || carriers >= of {
		return 0
	}
	return max(round(float64(carriers)/float64(of)), 0.0001)
}

func fillAttribute(a *seed.Attribute, s *attrStats, of int64) {
	if s == nil || s.carriers == 0 {
		a.Absent = true
		return
	}
	a.Share = presence(s.carriers, of)
	a.Lengths = s.lengths.dist()
	a.Length = max(1, int(a.Lengths.Q[5]))
	a.Distinct = s.distinct.estimate()
}

var literal = regexp.MustCompile(`'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"`)

// scrubLiterals replaces the quoted literals of an expression (values of the catalog,
// e.g. 'CHECKBOX') with 'v1', 'v2', ... in order of first appearance. A quoted key
// (attributes['inputWidgetType']) is a name, not a value, and stays.
func scrubLiterals(expr string) string {
	seen := map[string]string{}
	var b strings.Builder
	last := 0
	for _, m := range literal.FindAllStringIndex(expr, -1) {
		b.WriteString(expr[last:m[0]])
		last = m[1]
		s := expr[m[0]:m[1]]
		if strings.HasSuffix(strings.TrimRight(expr[:m[0]], " "), "[") {
			b.WriteString(s)
			continue
		}
		v, ok := seen[s]
		if !ok {
			v = fmt.Sprintf("'v%d'", len(seen)+1)
			seen[s] = v
		}
		b.WriteString(v)
	}
	b.WriteString(expr[last:])
	return b.String()
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// hill is Hill's estimator of the Pareto index over the largest values of desc (sorted
// descending): k = max(10, 1 %) of them, against the (k+1)-th; 0 for fewer than 20
// values or a tail with no spread.
func hill(desc []int64) float64 {
	if len(desc) < 20 {
		return 0
	}
	k := max(10, len(desc)/100)
	if k >= len(desc) {
		k = len(desc) - 1
	}
	base := math.Log(float64(desc[k]))
	var sum float64
	for _, v := range desc[:k] {
		sum += math.Log(float64(v)) - base
	}
	if sum <= 0 {
		return 0
	}
	return round(float64(k) / sum)
}
