package evitatest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evita/pb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// ---- value encoding (GrpcEvitaValue and friends, from the protocol's field numbers)

func field(b []byte, n protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(b, n, protowire.BytesType), v)
}
func varint(b []byte, n protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(b, n, protowire.VarintType), v)
}
func strMsg(s string) []byte { return field(nil, 1, []byte(s)) }

const (
	tString, tInteger, tLong, tBoolean, tBigDecimal, tDateTimeRange = 0, 3, 4, 5, 7, 12
)

func sv(s string) []byte { return field(nil, 1, []byte(s)) } // type STRING is the default
func iv(i int32) []byte  { return varint(varint(nil, 2, uint64(i)), 100, tInteger) }
func lv(i int64) []byte  { return varint(varint(nil, 3, uint64(i)), 100, tLong) }
func bv(b bool) []byte {
	x := uint64(0)
	if b {
		x = 1
	}
	return varint(varint(nil, 4, x), 100, tBoolean)
}
func odt(sec int64) []byte {
	return field(field(nil, 1, varint(nil, 1, uint64(sec))), 2, []byte("+01:00"))
}
func dtr(from, to int64) []byte {
	return varint(field(nil, 6, field(field(nil, 1, odt(from)), 2, odt(to))), 100, tDateTimeRange)
}
func adv(v []byte) []byte { return field(nil, 1, v) } // GrpcEvitaAssociatedDataValue{primitiveValue}

// scoped schema settings: {scope 1, value 2}
func scoped(scope int32, v uint64) []byte { return varint(varint(nil, 1, uint64(scope)), 2, v) }

const (
	live                   = 0
	uniqueInCollection     = 1
	uniqueInCatalogLocale  = 2
	indexForFiltering      = 1
	indexForPartitioning   = 2
	componentReferencedEnt = 0
	cardZeroOrOne          = 1
	cardZeroOrMore         = 3
)

// ---- the source catalog: every schema feature of the copy, as a read-side schema

// FixtureSchema is a catalog exercising every schema feature a copy must keep: a
// localized, globally unique attribute; hierarchy; prices; locales and currencies;
// unique, sortable, filterable and range attributes; associated data; a sortable
// compound; references with groups, faceting, partitioning, indexed components and
// reference attributes; conditional facets (facetedPartially) and a bucketed histogram
// with its condition (bucketed, bucketedPartially) over a managed group; and reflected
// references, one inheriting its facets and one declaring its own conditional facets.
func FixtureSchema() (*pb.GrpcCatalogSchema, []*pb.GrpcEntitySchema) {
	cat := &pb.GrpcCatalogSchema{Attributes: map[string]*pb.GrpcGlobalAttributeSchema{
		"url": {Name: "url", Localized: true, Type: tString, UniqueGloballyInScopes: [][]byte{scoped(live, uniqueInCatalogLocale)},
			Description: field(nil, 1, []byte("canonical URL"))},
	}}
	name := func() *pb.GrpcAttributeSchema {
		return &pb.GrpcAttributeSchema{Name: "name", SchemaType: 1, Localized: true, Type: tString, SortableInScopes: []int32{live}, FilterableInScopes: []int32{live}}
	}
	locales := [][]byte{strMsg("cs"), strMsg("en")}
	brand := &pb.GrpcEntitySchema{Name: "Brand", Locales: locales, Attributes: map[string]*pb.GrpcAttributeSchema{
		"url": {Name: "url", SchemaType: evita.AttributeGlobal}, "name": name()}}
	category := &pb.GrpcEntitySchema{Name: "Category", Locales: locales, WithHierarchy: true, HierarchyIndexedInScopes: []int32{live},
		Attributes: map[string]*pb.GrpcAttributeSchema{"url": {Name: "url", SchemaType: evita.AttributeGlobal}, "name": name()},
		References: map[string]*pb.GrpcReferenceSchema{
			"products": {Name: "products", EntityType: "Product", ReferencedEntityTypeManaged: true, ReflectedReferenceName: wrapperspb.String("categories"),
				CardinalityInherited: true, DescriptionInherited: true, DeprecationNoticeInherited: true, FacetedInherited: true, IndexedInherited: true},
		}}
	product := &pb.GrpcEntitySchema{Name: "Product", Locales: locales, Currencies: [][]byte{strMsg("CZK"), strMsg("EUR")},
		WithPrice: true, IndexedPricePlaces: 2, PriceIndexedInScopes: []int32{live}, Description: field(nil, 1, []byte("sellable items")),
		Attributes: map[string]*pb.GrpcAttributeSchema{
			"url":      {Name: "url", SchemaType: evita.AttributeGlobal},
			"name":     name(),
			"ean":      {Name: "ean", SchemaType: 1, Type: tString, UniqueInScopes: [][]byte{scoped(live, uniqueInCollection)}},
			"priority": {Name: "priority", SchemaType: 1, Type: tLong, SortableInScopes: []int32{live}},
			"validity": {Name: "validity", SchemaType: 1, Type: tDateTimeRange, FilterableInScopes: []int32{live}, Nullable: true},
		},
		AssociatedData: map[string]*pb.GrpcAssociatedDataSchema{
			"gallery":     {Name: "gallery", Type: tString},
			"description": {Name: "description", Type: tString, Localized: true, Nullable: true},
		},
		SortableAttributeCompounds: map[string]*pb.GrpcSortableAttributeCompoundSchema{
			"priorityEan": {Name: "priorityEan", IndexedInScopes: []int32{live},
				AttributeElements: [][]byte{field(nil, 1, []byte("priority")), field(nil, 1, []byte("ean"))}},
		},
		References: map[string]*pb.GrpcReferenceSchema{
			"brand": {Name: "brand", EntityType: "Brand", ReferencedEntityTypeManaged: true, Cardinality: cardZeroOrOne,
				GroupType: wrapperspb.String("BrandGroup"), FacetedInScopes: []int32{live}, ScopedIndexTypes: [][]byte{scoped(live, indexForFiltering)},
				Attributes: map[string]*pb.GrpcAttributeSchema{"order": {Name: "order", SchemaType: 2, Type: tInteger, SortableInScopes: []int32{live}}}},
			"categories": {Name: "categories", EntityType: "Category", ReferencedEntityTypeManaged: true, Cardinality: cardZeroOrMore,
				ScopedIndexTypes:        [][]byte{scoped(live, indexForPartitioning)},
				ScopedIndexedComponents: [][]byte{scoped(live, componentReferencedEnt)},
				Attributes:              map[string]*pb.GrpcAttributeSchema{"featured": {Name: "featured", SchemaType: 2, Type: tBoolean, FilterableInScopes: []int32{live}}}},
		},
	}
	// conditional facets and bucketed histograms over a grouped reference: checkbox
	// parameters are facets, interval parameters feed a histogram of their values
	parameter := &pb.GrpcEntitySchema{Name: "Parameter", Attributes: map[string]*pb.GrpcAttributeSchema{
		"inputWidgetType": {Name: "inputWidgetType", SchemaType: 1, Type: tString, FilterableInScopes: []int32{live}}}}
	parameterValue := &pb.GrpcEntitySchema{Name: "ParameterValue", Attributes: map[string]*pb.GrpcAttributeSchema{
		"basicUnitValue": {Name: "basicUnitValue", SchemaType: 1, Type: tBigDecimal, FilterableInScopes: []int32{live}, IndexedDecimalPlaces: 2}},
		References: map[string]*pb.GrpcReferenceSchema{
			// the back side cannot inherit a conditional facet (evitaDB refuses: its paths
			// point the other way), so it states its own
			"products": {Name: "products", EntityType: "Product", ReferencedEntityTypeManaged: true, ReflectedReferenceName: wrapperspb.String("parameterValues"),
				CardinalityInherited: true, DescriptionInherited: true, DeprecationNoticeInherited: true, IndexedInherited: true,
				FacetedInScopes: []int32{live}, FacetedPartially: [][]byte{evita.ScopedExpression(live, "($reference.referencedEntity?.attributes['priority'] ?? 0) > 25")}},
		}}
	product.References["parameterValues"] = &pb.GrpcReferenceSchema{Name: "parameterValues", EntityType: "ParameterValue", ReferencedEntityTypeManaged: true,
		Cardinality: cardZeroOrMore, GroupType: wrapperspb.String("Parameter"), ReferencedGroupTypeManaged: true,
		ScopedIndexTypes:        [][]byte{scoped(live, indexForFiltering)},
		ScopedIndexedComponents: [][]byte{evita.ScopedList(live, evita.ComponentReferencedEntity, evita.ComponentReferencedGroup)},
		FacetedInScopes:         []int32{live},
		FacetedPartially:        [][]byte{evita.ScopedExpression(live, "$reference.groupEntity?.attributes['inputWidgetType'] == 'CHECKBOX'")},
		Bucketed:                [][]byte{evita.ScopedHistogram(live, "basicUnitValue", "$reference.referencedEntity?.attributes['basicUnitValue'] ?? 0.0", "")},
		BucketedPartially:       [][]byte{evita.ScopedExpression(live, "$reference.groupEntity?.attributes['inputWidgetType'] == 'INTERVAL'")},
		Attributes:              map[string]*pb.GrpcAttributeSchema{"variant": {Name: "variant", SchemaType: 2, Type: tBoolean, FilterableInScopes: []int32{live}}}}
	return cat, []*pb.GrpcEntitySchema{brand, category, parameter, parameterValue, product}
}

// fixtureParameters are the parameter values of the fixture: value pk -> (parameter
// pk, basicUnitValue); parameter 1 is a checkbox, parameter 2 an interval.
var fixtureParameters = []struct {
	pk, parameter int32
	value         string
}{{11, 1, "1.50"}, {12, 1, "2.25"}, {21, 2, "10.00"}, {22, 2, "12.50"}}

// Brand is a valid Brand entity of the fixture catalog with primary key pk.
func Brand(pk int32) *pb.GrpcSealedEntity {
	return &pb.GrpcSealedEntity{EntityType: "Brand", PrimaryKey: pk, LocalizedAttributes: localized(fmt.Sprint("značka-", pk), fmt.Sprint("brand-", pk))}
}

func localized(cs, en string) map[string]*pb.GrpcLocalizedAttribute {
	return map[string]*pb.GrpcLocalizedAttribute{"cs": {Attributes: map[string][]byte{"name": sv(cs), "url": sv("/cs/" + cs)}},
		"en": {Attributes: map[string][]byte{"name": sv(en), "url": sv("/en/" + en)}}}
}

// FixtureEntities uses every kind of content: localized attributes, unique and range
// attributes, localized associated data, prices in two lists and currencies (one not
// indexed, with inner records), references with groups and attributes, and a category
// hierarchy.
func FixtureEntities() []*pb.GrpcSealedEntity {
	loc := localized
	var out []*pb.GrpcSealedEntity
	for i := int32(1); i <= 3; i++ {
		out = append(out, Brand(i))
	}
	parents := map[int32]int32{2: 1, 3: 1, 4: 2}
	for i := int32(1); i <= 4; i++ {
		e := &pb.GrpcSealedEntity{EntityType: "Category", PrimaryKey: i, LocalizedAttributes: loc(fmt.Sprint("kategorie-", i), fmt.Sprint("category-", i))}
		if p, ok := parents[i]; ok {
			e.Parent = wrapperspb.Int32(p)
		}
		out = append(out, e)
	}
	for i, w := range []string{"CHECKBOX", "INTERVAL"} {
		out = append(out, &pb.GrpcSealedEntity{EntityType: "Parameter", PrimaryKey: int32(i + 1), GlobalAttributes: map[string][]byte{"inputWidgetType": sv(w)}})
	}
	for _, v := range fixtureParameters {
		out = append(out, &pb.GrpcSealedEntity{EntityType: "ParameterValue", PrimaryKey: v.pk, GlobalAttributes: map[string][]byte{"basicUnitValue": evita.DecimalValue(v.value)}})
	}
	dec := func(s string) []byte { return strMsg(s) }
	for i := int32(1); i <= 6; i++ {
		e := &pb.GrpcSealedEntity{EntityType: "Product", PrimaryKey: 100 + i, LocalizedAttributes: loc(fmt.Sprint("výrobek-", i), fmt.Sprint("product-", i)),
			GlobalAttributes:         map[string][]byte{"ean": sv(fmt.Sprint("859000", i)), "priority": lv(int64(10 * i))},
			GlobalAssociatedData:     map[string][]byte{"gallery": adv(sv(fmt.Sprintf("img-%d-a.jpg,img-%d-b.jpg", i, i)))},
			LocalizedAssociatedData:  map[string]*pb.GrpcLocalizedAssociatedData{"cs": {AssociatedData: map[string][]byte{"description": adv(sv("popis"))}}},
			PriceInnerRecordHandling: evita.InnerRecordNone,
		}
		if i%2 == 0 {
			e.GlobalAttributes["validity"] = dtr(1_700_000_000, 1_800_000_000)
		}
		for k, pl := range []string{"basic", "reference"} {
			for c, cur := range []string{"CZK", "EUR"} {
				e.Prices = append(e.Prices, &pb.GrpcPrice{PriceId: int32(1 + 2*k + c), PriceList: pl, Currency: strMsg(cur),
					PriceWithoutTax: dec("100.00"), TaxRate: dec("21.00"), PriceWithTax: dec("121.00"), Indexed: pl == "basic"})
			}
		}
		if i == 5 {
			e.PriceInnerRecordHandling = evita.InnerRecordLowestPrice
			e.Prices[0].InnerRecordId = field(nil, 1, nil)
			e.Prices[0].InnerRecordId = varint(nil, 1, 7) // Int32Value{7}
		}
		e.References = append(e.References, &pb.GrpcReference{ReferenceName: "brand", ReferencedEntityReference: &pb.GrpcEntityReference{EntityType: "Brand", PrimaryKey: 1 + i%3},
			ReferenceCardinality: cardZeroOrOne,
			GroupReferenceType:   &pb.GrpcReference_GroupReferencedEntityReference{GroupReferencedEntityReference: &pb.GrpcEntityReference{EntityType: "BrandGroup", PrimaryKey: 1 + i%2}},
			GlobalAttributes:     map[string][]byte{"order": iv(i)}})
		for _, c := range []int32{1 + i%4, 1 + (i+1)%4} {
			e.References = append(e.References, &pb.GrpcReference{ReferenceName: "categories", ReferencedEntityReference: &pb.GrpcEntityReference{EntityType: "Category", PrimaryKey: c},
				ReferenceCardinality: cardZeroOrMore, GlobalAttributes: map[string][]byte{"featured": bv(c == 1)}})
		}
		for _, v := range fixtureParameters { // odd products the first value of each parameter, even ones the second
			if v.pk%2 == i%2 {
				e.References = append(e.References, &pb.GrpcReference{ReferenceName: "parameterValues", ReferencedEntityReference: &pb.GrpcEntityReference{EntityType: "ParameterValue", PrimaryKey: v.pk},
					ReferenceCardinality: cardZeroOrMore,
					GroupReferenceType:   &pb.GrpcReference_GroupReferencedEntityReference{GroupReferencedEntityReference: &pb.GrpcEntityReference{EntityType: "Parameter", PrimaryKey: v.parameter}},
					GlobalAttributes:     map[string][]byte{"variant": bv(v.pk > 20)}})
			}
		}
		out = append(out, e)
	}
	return out
}

// LoadCatalog creates catalog `name` on c from a schema plan and entities, then makes it ALIVE.
func LoadCatalog(t testing.TB, ctx context.Context, c *evita.Client, name string, plan evita.ReplicationPlan, ents []*pb.GrpcSealedEntity, schemas map[string]*pb.GrpcEntitySchema) {
	t.Helper()
	_, err := c.DeleteCatalogIfExists(ctx, name)
	must(t, err)
	must(t, c.DefineCatalog(ctx, name))
	s, err := c.Open(ctx, name, true)
	must(t, err)
	must(t, s.Replicate(ctx, plan))
	must(t, s.Close(ctx))
	s, err = c.Open(ctx, name, true)
	must(t, err)
	for _, e := range ents {
		sch := schemas[e.GetEntityType()]
		must(t, s.Upsert(ctx, e, evita.CopyPlan{Reflected: evita.ReflectedNames(sch), WithPrices: sch.GetWithPrice()}))
	}
	for _, d := range plan.Deferred {
		must(t, s.UpdateEntitySchema(ctx, d))
	}
	must(t, s.GoLive(ctx, 5*time.Minute, 30*time.Second, nil).Problem())
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// LoadFixture creates catalog `name` on c holding the fixture schema and entities, ALIVE.
func LoadFixture(t testing.TB, ctx context.Context, c *evita.Client, name string) {
	t.Helper()
	cat, schemas := FixtureSchema()
	byName := map[string]*pb.GrpcEntitySchema{}
	for _, s := range schemas {
		byName[s.GetName()] = s
	}
	LoadCatalog(t, ctx, c, name, evita.PlanReplication(cat, schemas), FixtureEntities(), byName)
}
