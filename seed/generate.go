package seed

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evita/pb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

const live = 0

var kindType = map[string]int32{"string": evita.TypeString, "text": evita.TypeString, "int": evita.TypeInteger, "long": evita.TypeLong,
	"bool": evita.TypeBoolean, "decimal": evita.TypeBigDecimal, "datetime": evita.TypeOffsetDateTime, "range": evita.TypeDateTimeRange}

var cardinality = map[string]int32{"": evita.CardinalityZeroOrMore, "zero-or-more": evita.CardinalityZeroOrMore,
	"zero-or-one": evita.CardinalityZeroOrOne, "exactly-one": evita.CardinalityExactlyOne, "one-or-more": evita.CardinalityOneOrMore}

func attributeSchema(a Attribute, schemaType int32) *pb.GrpcAttributeSchema {
	s := &pb.GrpcAttributeSchema{Name: a.Name, SchemaType: schemaType, Type: kindType[a.Kind], Localized: a.Localized, Nullable: a.Absent || (a.Share > 0 && a.Share < 1)}
	if a.Filterable {
		s.FilterableInScopes = []int32{live}
	}
	if a.Sortable {
		s.SortableInScopes = []int32{live}
	}
	if a.Unique {
		u := evita.UniqueWithinCollection
		if a.Localized {
			u = evita.UniqueWithinCollectionLocale
		}
		s.UniqueInScopes = [][]byte{evita.Scoped(live, u)}
	}
	return s
}

// Schema is the profile's schema in the server's read form; evita.PlanReplication
// turns it into the mutations that create it.
func Schema(p *Profile) (*pb.GrpcCatalogSchema, []*pb.GrpcEntitySchema) {
	cat := &pb.GrpcCatalogSchema{Attributes: map[string]*pb.GrpcGlobalAttributeSchema{}}
	var locales, currencies [][]byte
	for _, l := range p.Locales {
		locales = append(locales, evita.Text(l))
	}
	for _, c := range p.Currencies {
		currencies = append(currencies, evita.Text(c))
	}
	known := map[string]bool{}
	byName := map[string]*pb.GrpcEntitySchema{}
	var out []*pb.GrpcEntitySchema
	for _, c := range p.Collections {
		known[c.Name] = true
		s := &pb.GrpcEntitySchema{Name: c.Name, Locales: locales, Attributes: map[string]*pb.GrpcAttributeSchema{},
			AssociatedData: map[string]*pb.GrpcAssociatedDataSchema{}, References: map[string]*pb.GrpcReferenceSchema{}}
		if c.Hierarchy {
			s.WithHierarchy, s.HierarchyIndexedInScopes = true, []int32{live}
		}
		if c.Prices != nil {
			s.WithPrice, s.IndexedPricePlaces, s.PriceIndexedInScopes, s.Currencies = true, 2, []int32{live}, currencies
		}
		for _, a := range c.Attributes {
			if a.Global {
				cat.Attributes[a.Name] = &pb.GrpcGlobalAttributeSchema{Name: a.Name, Type: evita.TypeString, Localized: true,
					UniqueGloballyInScopes: [][]byte{evita.Scoped(live, evita.UniqueWithinCatalogLocale)}}
				s.Attributes[a.Name] = &pb.GrpcAttributeSchema{Name: a.Name, SchemaType: evita.AttributeGlobal}
				continue
			}
			s.Attributes[a.Name] = attributeSchema(a, 1)
		}
		for _, d := range c.AssociatedData {
			s.AssociatedData[d.Name] = &pb.GrpcAssociatedDataSchema{Name: d.Name, Type: evita.TypeString, Localized: d.Localized, Nullable: true}
		}
		byName[c.Name] = s
		out = append(out, s)
	}
	for _, c := range p.Collections {
		for _, r := range c.References {
			byName[c.Name].References[r.Name] = referenceSchema(r, known[r.Target])
			if r.Reflected != "" {
				byName[r.Target].References[r.Reflected] = reflectedSchema(c.Name, r)
			}
		}
	}
	return cat, out
}

func indexTypes(level string) [][]byte {
	switch level {
	case "filtering":
		return [][]byte{evita.Scoped(live, evita.IndexForFiltering)}
	case "partitioning":
		return [][]byte{evita.Scoped(live, evita.IndexForPartitioning)}
	case "none":
		return [][]byte{evita.Scoped(live, evita.IndexNone)}
	}
	return nil
}

func referenceSchema(r Reference, managed bool) *pb.GrpcReferenceSchema {
	rs := &pb.GrpcReferenceSchema{Name: r.Name, EntityType: r.Target, ReferencedEntityTypeManaged: managed,
		Cardinality: cardinality[r.Cardinality], Attributes: map[string]*pb.GrpcAttributeSchema{}, ScopedIndexTypes: indexTypes(r.Index)}
	if r.Faceted {
		rs.FacetedInScopes = []int32{live}
	}
	if r.FacetedPartially != "" {
		rs.FacetedPartially = [][]byte{evita.ScopedExpression(live, r.FacetedPartially)}
	}
	if h := r.Histogram; h != nil {
		rs.Bucketed = [][]byte{evita.ScopedHistogram(live, h.Name, h.Value, "")}
		if h.Partially != "" {
			rs.BucketedPartially = [][]byte{evita.ScopedExpression(live, h.Partially)}
		}
	}
	if r.Group != "" {
		rs.GroupType, rs.ReferencedGroupTypeManaged = wrapperspb.String(r.Group), true
		rs.ScopedIndexedComponents = [][]byte{evita.ScopedList(live, evita.ComponentReferencedEntity, evita.ComponentReferencedGroup)}
	}
	for _, a := range r.Attributes {
		rs.Attributes[a.Name] = attributeSchema(a, 2)
	}
	return rs
}

// reflectedSchema is the back side of r on its target collection. It inherits what
// fits the data and declares the rest:
//   - cardinality: the back side of a target counts every entity referencing it —
//     many, whatever r allows per owner — so it is ZERO_OR_MORE (inherited only when r
//     says so itself: a brand referenced by 31 products must not claim ZERO_OR_ONE);
//   - faceting: none. A faceted back side holds, in the partition of every entity
//     referencing a target, a facet for each other entity referencing it — a category's
//     products repeated in the partition of each of its products, quadratic in the
//     category's size (a million facet indexes at scale 0.02, most of that catalog's
//     heap). Nor could it inherit conditional facets: evitaDB refuses, the expression's
//     paths point the other way;
//   - index: inherited unless ReflectedIndex sets it.
func reflectedSchema(owner string, r Reference) *pb.GrpcReferenceSchema {
	rs := &pb.GrpcReferenceSchema{Name: r.Reflected, EntityType: owner, ReferencedEntityTypeManaged: true,
		ReflectedReferenceName: wrapperspb.String(r.Name), DescriptionInherited: true, DeprecationNoticeInherited: true,
		IndexedInherited: r.ReflectedIndex == ""}
	if c := cardinality[r.Cardinality]; c == evita.CardinalityZeroOrMore {
		rs.CardinalityInherited = true
	} else {
		rs.Cardinality = evita.CardinalityZeroOrMore
	}
	if !rs.IndexedInherited {
		rs.ScopedIndexTypes = indexTypes(r.ReflectedIndex)
	}
	return rs
}

// Generator produces the entities of a profile at a scale, deterministically: entity i
// of collection C depends only on (seed, C, i).
type Generator struct {
	p     *Profile
	scale float64
	seed  uint64
	pks   map[string][]int32
	zipf  map[string][]float64 // cumulative popularity per (collection.reference)
	pools map[[2]int64]int64   // pool sizes by (distinct, values measured)
}

// NewGenerator assigns every collection its primary keys: sparse, caller-assigned,
// strides of 3–11 as in the production catalog.
func NewGenerator(p *Profile, scale float64, seed uint64) *Generator {
	g := &Generator{p: p, scale: scale, seed: seed, pks: map[string][]int32{}, zipf: map[string][]float64{}, pools: map[[2]int64]int64{}}
	for _, c := range p.Collections {
		n := c.CountAt(scale)
		rng := g.rng(c.Name, -1)
		pks := make([]int32, n)
		next := int32(1)
		for i := range pks {
			pks[i] = next
			next += 3 + int32(rng.IntN(9))
		}
		g.pks[c.Name] = pks
	}
	return g
}

// Count is the number of entities of a collection at this scale.
func (g *Generator) Count(collection string) int { return len(g.pks[collection]) }

func hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

func (g *Generator) rng(collection string, i int) *rand.Rand {
	return rand.New(rand.NewPCG(g.seed, hash(collection)^uint64(i+1)*0x9e3779b97f4a7c15))
}

var syllables = []string{"ka", "lo", "mi", "ne", "po", "ra", "su", "ti", "va", "ze", "bo", "de", "fi", "gu", "hy", "ja"}

// word is a slug-like string; shared prefixes like real product codes.
func word(rng *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(syllables[rng.IntN(len(syllables))])
	}
	return b.String()[:n]
}

// localizedWord adds diacritics in Czech so that collation has work to do.
func localizedWord(rng *rand.Rand, n int, loc string) string {
	w := word(rng, n)
	if loc == "cs" {
		w = strings.NewReplacer("a", "á", "e", "ě", "i", "í", "u", "ů", "z", "ž", "s", "š", "r", "ř").Replace(w)
	}
	return w
}

func logNormal(rng *rand.Rand, median, p95 float64) float64 {
	sigma := math.Log(max(p95/median, 1.0001)) / 1.645
	return median * math.Exp(sigma*rng.NormFloat64())
}

func poisson(rng *rand.Rand, mean float64) int {
	if mean <= 0 {
		return 0
	}
	if mean > 30 {
		return max(0, int(math.Round(mean+math.Sqrt(mean)*rng.NormFloat64())))
	}
	l, k, p := math.Exp(-mean), 0, 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

func (g *Generator) value(rng *rand.Rand, a Attribute, coll string, i int, pk int32, loc string) []byte {
	n := a.Length
	if n == 0 {
		n = 12
	}
	if pooled(a) { // a measured attribute with few distinct values draws one of them
		return g.pooledValue(a, coll, rng.Int64N(g.poolSize(a)), loc)
	}
	if a.Lengths != nil && (a.Kind == "string" || a.Kind == "text") {
		n = max(1, int(math.Round(a.Lengths.Sample(rng))))
	}
	switch a.Kind {
	case "string":
		switch {
		case keyedByLength(a): // measured: the key keeps it unique, a word gives it its length
			key := "/" + strconv.Itoa(int(pk))
			if loc != "" {
				key = "/" + loc + key
			}
			return evita.StringValue(word(rng, max(0, n-len(key))) + key)
		case len(a.Values) > 0:
			return evita.StringValue(a.Values[weighted(rng, a.Weights, len(a.Values))])
		case a.Unique && a.Name == "code":
			return evita.StringValue(fmt.Sprintf("%s-%07d-%s", strings.ToLower(coll), pk, word(rng, max(4, n-18))))
		case a.Unique:
			return evita.StringValue(fmt.Sprintf("%0*d", n, pk))
		case a.Localized:
			return evita.StringValue(localizedWord(rng, n, loc))
		}
		return evita.StringValue(word(rng, n))
	case "text":
		return evita.StringValue(localizedWord(rng, int(logNormal(rng, float64(n), float64(n)*2.2)), loc))
	case "int":
		return evita.IntValue(int32(rng.IntN(10000)))
	case "long":
		return evita.LongValue(int64(rng.IntN(1_000_000)))
	case "bool":
		return evita.BoolValue(rng.IntN(2) == 0)
	case "decimal":
		return evita.DecimalValue(fmt.Sprintf("%d.%d", rng.IntN(1000), rng.IntN(10)))
	case "datetime":
		return evita.DateTimeValue(1_700_000_000+int64(i)*60+int64(rng.IntN(5)-2), "+01:00")
	case "range":
		from := 1_700_000_000 + int64(rng.IntN(30_000_000))
		return evita.DateTimeRangeValue(from, from+int64(86400*(1+rng.IntN(400))))
	}
	panic("seed: unknown attribute kind " + a.Kind)
}

// pooled: a measured attribute whose values repeat (fewer distinct values than half the
// values measured) is drawn from a pool of that many values, so that its index has the
// measured number of entries; one whose values rarely repeat is made per entity.
func pooled(a Attribute) bool {
	return a.Distinct > 0 && a.Lengths != nil && !a.Unique && !a.Global && len(a.Values) == 0 && a.Distinct*2 < a.Lengths.N
}

// poolSize is poolSize of a pooled attribute, worked out once.
func (g *Generator) poolSize(a Attribute) int64 {
	key := [2]int64{a.Distinct, a.Lengths.N}
	p, ok := g.pools[key]
	if !ok {
		p = poolSize(a.Distinct, a.Lengths.N)
		g.pools[key] = p
	}
	return p
}

// poolSize is how many values an attribute's values are drawn from: n values drawn
// equally from P show P(1 - e^(-n/P)) distinct ones, so the P that shows the measured
// distinct count among the measured n (an integer drawn from 10,000 shows 8,460
// distinct among 18,700 values; a pool of 8,460 would show 7,500). The domain is the
// attribute's, kept at any scale.
func poolSize(distinct, n int64) int64 {
	d, v := float64(distinct), float64(n)
	shows := func(p float64) float64 { return p * -math.Expm1(-v/p) }
	lo, hi := d, d
	for shows(hi) < d && hi < 1e12 {
		hi *= 2
	}
	for range 60 {
		mid := (lo + hi) / 2
		if shows(mid) < d {
			lo = mid
		} else {
			hi = mid
		}
	}
	return max(distinct, int64(math.Round(hi)))
}

// keyedByLength: a unique or global string of a measured shape, made by value() to its
// measured length with the primary key keeping it unique (attributes() keys the others).
func keyedByLength(a Attribute) bool {
	return (a.Unique || a.Global) && a.Lengths != nil && a.Kind == "string"
}

// pooledValue is value k of an attribute's pool: the same k gives the same value, of a
// length drawn from the measured lengths.
func (g *Generator) pooledValue(a Attribute, coll string, k int64, loc string) []byte {
	switch a.Kind {
	case "int":
		return evita.IntValue(int32(k))
	case "long":
		return evita.LongValue(k)
	case "bool":
		return evita.BoolValue(k%2 == 0)
	case "decimal":
		return evita.DecimalValue(fmt.Sprintf("%d.%d", k/10, k%10))
	case "datetime":
		return evita.DateTimeValue(1_700_000_000+k*3600, "+01:00")
	case "range":
		from := 1_700_000_000 + k*86400
		return evita.DateTimeRangeValue(from, from+86400*30)
	case "string", "text":
		rng := rand.New(rand.NewPCG(g.seed, hash(coll+"/"+a.Name+"/"+loc)^uint64(k+1)*0x9e3779b97f4a7c15))
		// the pool's lengths are spread over the measured ones (stratified), not drawn: a
		// pool of three values would otherwise land anywhere
		n := max(1, int(math.Round(a.Lengths.Quantile((float64(k)+0.5)/float64(g.poolSize(a))))))
		if loc != "" {
			return evita.StringValue(localizedWord(rng, n, loc))
		}
		return evita.StringValue(word(rng, n))
	}
	panic("seed: unknown attribute kind " + a.Kind)
}

// weighted draws an index in [0, n) by weights (equally likely without them).
func weighted(rng *rand.Rand, weights []float64, n int) int {
	if len(weights) != n {
		return rng.IntN(n)
	}
	sum := 0.0
	for _, w := range weights {
		sum += w
	}
	x := rng.Float64() * sum
	for i, w := range weights {
		if x -= w; x < 0 {
			return i
		}
	}
	return n - 1
}

func (g *Generator) attributes(rng *rand.Rand, attrs []Attribute, coll string, i int, pk int32, locales []string,
	global map[string][]byte, localized map[string]*pb.GrpcLocalizedAttribute) {
	for _, a := range attrs {
		if a.Absent || (a.Share > 0 && a.Share < 1 && rng.Float64() >= a.Share) {
			continue
		}
		if !a.Localized {
			global[a.Name] = g.value(rng, a, coll, i, pk, "")
			continue
		}
		for _, loc := range locales {
			v := g.value(rng, a, coll, i, pk, loc)
			if (a.Global || (a.Unique && a.Kind == "string")) && !keyedByLength(a) { // value() made a measured one
				v = evita.StringValue(fmt.Sprintf("/%s/%s/%s-%d", loc, strings.ToLower(coll), word(rng, 8), pk))
			}
			if localized[loc] == nil {
				localized[loc] = &pb.GrpcLocalizedAttribute{Attributes: map[string][]byte{}}
			}
			localized[loc].Attributes[a.Name] = v
		}
	}
}

// pick chooses a target index, uniformly or Zipf-skewed by rank.
func (g *Generator) pick(rng *rand.Rand, key string, n int, s float64) int {
	if s <= 0 {
		return rng.IntN(n)
	}
	cdf, ok := g.zipf[key]
	if !ok {
		cdf = make([]float64, n)
		sum := 0.0
		for k := range cdf {
			sum += 1 / math.Pow(float64(k+1), s)
			cdf[k] = sum
		}
		for k := range cdf {
			cdf[k] /= sum
		}
		g.zipf[key] = cdf
	}
	return sort.SearchFloat64s(cdf, rng.Float64())
}

// sizedValue is an associated-data string value whose encoding is size bytes (or the
// smallest one, for a size below it).
func sizedValue(rng *rand.Rand, size int) []byte {
	n := max(0, size-4)
	v := evita.AssociatedValue(evita.StringValue(word(rng, n)))
	if d := len(v) - size; d > 0 && n >= d { // the length prefixes took more than guessed
		v = evita.AssociatedValue(evita.StringValue(word(rng, n-d)))
	}
	return v
}

// localesOf are the locales entity data of collection c uses: every locale of the
// profile, or as many as a measured shape's locales per entity draws (in the profile's
// order, from a random first one).
func (g *Generator) localesOf(rng *rand.Rand, c Collection) []string {
	if c.LocalesPerEntity == nil || len(g.p.Locales) == 0 {
		return g.p.Locales
	}
	k := min(len(g.p.Locales), c.LocalesPerEntity.count(rng))
	first := rng.IntN(len(g.p.Locales))
	out := make([]string, 0, k)
	for j := range k {
		out = append(out, g.p.Locales[(first+j)%len(g.p.Locales)])
	}
	return out
}

// pickByFanIn chooses one of n targets for an entity of a collection of sources
// entities, so that each target's expected fan-in is the weight fanInWeights gives it.
// An entity references a target once at most, so a weight is an inclusion probability
// (weight / sources), not a share of the draws: a hub that 90 % of the entities point at
// must be drawn by 90 % of them, however many other targets they draw. With several
// draws per entity, drawing a target with probability proportional to -ln(1 - π)
// includes it with probability close to π (the Poisson approximation).
func (g *Generator) pickByFanIn(rng *rand.Rand, key string, f *FanIn, n, sources int) int {
	cdf, ok := g.zipf[key]
	if !ok {
		w := fanInWeights(f, n, rand.New(rand.NewPCG(g.seed, hash("fan-in/"+key))))
		for i, x := range w {
			w[i] = -math.Log(1 - min(0.99, x/float64(max(1, sources))))
		}
		cdf = cumulative(w)
		g.zipf[key] = cdf
	}
	return min(n-1, sort.SearchFloat64s(cdf, rng.Float64()))
}

// Entity builds entity i of collection c.
func (g *Generator) Entity(c Collection, i int) *pb.GrpcSealedEntity {
	rng := g.rng(c.Name, i)
	pk := g.pks[c.Name][i]
	e := &pb.GrpcSealedEntity{EntityType: c.Name, PrimaryKey: pk, GlobalAttributes: map[string][]byte{},
		LocalizedAttributes: map[string]*pb.GrpcLocalizedAttribute{}, GlobalAssociatedData: map[string][]byte{},
		LocalizedAssociatedData: map[string]*pb.GrpcLocalizedAssociatedData{}, PriceInnerRecordHandling: evita.InnerRecordNone}
	locales := g.localesOf(rng, c)
	g.attributes(rng, c.Attributes, c.Name, i, pk, locales, e.GlobalAttributes, e.LocalizedAttributes)
	if c.Hierarchy {
		roots := max(1, min(40, len(g.pks[c.Name])/10))
		if i >= roots {
			e.Parent = wrapperspb.Int32(g.pks[c.Name][rng.IntN(i)]) // an earlier category: depth grows naturally
		}
	}
	for _, d := range c.AssociatedData {
		if d.Absent || (d.Share > 0 && d.Share < 1 && rng.Float64() >= d.Share) {
			continue
		}
		size := func() int {
			return min(d.MaxBytes, max(8, int(logNormal(rng, float64(d.MedianBytes), float64(d.P95Bytes)))))
		}
		if d.Bytes != nil { // measured: the encoded value's size, in bytes (ASCII, one byte a character)
			value := func() []byte { return sizedValue(rng, int(math.Round(d.Bytes.Sample(rng)))) }
			if !d.Localized {
				e.GlobalAssociatedData[d.Name] = value()
				continue
			}
			for _, loc := range locales {
				if e.LocalizedAssociatedData[loc] == nil {
					e.LocalizedAssociatedData[loc] = &pb.GrpcLocalizedAssociatedData{AssociatedData: map[string][]byte{}}
				}
				e.LocalizedAssociatedData[loc].AssociatedData[d.Name] = value()
			}
			continue
		}
		if !d.Localized {
			e.GlobalAssociatedData[d.Name] = evita.AssociatedValue(evita.StringValue(word(rng, size())))
			continue
		}
		for _, loc := range locales {
			if e.LocalizedAssociatedData[loc] == nil {
				e.LocalizedAssociatedData[loc] = &pb.GrpcLocalizedAssociatedData{AssociatedData: map[string][]byte{}}
			}
			e.LocalizedAssociatedData[loc].AssociatedData[d.Name] = evita.AssociatedValue(evita.StringValue(localizedWord(rng, size(), loc)))
		}
	}
	if c.Prices != nil && (c.Prices.NoneShare == 0 || rng.Float64() >= c.Prices.NoneShare) {
		g.prices(rng, c.Prices, e)
	}
	for _, r := range c.References {
		g.references(rng, c, r, i, e)
	}
	return e
}

// priceListName is the k-th price list of every collection's pool: "basic", then
// list-001, list-002, ...
func priceListName(k int) string {
	if k == 0 {
		return "basic"
	}
	return fmt.Sprintf("list-%03d", k)
}

// countSpread is the log-normal spread of a per-entity count (p95 = 2.2 × median).
const countSpread = 2.2

// logNormalMean draws a log-normal value whose mean (not median) is mean.
func logNormalMean(rng *rand.Rand, mean float64) float64 {
	sigma := math.Log(countSpread) / 1.645
	median := mean / math.Exp(sigma*sigma/2)
	return logNormal(rng, median, median*countSpread)
}

func (g *Generator) prices(rng *rand.Rand, p *Prices, e *pb.GrpcSealedEntity) {
	lists := max(p.Lists, 2)
	perList := len(g.p.Currencies)
	total := int(math.Round(logNormalMean(rng, p.Mean)))
	if p.PerEntity != nil {
		total = p.PerEntity.count(rng)
	}
	n := max(1, min(p.Max, total)/perList)
	chosen := map[int]bool{0: true} // "basic" always, the others by popularity
	for len(chosen) < min(n, lists) {
		chosen[1+g.pick(rng, fmt.Sprintf("pricelists/%d", lists), lists-1, 1.1)] = true
	}
	idx := make([]int, 0, len(chosen))
	for k := range chosen {
		idx = append(idx, k)
	}
	sort.Ints(idx)
	inner := p.InnerRecordShare > 0 && rng.Float64() < p.InnerRecordShare
	if inner {
		e.PriceInnerRecordHandling = evita.InnerRecordLowestPrice
	}
	id := int32(1)
	for _, k := range idx {
		for _, cur := range g.p.Currencies {
			base := 50 + rng.IntN(20000)
			pr := &pb.GrpcPrice{PriceId: id, PriceList: priceListName(k), Currency: evita.Text(cur),
				PriceWithoutTax: evita.Text(fmt.Sprintf("%d.%02d", base, rng.IntN(100))), TaxRate: evita.Text("21.00"),
				PriceWithTax: evita.Text(fmt.Sprintf("%d.%02d", base*121/100, rng.IntN(100))), Indexed: rng.Float64() < p.IndexedShare}
			if rng.Float64() < p.ValidityShare {
				from := 1_700_000_000 + int64(rng.IntN(30_000_000))
				pr.Validity = evita.DateTimeRange(from, from+86400*30)
			}
			if inner {
				pr.InnerRecordId = evita.Int32Message(int32(1 + rng.IntN(2+rng.IntN(14))))
			}
			e.Prices = append(e.Prices, pr)
			id++
		}
	}
}

func (g *Generator) references(rng *rand.Rand, c Collection, r Reference, i int, e *pb.GrpcSealedEntity) {
	var n int
	switch {
	case r.PerEntity != nil:
		n = r.PerEntity.count(rng)
	case r.Max == 1:
		if rng.Float64() < r.Mean {
			n = 1
		}
	default:
		n = poisson(rng, r.Mean)
	}
	n = max(r.Min, min(r.Max, n))
	targets := g.pks[r.Target]
	managed := targets != nil
	if managed { // distinct targets only: as many as there are (self excluded)
		n = min(n, len(targets)-b2i(r.Target == c.Name))
	}
	seen := map[int32]bool{}
	for k := 0; len(seen) < n && k < 4*n+16; k++ { // a repeated or self pick is drawn again
		var tpk int32
		var ti int
		if managed {
			if r.FanIn != nil {
				ti = g.pickByFanIn(rng, c.Name+"."+r.Name, r.FanIn, len(targets), len(g.pks[c.Name]))
			} else {
				ti = g.pick(rng, c.Name+"."+r.Name, len(targets), r.Zipf)
			}
			tpk = targets[ti]
			if r.Target == c.Name && tpk == e.GetPrimaryKey() {
				continue // no self reference
			}
		} else {
			tpk = int32(1_000_000 + i*r.Max + len(seen)) // unmanaged, distinct per entity (media)
		}
		if seen[tpk] {
			continue
		}
		seen[tpk] = true
		ref := &pb.GrpcReference{ReferenceName: r.Name, ReferencedEntityReference: &pb.GrpcEntityReference{EntityType: r.Target, PrimaryKey: tpk},
			ReferenceCardinality: cardinality[r.Cardinality], GlobalAttributes: map[string][]byte{}, LocalizedAttributes: map[string]*pb.GrpcLocalizedAttribute{}}
		if r.Group != "" && (r.GroupedShare == 0 || r.GroupedShare == 1 || rng.Float64() < r.GroupedShare) {
			groups := g.pks[r.Group]
			ref.GroupReferenceType = &pb.GrpcReference_GroupReferencedEntityReference{GroupReferencedEntityReference: &pb.GrpcEntityReference{
				EntityType: r.Group, PrimaryKey: groups[ti%len(groups)]}} // a value always belongs to the same parameter
		}
		g.attributes(rng, r.Attributes, c.Name, i, tpk, g.p.Locales, ref.GlobalAttributes, ref.LocalizedAttributes)
		e.References = append(e.References, ref)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Stats is what seeding did.
type Stats struct {
	Counts   map[string]int
	Entities int
	Took     time.Duration
	// LiveHeapBytes is the seeding server's used heap after a full collection (Pristine
	// only; nil when it could not be measured).
	LiveHeapBytes *int64
}

// ErrCatalogExists: the catalog exists, and Seed was not asked to replace it.
var ErrCatalogExists = evita.ErrCatalogExists

// Seed writes the profile's catalog into the server behind c and makes it ALIVE. An
// existing catalog of that name is refused (ErrCatalogExists) unless replace.
func Seed(ctx context.Context, c *evita.Client, catalog string, p *Profile, scale float64, seed uint64, replace bool, progress io.Writer) (*Stats, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	begin := time.Now()
	cat, schemas := Schema(p)
	plan := evita.PlanReplication(cat, schemas)
	if err := c.CreateCatalog(ctx, catalog, replace, plan); err != nil {
		return nil, err
	}
	g := NewGenerator(p, scale, seed)
	st := &Stats{Counts: map[string]int{}}
	total := 0
	for _, col := range p.Collections {
		total += g.Count(col.Name)
	}
	s, err := c.Open(ctx, catalog, true)
	if err != nil {
		return nil, err
	}
	byName := map[string]*pb.GrpcEntitySchema{}
	for _, sch := range schemas {
		byName[sch.GetName()] = sch
	}
	for _, col := range p.Collections {
		plan := evita.CopyPlan{Reflected: evita.ReflectedNames(byName[col.Name]), WithPrices: col.Prices != nil}
		for i := 0; i < g.Count(col.Name); i++ {
			if err := ctx.Err(); err != nil {
				return st, err
			}
			if err := s.Upsert(ctx, g.Entity(col, i), plan); err != nil {
				return st, fmt.Errorf("%s #%d: %w", col.Name, i, err)
			}
			st.Counts[col.Name]++
			st.Entities++
			if progress != nil && (st.Entities%500 == 0 || st.Entities == total) {
				el := time.Since(begin).Seconds()
				fmt.Fprintf(progress, "\rseed %-20s %8d/%-8d  %7.1f entities/s", col.Name, st.Entities, total, float64(st.Entities)/el)
			}
		}
	}
	if progress != nil {
		fmt.Fprintln(progress)
	}
	for _, d := range plan.Deferred {
		if err := s.UpdateEntitySchema(ctx, d); err != nil {
			return st, err
		}
	}
	if err := s.GoLive(ctx, 10*time.Minute, time.Minute, nil).Problem(); err != nil {
		return st, fmt.Errorf("goLive of the seeded catalog: %w", err)
	}
	st.Took = time.Since(begin)
	return st, nil
}
