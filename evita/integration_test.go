package evita_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evita/pb"
	"github.com/warmstat/warmstat/internal/evitatest"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
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

func sourceSchema() (*pb.GrpcCatalogSchema, []*pb.GrpcEntitySchema) {
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
	return cat, []*pb.GrpcEntitySchema{brand, category, product}
}

// sourceEntities uses every kind of content: localized attributes, unique and range
// attributes, localized associated data, prices in two lists and currencies (one not
// indexed, with inner records), references with groups and attributes, and a category
// hierarchy.
func sourceEntities() []*pb.GrpcSealedEntity {
	loc := func(cs, en string) map[string]*pb.GrpcLocalizedAttribute {
		return map[string]*pb.GrpcLocalizedAttribute{"cs": {Attributes: map[string][]byte{"name": sv(cs), "url": sv("/cs/" + cs)}},
			"en": {Attributes: map[string][]byte{"name": sv(en), "url": sv("/en/" + en)}}}
	}
	var out []*pb.GrpcSealedEntity
	for i := int32(1); i <= 3; i++ {
		out = append(out, &pb.GrpcSealedEntity{EntityType: "Brand", PrimaryKey: i, LocalizedAttributes: loc(fmt.Sprint("značka-", i), fmt.Sprint("brand-", i))})
	}
	parents := map[int32]int32{2: 1, 3: 1, 4: 2}
	for i := int32(1); i <= 4; i++ {
		e := &pb.GrpcSealedEntity{EntityType: "Category", PrimaryKey: i, LocalizedAttributes: loc(fmt.Sprint("kategorie-", i), fmt.Sprint("category-", i))}
		if p, ok := parents[i]; ok {
			e.Parent = wrapperspb.Int32(p)
		}
		out = append(out, e)
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
		out = append(out, e)
	}
	return out
}

// ---- helpers

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// load creates catalog `name` on c from a schema plan and entities, then makes it ALIVE.
func load(t *testing.T, ctx context.Context, c *evita.Client, name string, plan evita.ReplicationPlan, ents []*pb.GrpcSealedEntity, schemas map[string]*pb.GrpcEntitySchema) {
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
		must(t, s.Upsert(ctx, evita.BuildUpsert(e, evita.CopyPlan{Reflected: evita.ReflectedNames(sch), WithPrices: sch.GetWithPrice()})))
	}
	for _, d := range plan.Deferred {
		must(t, s.UpdateEntitySchema(ctx, d))
	}
	alive, err := s.GoLive(ctx, 5*time.Minute, 30*time.Second, nil)
	must(t, err)
	if !alive {
		t.Fatalf("%s did not reach ALIVE", name)
	}
}

// copyCatalog is the loader's path through the driver: schema, then every entity by
// primary-key batches, then goLive.
func copyCatalog(t *testing.T, ctx context.Context, src, dst *evita.Client, from, to string) {
	t.Helper()
	rs, err := src.Open(ctx, from, false)
	must(t, err)
	defer rs.Close(ctx)
	cat, err := rs.CatalogSchema(ctx)
	must(t, err)
	types, err := rs.EntityTypes(ctx)
	must(t, err)
	slices.Sort(types)
	var schemas []*pb.GrpcEntitySchema
	byName := map[string]*pb.GrpcEntitySchema{}
	for _, ty := range types {
		sch, err := rs.EntitySchema(ctx, ty)
		must(t, err)
		schemas = append(schemas, sch)
		byName[ty] = sch
	}
	plan := evita.PlanReplication(cat, schemas)
	if len(plan.Notes) > 0 {
		t.Logf("replication notes: %v", plan.Notes)
	}
	var ents []*pb.GrpcSealedEntity
	for _, ty := range types {
		n, err := rs.Count(ctx, ty)
		must(t, err)
		pks, err := rs.PrimaryKeys(ctx, ty, n)
		must(t, err)
		for i := 0; i < len(pks); i += 2 { // tiny batches: exercise the batching
			batch, err := rs.Fetch(ctx, byName[ty], pks[i:min(i+2, len(pks))])
			must(t, err)
			ents = append(ents, batch...)
		}
	}
	load(t, ctx, dst, to, plan, ents, byName)
}

// dump reads a catalog's schemas and entities, everything included (reflected
// references too), in a comparable form: versions and reference internal keys zeroed,
// fields our subset does not declare dropped.
func dump(t *testing.T, ctx context.Context, c *evita.Client, name string) (map[string]*pb.GrpcEntitySchema, map[string][]*pb.GrpcSealedEntity) {
	t.Helper()
	s, err := c.Open(ctx, name, false)
	must(t, err)
	defer s.Close(ctx)
	types, err := s.EntityTypes(ctx)
	must(t, err)
	schemas := map[string]*pb.GrpcEntitySchema{}
	ents := map[string][]*pb.GrpcSealedEntity{}
	for _, ty := range types {
		sch, err := s.EntitySchema(ctx, ty)
		must(t, err)
		sch.Version = 0
		schemas[ty] = sch
		n, err := s.Count(ctx, ty)
		must(t, err)
		pks, err := s.PrimaryKeys(ctx, ty, n)
		must(t, err)
		all := &pb.GrpcEntitySchema{Name: ty, WithPrice: sch.GetWithPrice(), WithHierarchy: sch.GetWithHierarchy()}
		batch, err := s.Fetch(ctx, all, pks) // no references listed: fetch all, reflected ones included
		must(t, err)
		for _, e := range batch {
			dropUnknown(e.ProtoReflect())
			for _, p := range e.GetPrices() {
				p.Version = 0
			}
			// the server assigns reference internal keys itself (storage ids, not data)
			for _, r := range e.GetReferences() {
				r.InternalPrimaryKey = 0
			}
		}
		ents[ty] = batch
	}
	return schemas, ents
}

func catalogSchema(t *testing.T, ctx context.Context, c *evita.Client, name string) *pb.GrpcCatalogSchema {
	t.Helper()
	s, err := c.Open(ctx, name, false)
	must(t, err)
	defer s.Close(ctx)
	cs, err := s.CatalogSchema(ctx)
	must(t, err)
	return cs
}

// dropUnknown removes fields our subset does not declare (versions, name variants).
func dropUnknown(m protoreflect.Message) {
	m.SetUnknown(nil)
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool { dropUnknown(mv.Message()); return true })
		case fd.IsList() && fd.Message() != nil:
			for i := 0; i < v.List().Len(); i++ {
				dropUnknown(v.List().Get(i).Message())
			}
		case fd.Message() != nil && !fd.IsList() && !fd.IsMap():
			dropUnknown(v.Message())
		}
		return true
	})
}

// TestCopyAgainstRealServers: a catalog exercising every schema feature and every kind
// of content is defined on one real server, copied to another with the driver, and
// the copy proven equal — schema field by field, every entity field by field, counts
// equal, target ALIVE.
func TestCopyAgainstRealServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two evitaDB servers")
	}
	_, src := evitatest.Start(t)
	_, dst := evitatest.Start(t)
	ctx := context.Background()

	cat, schemas := sourceSchema()
	byName := map[string]*pb.GrpcEntitySchema{}
	for _, s := range schemas {
		byName[s.GetName()] = s
	}
	load(t, ctx, src, "source", evita.PlanReplication(cat, schemas), sourceEntities(), byName)
	copyCatalog(t, ctx, src, dst, "source", "target")

	state, ok, err := dst.CatalogState(ctx, "target")
	if err != nil || !ok || state != evita.CatalogAlive {
		t.Fatalf("target state %d known %v: %v", state, ok, err)
	}
	ss, se := dump(t, ctx, src, "source")
	ts, te := dump(t, ctx, dst, "target")
	sc, tc := catalogSchema(t, ctx, src, "source"), catalogSchema(t, ctx, dst, "target")
	if !proto.Equal(sc.GetAttributes()["url"], tc.GetAttributes()["url"]) || len(tc.GetAttributes()) != 1 {
		t.Errorf("global attributes differ:\nsource %v\ntarget %v", sc.GetAttributes(), tc.GetAttributes())
	}
	for ty, s := range ss {
		if !proto.Equal(s, ts[ty]) {
			t.Errorf("schema %s differs:\nsource %v\ntarget %v", ty, s, ts[ty])
		}
		if len(se[ty]) != len(te[ty]) {
			t.Errorf("%s: %d entities in source, %d in target", ty, len(se[ty]), len(te[ty]))
			continue
		}
		for i := range se[ty] {
			if !proto.Equal(se[ty][i], te[ty][i]) {
				t.Errorf("%s %d differs:\nsource %v\ntarget %v", ty, se[ty][i].GetPrimaryKey(), se[ty][i], te[ty][i])
			}
		}
	}
	if len(ss) != 3 || len(se["Product"]) != 6 || len(se["Category"]) != 4 {
		t.Fatalf("source dump incomplete: %d schemas, %d products, %d categories", len(ss), len(se["Product"]), len(se["Category"]))
	}
	// the features the Java harness lost are really there
	p := se["Product"][0]
	if len(te["Category"][1].GetReferences()) == 0 {
		t.Error("reflected references were not rebuilt on the target")
	}
	if te["Category"][1].GetParent().GetValue() != 1 {
		t.Errorf("hierarchy parent not copied: %v", te["Category"][1].GetParent())
	}
	if len(p.GetPrices()) != 4 {
		t.Errorf("prices %d", len(p.GetPrices()))
	}
}
