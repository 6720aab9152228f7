package evita

import (
	"bytes"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/evita/pb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// msg encodes a message with one string field 1 (GrpcCurrency{code}, GrpcBigDecimal{valueString}).
func msg(s string) []byte {
	return protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), s)
}

// The trap the research note warns about, shown on the wire: a read price passed
// through as bytes arrives with its version (field 10) read as `indexed`.
func TestPriceCannotPassThrough(t *testing.T) {
	p := &pb.GrpcPrice{PriceId: 7, PriceList: "basic", Currency: msg("CZK"), PriceWithoutTax: msg("100.00"), TaxRate: msg("21"),
		PriceWithTax: msg("121.00"), Version: 3, Indexed: false}
	raw, err := proto.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var naive pb.GrpcUpsertPriceMutation
	if err := proto.Unmarshal(raw, &naive); err != nil {
		t.Fatal(err)
	}
	if !naive.GetIndexed() {
		t.Fatal("expected the verbatim copy to turn version 3 into indexed=true (if not, the trap is gone and this test is stale)")
	}
	m := transcodedPrice(t, p)
	if m.GetIndexed() || m.GetSellable() || m.GetPriceId() != 7 || m.GetPriceList() != "basic" ||
		!bytes.Equal(m.GetCurrency(), msg("CZK")) || !bytes.Equal(m.GetPriceWithTax(), msg("121.00")) {
		t.Fatalf("re-encoded price: %v", m)
	}
	p.Indexed = true
	if m := transcodedPrice(t, p); !m.GetIndexed() || !m.GetSellable() {
		t.Fatal("an indexed price must stay indexed (sellable is the deprecated alias)")
	}
}

// transcodedPrice is the price mutation the Transcoder writes for an entity with p.
func transcodedPrice(t *testing.T, p *pb.GrpcPrice) *pb.GrpcUpsertPriceMutation {
	t.Helper()
	m := upsertOf(t, &pb.GrpcSealedEntity{EntityType: "Product", PrimaryKey: 1, Prices: []*pb.GrpcPrice{p}}, CopyPlan{WithPrices: true})
	for _, x := range m.GetMutations() {
		if pm := x.GetUpsertPriceMutation(); pm != nil {
			return pm
		}
	}
	t.Fatal("no price mutation")
	return nil
}

// upsertOf transcodes e and decodes the request back into messages.
func upsertOf(t *testing.T, e *pb.GrpcSealedEntity, plan CopyPlan) *pb.GrpcEntityUpsertMutation {
	t.Helper()
	b, err := UpsertRequest(e, plan)
	if err != nil {
		t.Fatal(err)
	}
	var req pb.GrpcUpsertEntityRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		t.Fatalf("the transcoded request does not parse: %v", err)
	}
	return req.GetEntityMutation().GetEntityUpsertMutation()
}

func richEntity() *pb.GrpcSealedEntity {
	v := func(s string) []byte { return msg(s) }
	return &pb.GrpcSealedEntity{
		EntityType: "Product", PrimaryKey: 118772, Parent: wrapperspb.Int32(5), Scope: ScopeArchived,
		GlobalAttributes: map[string][]byte{"code": v("P-1"), "ean": v("859"), "nullOne": nil},
		LocalizedAttributes: map[string]*pb.GrpcLocalizedAttribute{
			"en": {Attributes: map[string][]byte{"name": v("Chair")}}, "cs": {Attributes: map[string][]byte{"name": v("Židle")}}},
		GlobalAssociatedData:     map[string][]byte{"gallery": v("[1,2]")},
		LocalizedAssociatedData:  map[string]*pb.GrpcLocalizedAssociatedData{"cs": {AssociatedData: map[string][]byte{"longText": v("...")}}},
		PriceInnerRecordHandling: InnerRecordLowestPrice,
		Prices: []*pb.GrpcPrice{{PriceId: 1, PriceList: "basic", Currency: v("CZK"), Version: 2, Indexed: true},
			{PriceId: 2, PriceList: "reference", Currency: v("EUR"), Version: 9, Indexed: false}},
		References: []*pb.GrpcReference{
			{ReferenceName: "brand", ReferencedEntityReference: &pb.GrpcEntityReference{EntityType: "Brand", PrimaryKey: 12}, ReferenceCardinality: 1, InternalPrimaryKey: 1,
				GroupReferenceType:  &pb.GrpcReference_GroupReferencedEntityReference{GroupReferencedEntityReference: &pb.GrpcEntityReference{EntityType: "BrandGroup", PrimaryKey: 3}},
				GlobalAttributes:    map[string][]byte{"order": v("4")},
				LocalizedAttributes: map[string]*pb.GrpcLocalizedAttribute{"en": {Attributes: map[string][]byte{"label": v("Main")}}}},
			{ReferenceName: "productsInCategory", ReferencedEntityReference: &pb.GrpcEntityReference{EntityType: "Category", PrimaryKey: 99}}, // reflected
			{ReferenceName: "parameters", ReferencedEntityReference: &pb.GrpcEntityReference{EntityType: "ParameterValue", PrimaryKey: 7}, ReferenceCardinality: 3, InternalPrimaryKey: 2,
				GroupReferenceType: &pb.GrpcReference_GroupReferencedEntity{GroupReferencedEntity: &pb.GrpcEntityReference{EntityType: "Parameter", PrimaryKey: 70}}},
		},
	}
}

func kinds(m *pb.GrpcEntityUpsertMutation) string {
	var k []string
	for _, x := range m.GetMutations() {
		r := x.ProtoReflect()
		field := r.WhichOneof(r.Descriptor().Oneofs().Get(0))
		k = append(k, strings.TrimSuffix(string(field.Name()), "Mutation"))
	}
	return strings.Join(k, " ")
}

func TestTranscoder(t *testing.T) {
	m := upsertOf(t, richEntity(), CopyPlan{Reflected: map[string]bool{"productsInCategory": true}, WithPrices: true})
	if m.GetEntityType() != "Product" || m.GetEntityPrimaryKey().GetValue() != 118772 || m.GetEntityExistence() != MustNotExist {
		t.Fatalf("envelope: %v", m)
	}
	want := "setEntityScope setParent " +
		"insertReference setReferenceGroup referenceAttribute referenceAttribute " + // brand: group, order, label@en
		"insertReference setReferenceGroup " + // parameters, group given as an entity
		"upsertAttribute upsertAttribute upsertAttribute upsertAttribute " + // code, ean, name@cs, name@en (nullOne skipped)
		"upsertAssociatedData upsertAssociatedData " + // gallery, longText@cs
		"setPriceInnerRecordHandling upsertPrice upsertPrice"
	if got := kinds(m); got != want {
		t.Fatalf("mutations\n got %s\nwant %s", got, want)
	}
	ms := m.GetMutations()
	if ms[1].GetSetParentMutation().GetPrimaryKey() != 5 || ms[0].GetSetEntityScopeMutation().GetScope() != ScopeArchived {
		t.Error("parent / scope")
	}
	ins := ms[2].GetInsertReferenceMutation()
	if ins.GetReferenceName() != "brand" || ins.GetReferencePrimaryKey() != 12 || ins.GetReferencedEntityType().GetValue() != "Brand" ||
		ins.GetReferenceCardinality() != 1 || ins.GetInternalPrimaryKey() != 1 {
		t.Errorf("insert reference %v", ins)
	}
	if g := ms[7].GetSetReferenceGroupMutation(); g.GetGroupType().GetValue() != "Parameter" || g.GetGroupPrimaryKey() != 70 || g.GetReferencePrimaryKey() != 7 {
		t.Errorf("group from a fetched group entity %v", g)
	}
	ra := ms[5].GetReferenceAttributeMutation()
	if u := ra.GetAttributeMutation().GetUpsertAttributeMutation(); u.GetAttributeName() != "label" || u.GetAttributeLocale().GetLanguageTag() != "en" || ra.GetInternalPrimaryKey() != 1 {
		t.Errorf("reference attribute %v", ra)
	}
	if a := ms[10].GetUpsertAttributeMutation(); a.GetAttributeName() != "name" || a.GetAttributeLocale().GetLanguageTag() != "cs" || !bytes.Equal(a.GetAttributeValue(), msg("Židle")) {
		t.Errorf("localized attribute %v", a)
	}
	if p := ms[16].GetUpsertPriceMutation(); p.GetPriceId() != 2 || p.GetIndexed() {
		t.Errorf("non-indexed price with version 9 must stay non-indexed: %v", p)
	}
	// same entity, same bytes (map order must not leak into the mutation)
	a, _ := UpsertRequest(richEntity(), CopyPlan{Reflected: map[string]bool{"productsInCategory": true}, WithPrices: true})
	for range 20 {
		b, _ := UpsertRequest(richEntity(), CopyPlan{Reflected: map[string]bool{"productsInCategory": true}, WithPrices: true})
		if !bytes.Equal(a, b) {
			t.Fatal("mutation bytes differ between two builds of the same entity")
		}
	}
	// a schema without prices: no price mutations at all; a LIVE root entity: no scope, no parent
	e := richEntity()
	e.Scope, e.Parent = ScopeLive, nil
	if got := kinds(upsertOf(t, e, CopyPlan{})); strings.Contains(got, "Price") || strings.Contains(got, "setParent") || strings.Contains(got, "setEntityScope") ||
		strings.Count(got, "insertReference") != 3 {
		t.Errorf("plain copy: %s", got)
	}
}

func TestQueriesUseOnlyParameters(t *testing.T) {
	for _, q := range []*pb.GrpcQueryRequest{
		CountQuery("Product"), PrimaryKeysQuery("Product", 2, 10000),
		FetchQuery("Product", []int32{1, 5, 9}, nil, false, true, true),
		FetchQuery("Product", []int32{1}, []string{"brand", "parameters"}, true, true, false),
	} {
		if n := strings.Count(q.GetQuery(), "?"); n != len(q.GetPositionalQueryParams()) {
			t.Errorf("%s: %d placeholders, %d params", q.GetQuery(), n, len(q.GetPositionalQueryParams()))
		}
		if strings.ContainsAny(q.GetQuery(), "0123456789'\"") {
			t.Errorf("literal in a SAFE-mode query: %s", q.GetQuery())
		}
	}
	f := FetchQuery("Product", []int32{1}, []string{"brand"}, true, false, true)
	if !strings.Contains(f.GetQuery(), "referenceContentWithAttributes(?)") || strings.Contains(f.GetQuery(), "referenceContentAll") ||
		strings.Contains(f.GetQuery(), "priceContentAll") || !strings.Contains(f.GetQuery(), "hierarchyContent()") {
		t.Errorf("reflected-aware fetch: %s", f.GetQuery())
	}
	if p := FetchQuery("T", []int32{4, 8}, nil, false, false, false).GetPositionalQueryParams()[1].GetIntegerArrayValue().GetValue(); len(p) != 2 || p[1] != 8 {
		t.Errorf("pk array param %v", p)
	}
}
