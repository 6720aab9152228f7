package evita

import (
	"slices"

	"github.com/warmstat/warmstat/evita/pb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// CopyPlan says what of a collection's entities is copied.
type CopyPlan struct {
	// Reflected reference names are skipped: the engine rebuilds them from the owning
	// references of the other collection.
	Reflected map[string]bool
	// WithPrices: copy prices and inner-record handling (only when the schema has prices).
	WithPrices bool
}

// BuildUpsert turns one source entity into the upsert that recreates it in the target,
// with the source primary key and MUST_NOT_EXIST. Mutations come in the harness's order
// — scope, parent, references (insert, group, attributes), attributes, associated data,
// inner-record handling, prices — with map entries sorted by key so that the same
// entity always gives the same bytes. Unlike the Java harness it copies the hierarchy
// parent.
func BuildUpsert(e *pb.GrpcSealedEntity, plan CopyPlan) *pb.GrpcEntityUpsertMutation {
	var ms []*pb.GrpcLocalMutation
	add := func(m *pb.GrpcLocalMutation) { ms = append(ms, m) }
	if e.GetScope() != ScopeLive {
		add(&pb.GrpcLocalMutation{Mutation: &pb.GrpcLocalMutation_SetEntityScopeMutation{
			SetEntityScopeMutation: &pb.GrpcSetEntityScopeMutation{Scope: e.GetScope()}}})
	}
	if p := e.GetParent(); p != nil {
		add(&pb.GrpcLocalMutation{Mutation: &pb.GrpcLocalMutation_SetParentMutation{
			SetParentMutation: &pb.GrpcSetParentMutation{PrimaryKey: p.GetValue()}}})
	}
	for _, r := range e.GetReferences() {
		if plan.Reflected[r.GetReferenceName()] {
			continue
		}
		ref := r.GetReferencedEntityReference()
		add(&pb.GrpcLocalMutation{Mutation: &pb.GrpcLocalMutation_InsertReferenceMutation{InsertReferenceMutation: &pb.GrpcInsertReferenceMutation{
			ReferenceName: r.GetReferenceName(), ReferencePrimaryKey: ref.GetPrimaryKey(), ReferenceCardinality: r.GetReferenceCardinality(),
			ReferencedEntityType: wrapperspb.String(ref.GetEntityType()), InternalPrimaryKey: r.GetInternalPrimaryKey()}}})
		if g := group(r); g != nil {
			add(&pb.GrpcLocalMutation{Mutation: &pb.GrpcLocalMutation_SetReferenceGroupMutation{SetReferenceGroupMutation: &pb.GrpcSetReferenceGroupMutation{
				ReferenceName: r.GetReferenceName(), ReferencePrimaryKey: ref.GetPrimaryKey(), GroupType: wrapperspb.String(g.GetEntityType()),
				GroupPrimaryKey: g.GetPrimaryKey(), InternalPrimaryKey: r.GetInternalPrimaryKey()}}})
		}
		eachAttribute(r.GetGlobalAttributes(), r.GetLocalizedAttributes(), func(u *pb.GrpcUpsertAttributeMutation) {
			add(&pb.GrpcLocalMutation{Mutation: &pb.GrpcLocalMutation_ReferenceAttributeMutation{ReferenceAttributeMutation: &pb.GrpcReferenceAttributeMutation{
				ReferenceName: r.GetReferenceName(), ReferencePrimaryKey: ref.GetPrimaryKey(), InternalPrimaryKey: r.GetInternalPrimaryKey(),
				AttributeMutation: &pb.GrpcAttributeMutation{Mutation: &pb.GrpcAttributeMutation_UpsertAttributeMutation{UpsertAttributeMutation: u}}}}})
		})
	}
	eachAttribute(e.GetGlobalAttributes(), e.GetLocalizedAttributes(), func(u *pb.GrpcUpsertAttributeMutation) {
		add(&pb.GrpcLocalMutation{Mutation: &pb.GrpcLocalMutation_UpsertAttributeMutation{UpsertAttributeMutation: u}})
	})
	for _, k := range sortedKeys(e.GetGlobalAssociatedData()) {
		if v := e.GetGlobalAssociatedData()[k]; len(v) > 0 {
			add(associatedData(k, nil, v))
		}
	}
	for _, loc := range sortedKeys(e.GetLocalizedAssociatedData()) {
		data := e.GetLocalizedAssociatedData()[loc].GetAssociatedData()
		for _, k := range sortedKeys(data) {
			if v := data[k]; len(v) > 0 {
				add(associatedData(k, &pb.GrpcLocale{LanguageTag: loc}, v))
			}
		}
	}
	if plan.WithPrices {
		if h := e.GetPriceInnerRecordHandling(); h != InnerRecordUnknown {
			add(&pb.GrpcLocalMutation{Mutation: &pb.GrpcLocalMutation_SetPriceInnerRecordHandlingMutation{
				SetPriceInnerRecordHandlingMutation: &pb.GrpcSetPriceInnerRecordHandlingMutation{PriceInnerRecordHandling: h}}})
		}
		for _, p := range e.GetPrices() {
			add(&pb.GrpcLocalMutation{Mutation: &pb.GrpcLocalMutation_UpsertPriceMutation{UpsertPriceMutation: PriceMutation(p)}})
		}
	}
	return &pb.GrpcEntityUpsertMutation{EntityType: e.GetEntityType(), EntityPrimaryKey: wrapperspb.Int32(e.GetPrimaryKey()),
		EntityExistence: MustNotExist, Mutations: ms}
}

// PriceMutation re-encodes a read price as an upsert. It cannot pass through as bytes:
// GrpcPrice field 10 is its version, while GrpcUpsertPriceMutation field 10 is
// `indexed` — a verbatim copy would index every non-indexed price with a version.
// The value messages (currency, inner record id, amounts, validity) are identical on
// both sides and are copied as bytes.
func PriceMutation(p *pb.GrpcPrice) *pb.GrpcUpsertPriceMutation {
	return &pb.GrpcUpsertPriceMutation{PriceId: p.GetPriceId(), PriceList: p.GetPriceList(), Currency: p.GetCurrency(),
		InnerRecordId: p.GetInnerRecordId(), PriceWithoutTax: p.GetPriceWithoutTax(), TaxRate: p.GetTaxRate(),
		PriceWithTax: p.GetPriceWithTax(), Validity: p.GetValidity(), Sellable: p.GetIndexed(), Indexed: p.GetIndexed()}
}

func group(r *pb.GrpcReference) *pb.GrpcEntityReference {
	switch g := r.GetGroupReferenceType().(type) {
	case *pb.GrpcReference_GroupReferencedEntityReference:
		return g.GroupReferencedEntityReference
	case *pb.GrpcReference_GroupReferencedEntity:
		return g.GroupReferencedEntity
	}
	return nil
}

// eachAttribute yields global attributes, then localized ones per locale, sorted;
// null (empty) values are skipped.
func eachAttribute(global map[string][]byte, localized map[string]*pb.GrpcLocalizedAttribute, fn func(*pb.GrpcUpsertAttributeMutation)) {
	for _, k := range sortedKeys(global) {
		if v := global[k]; len(v) > 0 {
			fn(&pb.GrpcUpsertAttributeMutation{AttributeName: k, AttributeValue: v})
		}
	}
	for _, loc := range sortedKeys(localized) {
		attrs := localized[loc].GetAttributes()
		for _, k := range sortedKeys(attrs) {
			if v := attrs[k]; len(v) > 0 {
				fn(&pb.GrpcUpsertAttributeMutation{AttributeName: k, AttributeLocale: &pb.GrpcLocale{LanguageTag: loc}, AttributeValue: v})
			}
		}
	}
}

func associatedData(name string, loc *pb.GrpcLocale, v []byte) *pb.GrpcLocalMutation {
	return &pb.GrpcLocalMutation{Mutation: &pb.GrpcLocalMutation_UpsertAssociatedDataMutation{UpsertAssociatedDataMutation: &pb.GrpcUpsertAssociatedDataMutation{
		AssociatedDataName: name, AssociatedDataLocale: loc, AssociatedDataValue: v}}}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
