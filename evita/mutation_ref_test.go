package evita

import (
	"github.com/warmstat/warmstat/evita/pb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// This file keeps the message-level mapping the Transcoder replaced — decode the entity,
// build the upsert as Go messages — as the oracle the wire-level one is held to
// (TestTranscoderMatchesMessageMapping): the same entity must give the same upsert.

// buildUpsert is the message-level mapping: one source entity to the upsert that
// recreates it, with the source primary key and MUST_NOT_EXIST.
func buildUpsert(e *pb.GrpcSealedEntity, plan CopyPlan) *pb.GrpcEntityUpsertMutation {
	// the local mutations live in one slab, sized exactly: a Product has hundreds, and
	// one allocation for all of them (instead of one each, plus the slice's growth) is
	// a large share of the loader's own garbage
	slab := make([]pb.GrpcLocalMutation, countMutations(e, plan))
	ms := make([]*pb.GrpcLocalMutation, 0, len(slab))
	next := func() *pb.GrpcLocalMutation {
		m := &slab[len(ms)]
		ms = append(ms, m)
		return m
	}
	if e.GetScope() != ScopeLive {
		next().Mutation = &pb.GrpcLocalMutation_SetEntityScopeMutation{
			SetEntityScopeMutation: &pb.GrpcSetEntityScopeMutation{Scope: e.GetScope()}}
	}
	if p := e.GetParent(); p != nil {
		next().Mutation = &pb.GrpcLocalMutation_SetParentMutation{
			SetParentMutation: &pb.GrpcSetParentMutation{PrimaryKey: p.GetValue()}}
	}
	var locales localeCache
	for _, r := range e.GetReferences() {
		if plan.Reflected[r.GetReferenceName()] {
			continue
		}
		ref := r.GetReferencedEntityReference()
		next().Mutation = &pb.GrpcLocalMutation_InsertReferenceMutation{InsertReferenceMutation: &pb.GrpcInsertReferenceMutation{
			ReferenceName: r.GetReferenceName(), ReferencePrimaryKey: ref.GetPrimaryKey(), ReferenceCardinality: r.GetReferenceCardinality(),
			ReferencedEntityType: wrapperspb.String(ref.GetEntityType()), InternalPrimaryKey: r.GetInternalPrimaryKey()}}
		if g := group(r); g != nil {
			next().Mutation = &pb.GrpcLocalMutation_SetReferenceGroupMutation{SetReferenceGroupMutation: &pb.GrpcSetReferenceGroupMutation{
				ReferenceName: r.GetReferenceName(), ReferencePrimaryKey: ref.GetPrimaryKey(), GroupType: wrapperspb.String(g.GetEntityType()),
				GroupPrimaryKey: g.GetPrimaryKey(), InternalPrimaryKey: r.GetInternalPrimaryKey()}}
		}
		eachAttribute(r.GetGlobalAttributes(), r.GetLocalizedAttributes(), &locales, func(u *pb.GrpcUpsertAttributeMutation) {
			next().Mutation = &pb.GrpcLocalMutation_ReferenceAttributeMutation{ReferenceAttributeMutation: &pb.GrpcReferenceAttributeMutation{
				ReferenceName: r.GetReferenceName(), ReferencePrimaryKey: ref.GetPrimaryKey(), InternalPrimaryKey: r.GetInternalPrimaryKey(),
				AttributeMutation: &pb.GrpcAttributeMutation{Mutation: &pb.GrpcAttributeMutation_UpsertAttributeMutation{UpsertAttributeMutation: u}}}}
		})
	}
	eachAttribute(e.GetGlobalAttributes(), e.GetLocalizedAttributes(), &locales, func(u *pb.GrpcUpsertAttributeMutation) {
		next().Mutation = &pb.GrpcLocalMutation_UpsertAttributeMutation{UpsertAttributeMutation: u}
	})
	for _, k := range sortedKeys(e.GetGlobalAssociatedData()) {
		if v := e.GetGlobalAssociatedData()[k]; len(v) > 0 {
			next().Mutation = associatedData(k, nil, v)
		}
	}
	for _, loc := range sortedKeys(e.GetLocalizedAssociatedData()) {
		data := e.GetLocalizedAssociatedData()[loc].GetAssociatedData()
		for _, k := range sortedKeys(data) {
			if v := data[k]; len(v) > 0 {
				next().Mutation = associatedData(k, locales.get(loc), v)
			}
		}
	}
	if plan.WithPrices {
		if h := e.GetPriceInnerRecordHandling(); h != InnerRecordUnknown {
			next().Mutation = &pb.GrpcLocalMutation_SetPriceInnerRecordHandlingMutation{
				SetPriceInnerRecordHandlingMutation: &pb.GrpcSetPriceInnerRecordHandlingMutation{PriceInnerRecordHandling: h}}
		}
		for _, p := range e.GetPrices() {
			next().Mutation = &pb.GrpcLocalMutation_UpsertPriceMutation{UpsertPriceMutation: priceMutation(p)}
		}
	}
	return &pb.GrpcEntityUpsertMutation{EntityType: e.GetEntityType(), EntityPrimaryKey: wrapperspb.Int32(e.GetPrimaryKey()),
		EntityExistence: MustNotExist, Mutations: ms}
}

// priceMutation re-encodes a read price as an upsert. It cannot pass through as bytes:
// GrpcPrice field 10 is its version, while GrpcUpsertPriceMutation field 10 is
// `indexed` — a verbatim copy would index every non-indexed price with a version.
// The value messages (currency, inner record id, amounts, validity) are identical on
// both sides and are copied as bytes.
func priceMutation(p *pb.GrpcPrice) *pb.GrpcUpsertPriceMutation {
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

// countMutations is the number of local mutations BuildUpsert makes of e.
func countMutations(e *pb.GrpcSealedEntity, plan CopyPlan) int {
	n := 0
	if e.GetScope() != ScopeLive {
		n++
	}
	if e.GetParent() != nil {
		n++
	}
	for _, r := range e.GetReferences() {
		if plan.Reflected[r.GetReferenceName()] {
			continue
		}
		n++
		if group(r) != nil {
			n++
		}
		n += countValues(r.GetGlobalAttributes(), r.GetLocalizedAttributes())
	}
	n += countValues(e.GetGlobalAttributes(), e.GetLocalizedAttributes())
	n += countNonEmpty(e.GetGlobalAssociatedData())
	for _, d := range e.GetLocalizedAssociatedData() {
		n += countNonEmpty(d.GetAssociatedData())
	}
	if plan.WithPrices {
		if e.GetPriceInnerRecordHandling() != InnerRecordUnknown {
			n++
		}
		n += len(e.GetPrices())
	}
	return n
}

func countValues(global map[string][]byte, localized map[string]*pb.GrpcLocalizedAttribute) int {
	n := countNonEmpty(global)
	for _, l := range localized {
		n += countNonEmpty(l.GetAttributes())
	}
	return n
}

func countNonEmpty(m map[string][]byte) int {
	n := 0
	for _, v := range m {
		if len(v) > 0 {
			n++
		}
	}
	return n
}

// localeCache shares one locale message per language tag within an upsert.
type localeCache []*pb.GrpcLocale

func (c *localeCache) get(tag string) *pb.GrpcLocale {
	for _, l := range *c {
		if l.LanguageTag == tag {
			return l
		}
	}
	l := &pb.GrpcLocale{LanguageTag: tag}
	*c = append(*c, l)
	return l
}

// eachAttribute yields global attributes, then localized ones per locale, sorted;
// null (empty) values are skipped.
func eachAttribute(global map[string][]byte, localized map[string]*pb.GrpcLocalizedAttribute, locales *localeCache, fn func(*pb.GrpcUpsertAttributeMutation)) {
	for _, k := range sortedKeys(global) {
		if v := global[k]; len(v) > 0 {
			fn(&pb.GrpcUpsertAttributeMutation{AttributeName: k, AttributeValue: v})
		}
	}
	for _, loc := range sortedKeys(localized) {
		attrs := localized[loc].GetAttributes()
		for _, k := range sortedKeys(attrs) {
			if v := attrs[k]; len(v) > 0 {
				fn(&pb.GrpcUpsertAttributeMutation{AttributeName: k, AttributeLocale: locales.get(loc), AttributeValue: v})
			}
		}
	}
}

func associatedData(name string, loc *pb.GrpcLocale, v []byte) *pb.GrpcLocalMutation_UpsertAssociatedDataMutation {
	return &pb.GrpcLocalMutation_UpsertAssociatedDataMutation{UpsertAssociatedDataMutation: &pb.GrpcUpsertAssociatedDataMutation{
		AssociatedDataName: name, AssociatedDataLocale: loc, AssociatedDataValue: v}}
}
