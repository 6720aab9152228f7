package evita

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/evita/pb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

func testSchemas() (*pb.GrpcCatalogSchema, []*pb.GrpcEntitySchema) {
	b := func(s string) []byte { return msg(s) }
	cat := &pb.GrpcCatalogSchema{Name: "shop", Attributes: map[string]*pb.GrpcGlobalAttributeSchema{
		"url": {Name: "url", Localized: true, Type: 1, UniqueGloballyInScopes: [][]byte{b("LIVE:WITHIN_CATALOG_LOCALE")}, FilterableInScopes: []int32{0}, Description: b("the URL")},
	}}
	product := &pb.GrpcEntitySchema{Name: "Product", EvolutionMode: []int32{1}, WithPrice: true, IndexedPricePlaces: 2, PriceIndexedInScopes: nil,
		Locales: [][]byte{b("cs"), b("en")}, Currencies: [][]byte{b("CZK"), b("EUR")}, Description: b("products"),
		Attributes: map[string]*pb.GrpcAttributeSchema{
			"url":  {Name: "url", SchemaType: AttributeGlobal},
			"name": {Name: "name", SchemaType: 1, Localized: true, Type: 1, SortableInScopes: []int32{0}, UniqueInScopes: [][]byte{b("LIVE:LOCALE")}, DefaultValue: b("?"), IndexedDecimalPlaces: 0},
		},
		AssociatedData:             map[string]*pb.GrpcAssociatedDataSchema{"gallery": {Name: "gallery", Type: 7, Nullable: true}},
		SortableAttributeCompounds: map[string]*pb.GrpcSortableAttributeCompoundSchema{"byName": {Name: "byName", AttributeElements: [][]byte{b("name ASC")}, IndexedInScopes: []int32{0}}},
		References: map[string]*pb.GrpcReferenceSchema{
			"brand": {Name: "brand", EntityType: "Brand", ReferencedEntityTypeManaged: true, Cardinality: 1, GroupType: wrapperspb.String("BrandGroup"),
				FacetedInScopes: []int32{0}, FacetedPartially: [][]byte{b("LIVE:attribute(x)")}, ScopedIndexTypes: [][]byte{b("LIVE:PARTITIONING")},
				ScopedIndexedComponents: [][]byte{b("LIVE:REFERENCED_ENTITY")}, Bucketed: [][]byte{b("LIVE:b")},
				Attributes:                 map[string]*pb.GrpcAttributeSchema{"order": {Name: "order", SchemaType: 2, Type: 3, SortableInScopes: []int32{0}}},
				SortableAttributeCompounds: map[string]*pb.GrpcSortableAttributeCompoundSchema{"byOrder": {Name: "byOrder", AttributeElements: [][]byte{b("order")}}}},
			"categories": {Name: "categories", EntityType: "Category", ReferencedEntityTypeManaged: true, Cardinality: 3},
		},
	}
	category := &pb.GrpcEntitySchema{Name: "Category", EvolutionMode: []int32{0, 1}, WithHierarchy: true, HierarchyIndexedInScopes: []int32{0},
		References: map[string]*pb.GrpcReferenceSchema{
			"products": {Name: "products", EntityType: "Product", ReflectedReferenceName: wrapperspb.String("categories"),
				CardinalityInherited: true, Cardinality: 3, DescriptionInherited: true, Description: b("inherited text"),
				FacetedInherited: false, FacetedInScopes: []int32{0}, IndexedInherited: true, ScopedIndexTypes: [][]byte{b("ignored")},
				AttributeInheritanceBehavior: 1, AttributeInheritanceFilter: []string{"order"},
				Attributes: map[string]*pb.GrpcAttributeSchema{
					"order": {Name: "order", Inherited: true},
					"pin":   {Name: "pin", SchemaType: 2, Type: 4}}},
		},
	}
	brand := &pb.GrpcEntitySchema{Name: "Brand", References: map[string]*pb.GrpcReferenceSchema{
		"brandProducts": {Name: "brandProducts", EntityType: "Product", ReflectedReferenceName: wrapperspb.String("brand"), FacetedInherited: true},
	}}
	return cat, []*pb.GrpcEntitySchema{brand, category, product}
}

func mutationsOf(ms []*pb.GrpcModifyEntitySchemaMutation, entity string) []*pb.GrpcEntitySchemaMutation {
	for _, m := range ms {
		if m.GetEntityType() == entity {
			return m.GetEntitySchemaMutations()
		}
	}
	return nil
}

func TestPlanReplication(t *testing.T) {
	cat, ents := testSchemas()
	p := PlanReplication(cat, ents)

	if len(p.Catalog) != 1 {
		t.Fatalf("catalog mutations %d", len(p.Catalog))
	}
	g := p.Catalog[0].GetCreateGlobalAttributeSchemaMutation()
	if g.GetName() != "url" || !g.GetLocalized() || len(g.GetUniqueGloballyInScopes()) != 1 || !bytes.Equal(g.GetDescription(), msg("the URL")) {
		t.Errorf("global attribute %v", g)
	}

	body := mutationsOf(p.Bodies, "Product")
	var refused []int32
	var sawUseGlobal, sawCreate, sawAD, sawCompound, sawPrice, sawLocales bool
	for _, m := range body {
		switch {
		case m.GetDisallowEvolutionModeInEntitySchemaMutation() != nil:
			refused = m.GetDisallowEvolutionModeInEntitySchemaMutation().GetEvolutionModes()
		case m.GetUseGlobalAttributeSchemaMutation() != nil:
			sawUseGlobal = m.GetUseGlobalAttributeSchemaMutation().GetName() == "url"
		case m.GetCreateAttributeSchemaMutation() != nil:
			a := m.GetCreateAttributeSchemaMutation()
			sawCreate = a.GetName() == "name" && a.GetLocalized() && slices.Equal(a.GetSortableInScopes(), []int32{0}) &&
				bytes.Equal(a.GetUniqueInScopes()[0], msg("LIVE:LOCALE")) && bytes.Equal(a.GetDefaultValue(), msg("?"))
		case m.GetCreateAssociatedDataSchemaMutation() != nil:
			sawAD = m.GetCreateAssociatedDataSchemaMutation().GetType() == 7 && m.GetCreateAssociatedDataSchemaMutation().GetNullable()
		case m.GetCreateSortableAttributeCompoundSchemaMutation() != nil:
			sawCompound = slices.Equal(m.GetCreateSortableAttributeCompoundSchemaMutation().GetIndexedInScopes(), []int32{0})
		case m.GetSetEntitySchemaWithPriceMutation() != nil:
			pm := m.GetSetEntitySchemaWithPriceMutation()
			sawPrice = pm.GetWithPrice() && pm.GetIndexedPricePlaces() == 2 && len(pm.GetIndexedInScopes()) == 0 // not forced to LIVE
		case m.GetAllowLocaleInEntitySchemaMutation() != nil:
			sawLocales = len(m.GetAllowLocaleInEntitySchemaMutation().GetLocales()) == 2
		}
	}
	if !slices.Equal(refused, []int32{2, 3, 4, 5, 6, 7, 8}) {
		t.Errorf("refused evolution modes %v (source allows only ADDING_ATTRIBUTES; ADAPT stays allowed during the load)", refused)
	}
	if !sawUseGlobal || !sawCreate || !sawAD || !sawCompound || !sawPrice || !sawLocales {
		t.Errorf("Product body: global %v create %v ad %v compound %v price %v locales %v", sawUseGlobal, sawCreate, sawAD, sawCompound, sawPrice, sawLocales)
	}
	// Product refuses ADAPT_PRIMARY_KEY_GENERATION: re-applied after the load; Category allows it: nothing deferred
	if d := mutationsOf(p.Deferred, "Product"); len(d) != 1 || !slices.Equal(d[0].GetDisallowEvolutionModeInEntitySchemaMutation().GetEvolutionModes(), []int32{0}) {
		t.Errorf("deferred %v", d)
	}
	if mutationsOf(p.Deferred, "Category") != nil {
		t.Error("Category allows ADAPT: nothing to defer")
	}
	if h := mutationsOf(p.Bodies, "Category"); !slices.ContainsFunc(h, func(m *pb.GrpcEntitySchemaMutation) bool {
		return m.GetSetEntitySchemaWithHierarchyMutation().GetWithHierarchy() && slices.Equal(m.GetSetEntitySchemaWithHierarchyMutation().GetIndexedInScopes(), []int32{0})
	}) {
		t.Error("Category hierarchy")
	}

	plain := mutationsOf(p.Plain, "Product")
	var brand *pb.GrpcCreateReferenceSchemaMutation
	var refAttr, refCompound bool
	for _, m := range plain {
		if c := m.GetCreateReferenceSchemaMutation(); c.GetName() == "brand" {
			brand = c
		}
		if a := m.GetModifyReferenceAttributeSchemaMutation(); a.GetName() == "brand" && a.GetAttributeSchemaMutation().GetCreateAttributeSchemaMutation().GetName() == "order" {
			refAttr = true
		}
		if c := m.GetModifyReferenceSortableAttributeCompoundSchemaMutation(); c.GetName() == "brand" {
			refCompound = true
		}
	}
	if brand == nil || brand.GetReferencedEntityType() != "Brand" || brand.GetReferencedGroupType().GetValue() != "BrandGroup" || !brand.GetReferencedEntityTypeManaged() ||
		len(brand.GetFacetedPartially()) != 1 || len(brand.GetScopedIndexedComponents()) != 1 || len(brand.GetBucketedInScopes()) != 1 || len(brand.GetScopedIndexTypes()) != 1 {
		t.Errorf("brand reference (conditional facets, indexed components, buckets must survive): %v", brand)
	}
	if !refAttr || !refCompound {
		t.Errorf("reference attribute %v, compound %v", refAttr, refCompound)
	}

	refl := mutationsOf(p.Reflected, "Category")
	if len(refl) != 2 {
		t.Fatalf("Category reflected: %d mutations, want the reference and its own attribute", len(refl))
	}
	r := refl[0].GetCreateReflectedReferenceSchemaMutation()
	if r.GetReflectedReferenceName() != "categories" || r.GetCardinality() != 0 || len(r.GetDescription()) != 0 || !r.GetIndexedInherited() ||
		len(r.GetScopedIndexTypes()) != 0 || !slices.Equal(r.GetFacetedInScopes(), []int32{0}) || r.GetAttributeInheritanceBehavior() != 1 {
		t.Errorf("reflected reference overrides only what it does not inherit: %v", r)
	}
	if a := refl[1].GetModifyReferenceAttributeSchemaMutation(); a.GetAttributeSchemaMutation().GetCreateAttributeSchemaMutation().GetName() != "pin" {
		t.Errorf("own attribute of a reflected reference: %v", a)
	}
	if mutationsOf(p.Reflected, "Brand") != nil || len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "Brand.brandProducts") {
		t.Errorf("a reflected reference inheriting conditional facets is left out with a note: %v", p.Notes)
	}
	if !ReflectedNames(ents[1])["products"] || ReflectedNames(ents[2])["brand"] {
		t.Error("ReflectedNames")
	}
}

// The field numbers of the features the Java harness dropped, checked on the wire
// against the research tables (3.6-E and the read schema): a typo in the .proto would
// silently drop them again.
func TestSchemaFieldNumbersOnTheWire(t *testing.T) {
	raw, _ := proto.Marshal(&pb.GrpcCreateReferenceSchemaMutation{FacetedPartially: [][]byte{msg("x")}, ScopedIndexedComponents: [][]byte{msg("y")},
		BucketedInScopes: [][]byte{msg("z")}, BucketedPartiallyInScopes: [][]byte{msg("w")}, ReferencedGroupTypeManaged: true, ConflictResolutionOverride: 2})
	fields := map[protowire.Number]bool{}
	for len(raw) > 0 {
		n, typ, l := protowire.ConsumeTag(raw)
		raw = raw[l:]
		fields[n] = true
		l = protowire.ConsumeFieldValue(n, typ, raw)
		raw = raw[l:]
	}
	for _, n := range []protowire.Number{8, 14, 15, 16, 17, 18} {
		if !fields[n] {
			t.Errorf("GrpcCreateReferenceSchemaMutation field %d not written", n)
		}
	}
	var wire []byte
	for _, f := range []protowire.Number{29, 31, 32, 33} {
		wire = protowire.AppendTag(wire, f, protowire.BytesType)
		wire = protowire.AppendBytes(wire, msg("v"))
	}
	wire = protowire.AppendTag(wire, 18, protowire.BytesType)
	wire = protowire.AppendBytes(wire, msg("target")) // reflectedReferenceName StringValue
	var rs pb.GrpcReferenceSchema
	if err := proto.Unmarshal(wire, &rs); err != nil {
		t.Fatal(err)
	}
	if len(rs.GetScopedIndexedComponents()) != 1 || len(rs.GetFacetedPartially()) != 1 || len(rs.GetBucketed()) != 1 || len(rs.GetBucketedPartially()) != 1 ||
		rs.GetReflectedReferenceName().GetValue() != "target" {
		t.Errorf("read schema fields 29/31/32/33/18: %v", &rs)
	}
}
