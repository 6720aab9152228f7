package shape

import (
	"fmt"
	"slices"

	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evita/pb"
	"github.com/warmstat/warmstat/seed"
	"google.golang.org/protobuf/encoding/protowire"
)

// kinds maps the schema's data types to the generator's kinds.
var kinds = map[int32]string{evita.TypeString: "string", evita.TypeInteger: "int", evita.TypeLong: "long",
	evita.TypeBoolean: "bool", evita.TypeBigDecimal: "decimal", evita.TypeOffsetDateTime: "datetime", evita.TypeDateTimeRange: "range"}

var cardinalities = map[int32]string{0: "", evita.CardinalityZeroOrOne: "zero-or-one", evita.CardinalityExactlyOne: "exactly-one",
	evita.CardinalityZeroOrMore: "zero-or-more", evita.CardinalityOneOrMore: "one-or-more"}

// fields reads a message's top-level fields: number -> the values it holds (varints as
// their value, length-delimited as bytes).
type field struct {
	num   protowire.Number
	value uint64
	bytes []byte
}

func fields(b []byte) ([]field, error) {
	var out []field
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		f := field{num: num}
		switch typ {
		case protowire.VarintType:
			f.value, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			f.bytes, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		out = append(out, f)
	}
	return out, nil
}

// text is a one-string message's string (GrpcLocale, GrpcCurrency, StringValue).
func text(b []byte) string {
	fs, _ := fields(b)
	for _, f := range fs {
		if f.num == 1 {
			return string(f.bytes)
		}
	}
	return ""
}

// liveEntry is the live scope's entry of a scoped setting ({scope 1, ...}): its fields
// by number; ok false when the list has no live entry.
func liveEntry(scoped [][]byte) (map[protowire.Number]field, bool) {
	for _, s := range scoped {
		fs, err := fields(s)
		if err != nil {
			continue
		}
		byNum := map[protowire.Number]field{}
		for _, f := range fs {
			byNum[f.num] = f
		}
		if int32(byNum[1].value) == evita.ScopeLive {
			return byNum, true
		}
	}
	return nil, false
}

// liveValue is a scoped setting's value in the live scope ({scope 1, value 2}).
func liveValue(scoped [][]byte) (int32, bool) {
	e, ok := liveEntry(scoped)
	return int32(e[2].value), ok
}

// liveExpression is a scoped expression's text in the live scope ({scope 1, expression 2}).
func liveExpression(scoped [][]byte) string {
	e, _ := liveEntry(scoped)
	return text(e[2].bytes)
}

// liveHistogram is a bucketed histogram's name and value expression in the live scope
// ({scope 1, name 2, value expression 4}).
func liveHistogram(scoped [][]byte) (name, value string) {
	e, _ := liveEntry(scoped)
	return string(e[2].bytes), text(e[4].bytes)
}

func live(scopes []int32) bool { return slices.Contains(scopes, evita.ScopeLive) }

var indexLevels = map[int32]string{evita.IndexNone: "none", evita.IndexForFiltering: "filtering", evita.IndexForPartitioning: "partitioning"}

// skeleton is the profile the schema describes, before any entity is read: every
// collection with its attributes, associated data, prices and references as the
// generator's vocabulary says them. What that vocabulary cannot say is listed in
// notKept, never dropped silently.
func skeleton(cat *pb.GrpcCatalogSchema, schemas []*pb.GrpcEntitySchema) (*seed.Profile, []string, error) {
	p := &seed.Profile{Format: seed.ShapeV1}
	var notKept []string
	lost := func(format string, args ...any) { notKept = append(notKept, fmt.Sprintf(format, args...)) }
	byName := map[string]*pb.GrpcEntitySchema{}
	for _, s := range schemas {
		byName[s.GetName()] = s
	}
	for _, s := range schemas {
		for _, l := range s.GetLocales() {
			if t := text(l); !slices.Contains(p.Locales, t) {
				p.Locales = append(p.Locales, t)
			}
		}
		for _, c := range s.GetCurrencies() {
			if t := text(c); !slices.Contains(p.Currencies, t) {
				p.Currencies = append(p.Currencies, t)
			}
		}
	}
	slices.Sort(p.Locales)
	slices.Sort(p.Currencies)
	for _, s := range schemas {
		c := seed.Collection{Name: s.GetName(), Hierarchy: s.GetWithHierarchy()}
		for _, name := range sortedKeys(s.GetAttributes()) {
			a := s.GetAttributes()[name]
			if a.GetSchemaType() == evita.AttributeGlobal {
				g := cat.GetAttributes()[name]
				if _, unique := liveValue(g.GetUniqueGloballyInScopes()); !unique || g.GetType() != evita.TypeString || !g.GetLocalized() {
					return nil, nil, fmt.Errorf("%s.%s: a global attribute other than a localized, globally unique string; the generator makes only that kind", c.Name, name)
				}
				c.Attributes = append(c.Attributes, seed.Attribute{Name: name, Kind: "string", Localized: true, Global: true})
				continue
			}
			at, err := attribute(c.Name, a, lost)
			if err != nil {
				return nil, nil, err
			}
			c.Attributes = append(c.Attributes, at)
		}
		for _, name := range sortedKeys(s.GetAssociatedData()) {
			d := s.GetAssociatedData()[name]
			c.AssociatedData = append(c.AssociatedData, seed.AssociatedData{Name: name, Localized: d.GetLocalized(), MedianBytes: 1, P95Bytes: 1, MaxBytes: 1})
		}
		if s.GetWithPrice() {
			c.Prices = &seed.Prices{Lists: 1}
		}
		if n := len(s.GetSortableAttributeCompounds()); n > 0 {
			lost("%s: %d sortable attribute compound(s)", c.Name, n)
		}
		for _, name := range sortedKeys(s.GetReferences()) {
			r := s.GetReferences()[name]
			if r.GetReflectedReferenceName() != nil {
				continue // made by the engine; described on its original below
			}
			ref, err := reference(c.Name, r, byName, lost)
			if err != nil {
				return nil, nil, err
			}
			c.References = append(c.References, ref)
		}
		p.Collections = append(p.Collections, c)
	}
	return p, notKept, nil
}

func attribute(owner string, a *pb.GrpcAttributeSchema, lost func(string, ...any)) (seed.Attribute, error) {
	kind, ok := kinds[a.GetType()]
	if !ok {
		return seed.Attribute{}, fmt.Errorf("%s.%s: data type %d is not one the generator makes (string, integer, long, boolean, decimal, date-time, date-time range)", owner, a.GetName(), a.GetType())
	}
	at := seed.Attribute{Name: a.GetName(), Kind: kind, Localized: a.GetLocalized(),
		Filterable: live(a.GetFilterableInScopes()), Sortable: live(a.GetSortableInScopes())}
	if _, unique := liveValue(a.GetUniqueInScopes()); unique {
		at.Unique = true
	}
	if a.GetRepresentative() {
		lost("%s.%s: representative", owner, a.GetName())
	}
	return at, nil
}

func reference(owner string, r *pb.GrpcReferenceSchema, byName map[string]*pb.GrpcEntitySchema, lost func(string, ...any)) (seed.Reference, error) {
	who := owner + "." + r.GetName()
	card, ok := cardinalities[r.GetCardinality()]
	if !ok {
		card = "zero-or-more"
		lost("%s: cardinality %d (kept as zero-or-more)", who, r.GetCardinality())
	}
	ref := seed.Reference{Name: r.GetName(), Target: r.GetEntityType(), Cardinality: card, Max: 1,
		Faceted: live(r.GetFacetedInScopes()), FacetedPartially: scrubLiterals(liveExpression(r.GetFacetedPartially()))}
	if v, ok := liveValue(r.GetScopedIndexTypes()); ok && v != evita.IndexNone {
		ref.Index = indexLevels[v]
	}
	if r.GetGroupType() != nil {
		if _, managed := byName[r.GetGroupType().GetValue()]; managed && r.GetReferencedGroupTypeManaged() {
			ref.Group = r.GetGroupType().GetValue()
		} else {
			lost("%s: its group type `%s` is not a collection of the catalog (references are made without groups)", who, r.GetGroupType().GetValue())
		}
	}
	if name, value := liveHistogram(r.GetBucketed()); name != "" {
		ref.Histogram = &seed.Histogram{Name: name, Value: scrubLiterals(value), Partially: scrubLiterals(liveExpression(r.GetBucketedPartially()))}
	}
	for _, name := range sortedKeys(r.GetAttributes()) {
		a, err := attribute(who, r.GetAttributes()[name], lost)
		if err != nil {
			return seed.Reference{}, err
		}
		ref.Attributes = append(ref.Attributes, a)
	}
	if n := len(r.GetSortableAttributeCompounds()); n > 0 {
		lost("%s: %d sortable attribute compound(s)", who, n)
	}
	if t := byName[r.GetEntityType()]; t != nil {
		for _, tn := range sortedKeys(t.GetReferences()) {
			back := t.GetReferences()[tn]
			if back.GetReflectedReferenceName().GetValue() != r.GetName() || back.GetEntityType() != owner {
				continue
			}
			ref.Reflected = tn
			if live(back.GetFacetedInScopes()) || len(back.GetFacetedPartially()) > 0 {
				lost("%s.%s: the reflected reference's own faceting (made without)", r.GetEntityType(), tn)
			}
			if !back.GetIndexedInherited() {
				if v, ok := liveValue(back.GetScopedIndexTypes()); ok {
					ref.ReflectedIndex = indexLevels[v]
				}
			}
		}
	}
	return ref, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
