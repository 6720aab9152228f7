package evita

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/warmstat/warmstat/evita/pb"
)

// Attribute schema types and evolution modes used by the replication plan.
const (
	AttributeGlobal int32 = 0 // GLOBAL_SCHEMA: a catalog attribute used by the entity

	EvolutionAdaptPrimaryKeyGeneration int32 = 0
	evolutionModes                     int32 = 9 // ADAPT_PRIMARY_KEY_GENERATION .. UPDATING_REFERENCE_CARDINALITY
)

// ReplicationPlan is the schema of a source catalog as mutations for a fresh target
// catalog: global attributes, then three passes over the entity schemas so that
// cross-collection references resolve — bodies, plain references, reflected
// references. Deferred mutations apply after the load, before goLive.
type ReplicationPlan struct {
	Catalog   []*pb.GrpcLocalCatalogSchemaMutation
	Bodies    []*pb.GrpcModifyEntitySchemaMutation
	Plain     []*pb.GrpcModifyEntitySchemaMutation
	Reflected []*pb.GrpcModifyEntitySchemaMutation
	// Deferred re-applies the source's refusal of ADAPT_PRIMARY_KEY_GENERATION: during the
	// load it stays allowed so that explicit source primary keys are accepted.
	Deferred []*pb.GrpcModifyEntitySchemaMutation
	Notes    []string // what could not be replicated faithfully, and why
}

// Line is the evitaDB release line a replication plan is written for. The catalog a
// plan gives differs by line only where a line lacks a feature, and then on both sides
// of a comparison that spans the lines: the line is a condition of every run.
type Line string

const (
	// LineNative: the catalog as the source holds it (2026.2's protocol and features).
	LineNative Line = ""
	// Line2026_1: the catalog evitaDB 2026.1 accepts. That line's gRPC layer reads a new
	// reference's index types only from a later SetReferenceSchemaIndexedMutation (its
	// create mutation drops them: every reference would be unindexed, and a reflected
	// one refused), and it has no indexed components, conditional facets, histograms or
	// conflict-resolution overrides (2026.2's): those are left out, each with a note.
	Line2026_1 Line = "2026.1"
)

// PlanReplication maps a catalog schema and its entity schemas (in load order) to a
// replication plan. Unlike the Java harness it keeps conditional facets
// (facetedPartially), bucketed histograms, indexed components, reflected references'
// own settings and every description.
func PlanReplication(cat *pb.GrpcCatalogSchema, entities []*pb.GrpcEntitySchema) ReplicationPlan {
	return PlanReplicationFor(LineNative, LineNative, cat, entities)
}

// PlanReplicationFor is PlanReplication for a line's catalog (Line) on a target of
// the line target. A 2026.2 target takes the 2026.1 catalog as its create mutations
// say it; a 2026.1 target gets each reference's index types again after its creation.
func PlanReplicationFor(line, target Line, cat *pb.GrpcCatalogSchema, entities []*pb.GrpcEntitySchema) ReplicationPlan {
	p := planReplication(cat, entities)
	if line == Line2026_1 || target == Line2026_1 {
		p.for2026_1(target == Line2026_1)
	}
	return p
}

func planReplication(cat *pb.GrpcCatalogSchema, entities []*pb.GrpcEntitySchema) ReplicationPlan {
	var p ReplicationPlan
	for _, name := range sortedKeys(cat.GetAttributes()) {
		p.Catalog = append(p.Catalog, &pb.GrpcLocalCatalogSchemaMutation{Mutation: &pb.GrpcLocalCatalogSchemaMutation_CreateGlobalAttributeSchemaMutation{
			CreateGlobalAttributeSchemaMutation: globalAttribute(cat.GetAttributes()[name])}})
	}
	byName := map[string]*pb.GrpcEntitySchema{}
	for _, e := range entities {
		byName[e.GetName()] = e
	}
	for _, e := range entities {
		p.Bodies = append(p.Bodies, modify(e.GetName(), body(e)))
		if d := deferred(e); d != nil {
			p.Deferred = append(p.Deferred, modify(e.GetName(), d))
		}
		var plain, reflected []*pb.GrpcEntitySchemaMutation
		for _, rn := range sortedKeys(e.GetReferences()) {
			r := e.GetReferences()[rn]
			if r.GetReflectedReferenceName() == nil {
				plain = append(plain, plainReference(r)...)
				continue
			}
			ms, note := reflectedReference(e.GetName(), r, byName)
			if note != "" {
				p.Notes = append(p.Notes, note)
			}
			reflected = append(reflected, ms...)
		}
		if len(plain) > 0 {
			p.Plain = append(p.Plain, modify(e.GetName(), plain))
		}
		if len(reflected) > 0 {
			p.Reflected = append(p.Reflected, modify(e.GetName(), reflected))
		}
	}
	return p
}

// Apply walks the plan in the order a target must receive it — the catalog's
// mutations, every collection defined, then the bodies, plain and reflected passes —
// handing each step to the writer's own calls (a remote session, the embedded writer).
// Deferred mutations are not part of it: they apply after the load.
func (p ReplicationPlan) Apply(catalog func([]*pb.GrpcLocalCatalogSchemaMutation) error, define func(entityType string) error,
	update func(*pb.GrpcModifyEntitySchemaMutation) error) error {
	if len(p.Catalog) > 0 {
		if err := catalog(p.Catalog); err != nil {
			return err
		}
	}
	for _, m := range p.Bodies {
		if err := define(m.GetEntityType()); err != nil {
			return err
		}
	}
	for _, pass := range [][]*pb.GrpcModifyEntitySchemaMutation{p.Bodies, p.Plain, p.Reflected} {
		for _, m := range pass {
			if err := update(m); err != nil {
				return err
			}
		}
	}
	return nil
}

// ReflectedNames are the reflected references of an entity schema (never copied).
func ReflectedNames(e *pb.GrpcEntitySchema) map[string]bool {
	out := map[string]bool{}
	for n, r := range e.GetReferences() {
		if r.GetReflectedReferenceName() != nil {
			out[n] = true
		}
	}
	return out
}

func modify(entity string, ms []*pb.GrpcEntitySchemaMutation) *pb.GrpcModifyEntitySchemaMutation {
	return &pb.GrpcModifyEntitySchemaMutation{EntityType: entity, EntitySchemaMutations: ms}
}

func body(e *pb.GrpcEntitySchema) []*pb.GrpcEntitySchemaMutation {
	var ms []*pb.GrpcEntitySchemaMutation
	// A new entity schema allows every evolution mode: refuse the ones the source
	// refuses, except primary-key generation (see Deferred).
	allowed := map[int32]bool{}
	for _, m := range e.GetEvolutionMode() {
		allowed[m] = true
	}
	var refuse []int32
	for m := int32(0); m < evolutionModes; m++ {
		if !allowed[m] && m != EvolutionAdaptPrimaryKeyGeneration {
			refuse = append(refuse, m)
		}
	}
	if len(refuse) > 0 {
		ms = append(ms, &pb.GrpcEntitySchemaMutation{Mutation: &pb.GrpcEntitySchemaMutation_DisallowEvolutionModeInEntitySchemaMutation{
			DisallowEvolutionModeInEntitySchemaMutation: &pb.GrpcEvolutionModes{EvolutionModes: refuse}}})
	}
	if len(e.GetDescription()) > 0 {
		ms = append(ms, &pb.GrpcEntitySchemaMutation{Mutation: &pb.GrpcEntitySchemaMutation_ModifyEntitySchemaDescriptionMutation{
			ModifyEntitySchemaDescriptionMutation: &pb.GrpcModifyEntitySchemaDescriptionMutation{Description: e.GetDescription()}}})
	}
	if len(e.GetDeprecationNotice()) > 0 {
		ms = append(ms, &pb.GrpcEntitySchemaMutation{Mutation: &pb.GrpcEntitySchemaMutation_ModifyEntitySchemaDeprecationNoticeMutation{
			ModifyEntitySchemaDeprecationNoticeMutation: &pb.GrpcModifyEntitySchemaDeprecationNoticeMutation{DeprecationNotice: e.GetDeprecationNotice()}}})
	}
	ms = append(ms,
		&pb.GrpcEntitySchemaMutation{Mutation: &pb.GrpcEntitySchemaMutation_SetEntitySchemaWithGeneratedPrimaryKeyMutation{
			SetEntitySchemaWithGeneratedPrimaryKeyMutation: &pb.GrpcSetEntitySchemaWithGeneratedPrimaryKeyMutation{WithGeneratedPrimaryKey: e.GetWithGeneratedPrimaryKey()}}},
		// the source's scopes verbatim: a hierarchy or prices indexed in no scope stay so
		// (the harness forced LIVE)
		&pb.GrpcEntitySchemaMutation{Mutation: &pb.GrpcEntitySchemaMutation_SetEntitySchemaWithHierarchyMutation{SetEntitySchemaWithHierarchyMutation: &pb.GrpcSetEntitySchemaWithHierarchyMutation{
			WithHierarchy: e.GetWithHierarchy(), IndexedInScopes: e.GetHierarchyIndexedInScopes()}}},
		&pb.GrpcEntitySchemaMutation{Mutation: &pb.GrpcEntitySchemaMutation_SetEntitySchemaWithPriceMutation{SetEntitySchemaWithPriceMutation: &pb.GrpcSetEntitySchemaWithPriceMutation{
			WithPrice: e.GetWithPrice(), IndexedPricePlaces: e.GetIndexedPricePlaces(), IndexedInScopes: e.GetPriceIndexedInScopes()}}},
	)
	if len(e.GetLocales()) > 0 {
		ms = append(ms, &pb.GrpcEntitySchemaMutation{Mutation: &pb.GrpcEntitySchemaMutation_AllowLocaleInEntitySchemaMutation{
			AllowLocaleInEntitySchemaMutation: &pb.GrpcAllowLocaleInEntitySchemaMutation{Locales: e.GetLocales()}}})
	}
	if len(e.GetCurrencies()) > 0 {
		ms = append(ms, &pb.GrpcEntitySchemaMutation{Mutation: &pb.GrpcEntitySchemaMutation_AllowCurrencyInEntitySchemaMutation{
			AllowCurrencyInEntitySchemaMutation: &pb.GrpcAllowCurrencyInEntitySchemaMutation{Currencies: e.GetCurrencies()}}})
	}
	for _, n := range sortedKeys(e.GetAttributes()) {
		a := e.GetAttributes()[n]
		if a.GetSchemaType() == AttributeGlobal {
			ms = append(ms, &pb.GrpcEntitySchemaMutation{Mutation: &pb.GrpcEntitySchemaMutation_UseGlobalAttributeSchemaMutation{
				UseGlobalAttributeSchemaMutation: &pb.GrpcUseGlobalAttributeSchemaMutation{Name: n}}})
			continue
		}
		ms = append(ms, &pb.GrpcEntitySchemaMutation{Mutation: &pb.GrpcEntitySchemaMutation_CreateAttributeSchemaMutation{CreateAttributeSchemaMutation: attribute(a)}})
	}
	for _, n := range sortedKeys(e.GetAssociatedData()) {
		d := e.GetAssociatedData()[n]
		ms = append(ms, &pb.GrpcEntitySchemaMutation{Mutation: &pb.GrpcEntitySchemaMutation_CreateAssociatedDataSchemaMutation{CreateAssociatedDataSchemaMutation: &pb.GrpcCreateAssociatedDataSchemaMutation{
			Name: d.GetName(), Description: d.GetDescription(), DeprecationNotice: d.GetDeprecationNotice(), Type: d.GetType(),
			Localized: d.GetLocalized(), Nullable: d.GetNullable(), ConflictResolutionOverride: d.GetConflictResolutionOverride()}}})
	}
	for _, n := range sortedKeys(e.GetSortableAttributeCompounds()) {
		ms = append(ms, &pb.GrpcEntitySchemaMutation{Mutation: &pb.GrpcEntitySchemaMutation_CreateSortableAttributeCompoundSchemaMutation{
			CreateSortableAttributeCompoundSchemaMutation: compound(e.GetSortableAttributeCompounds()[n])}})
	}
	return ms
}

func deferred(e *pb.GrpcEntitySchema) []*pb.GrpcEntitySchemaMutation {
	for _, m := range e.GetEvolutionMode() {
		if m == EvolutionAdaptPrimaryKeyGeneration {
			return nil
		}
	}
	return []*pb.GrpcEntitySchemaMutation{&pb.GrpcEntitySchemaMutation{Mutation: &pb.GrpcEntitySchemaMutation_DisallowEvolutionModeInEntitySchemaMutation{
		DisallowEvolutionModeInEntitySchemaMutation: &pb.GrpcEvolutionModes{EvolutionModes: []int32{EvolutionAdaptPrimaryKeyGeneration}}}}}
}

func globalAttribute(a *pb.GrpcGlobalAttributeSchema) *pb.GrpcCreateGlobalAttributeSchemaMutation {
	return &pb.GrpcCreateGlobalAttributeSchemaMutation{Name: a.GetName(), Description: a.GetDescription(), DeprecationNotice: a.GetDeprecationNotice(),
		Localized: a.GetLocalized(), Nullable: a.GetNullable(), Representative: a.GetRepresentative(), Type: a.GetType(),
		IndexedDecimalPlaces: a.GetIndexedDecimalPlaces(), DefaultValue: a.GetDefaultValue(), UniqueInScopes: a.GetUniqueInScopes(),
		UniqueGloballyInScopes: a.GetUniqueGloballyInScopes(), FilterableInScopes: a.GetFilterableInScopes(),
		SortableInScopes: a.GetSortableInScopes(), ConflictResolutionOverride: a.GetConflictResolutionOverride()}
}

func attribute(a *pb.GrpcAttributeSchema) *pb.GrpcCreateAttributeSchemaMutation {
	return &pb.GrpcCreateAttributeSchemaMutation{Name: a.GetName(), Description: a.GetDescription(), DeprecationNotice: a.GetDeprecationNotice(),
		Localized: a.GetLocalized(), Nullable: a.GetNullable(), Representative: a.GetRepresentative(), Type: a.GetType(),
		IndexedDecimalPlaces: a.GetIndexedDecimalPlaces(), DefaultValue: a.GetDefaultValue(), UniqueInScopes: a.GetUniqueInScopes(),
		FilterableInScopes: a.GetFilterableInScopes(), SortableInScopes: a.GetSortableInScopes(),
		ConflictResolutionOverride: a.GetConflictResolutionOverride()}
}

func compound(c *pb.GrpcSortableAttributeCompoundSchema) *pb.GrpcCreateSortableAttributeCompoundSchemaMutation {
	return &pb.GrpcCreateSortableAttributeCompoundSchemaMutation{Name: c.GetName(), Description: c.GetDescription(),
		DeprecationNotice: c.GetDeprecationNotice(), AttributeElements: c.GetAttributeElements(), IndexedInScopes: c.GetIndexedInScopes()}
}

// referenceExtras are a reference's own attributes and compounds (inherited ones on a
// reflected reference are not re-declared: the engine refuses that).
func referenceExtras(r *pb.GrpcReferenceSchema) []*pb.GrpcEntitySchemaMutation {
	var ms []*pb.GrpcEntitySchemaMutation
	for _, n := range sortedKeys(r.GetAttributes()) {
		a := r.GetAttributes()[n]
		if a.GetInherited() {
			continue
		}
		ms = append(ms, &pb.GrpcEntitySchemaMutation{Mutation: &pb.GrpcEntitySchemaMutation_ModifyReferenceAttributeSchemaMutation{ModifyReferenceAttributeSchemaMutation: &pb.GrpcModifyReferenceAttributeSchemaMutation{
			Name: r.GetName(), AttributeSchemaMutation: &pb.GrpcAttributeSchemaMutation{Mutation: &pb.GrpcAttributeSchemaMutation_CreateAttributeSchemaMutation{
				CreateAttributeSchemaMutation: attribute(a)}}}}})
	}
	for _, n := range sortedKeys(r.GetSortableAttributeCompounds()) {
		c := r.GetSortableAttributeCompounds()[n]
		if c.GetInherited() {
			continue
		}
		ms = append(ms, &pb.GrpcEntitySchemaMutation{Mutation: &pb.GrpcEntitySchemaMutation_ModifyReferenceSortableAttributeCompoundSchemaMutation{
			ModifyReferenceSortableAttributeCompoundSchemaMutation: &pb.GrpcModifyReferenceSortableAttributeCompoundSchemaMutation{
				Name: r.GetName(), SortableAttributeCompoundSchemaMutation: &pb.GrpcSortableAttributeCompoundSchemaMutation{
					Mutation: &pb.GrpcSortableAttributeCompoundSchemaMutation_CreateSortableAttributeCompoundSchemaMutation{
						CreateSortableAttributeCompoundSchemaMutation: compound(c)}}}}})
	}
	return ms
}

func plainReference(r *pb.GrpcReferenceSchema) []*pb.GrpcEntitySchemaMutation {
	c := &pb.GrpcCreateReferenceSchemaMutation{Name: r.GetName(), Description: r.GetDescription(), DeprecationNotice: r.GetDeprecationNotice(),
		Cardinality: r.GetCardinality(), ReferencedEntityType: r.GetEntityType(), ReferencedEntityTypeManaged: r.GetReferencedEntityTypeManaged(),
		ReferencedGroupType: r.GetGroupType(), ReferencedGroupTypeManaged: r.GetReferencedGroupTypeManaged(),
		FacetedInScopes: r.GetFacetedInScopes(), ScopedIndexTypes: r.GetScopedIndexTypes(), ScopedIndexedComponents: r.GetScopedIndexedComponents(),
		FacetedPartially: r.GetFacetedPartially(), BucketedInScopes: r.GetBucketed(), BucketedPartiallyInScopes: r.GetBucketedPartially(),
		ConflictResolutionOverride: r.GetConflictResolutionOverride()}
	return append([]*pb.GrpcEntitySchemaMutation{&pb.GrpcEntitySchemaMutation{Mutation: &pb.GrpcEntitySchemaMutation_CreateReferenceSchemaMutation{CreateReferenceSchemaMutation: c}}},
		referenceExtras(r)...)
}

// reflectedReference overrides only what the reflected reference does not inherit. A
// reflected reference cannot inherit a conditional-facet expression (its paths are
// direction-specific), and the engine refuses every explicit alternative, so such a
// reference is left out with a note.
func reflectedReference(entity string, r *pb.GrpcReferenceSchema, byName map[string]*pb.GrpcEntitySchema) ([]*pb.GrpcEntitySchemaMutation, string) {
	target := r.GetReflectedReferenceName().GetValue()
	if r.GetFacetedInherited() {
		if owner := byName[r.GetEntityType()]; owner != nil && len(owner.GetReferences()[target].GetFacetedPartially()) > 0 {
			return nil, fmt.Sprintf("%s.%s: reflected reference left out - it would inherit the conditional facets of %s.%s, which evitaDB refuses",
				entity, r.GetName(), r.GetEntityType(), target)
		}
	}
	c := &pb.GrpcCreateReflectedReferenceSchemaMutation{Name: r.GetName(), ReferencedEntityType: r.GetEntityType(), ReflectedReferenceName: target,
		AttributeInheritanceBehavior: r.GetAttributeInheritanceBehavior(), AttributeInheritanceFilter: r.GetAttributeInheritanceFilter(),
		IndexedInherited: r.GetIndexedInherited(), FacetedInherited: r.GetFacetedInherited(),
		BucketedInScopes: r.GetBucketed(), BucketedPartiallyInScopes: r.GetBucketedPartially()}
	if !r.GetDescriptionInherited() {
		c.Description = r.GetDescription()
	}
	if !r.GetDeprecationNoticeInherited() {
		c.DeprecationNotice = r.GetDeprecationNotice()
	}
	if !r.GetCardinalityInherited() {
		c.Cardinality = r.GetCardinality() // inherited stays NOT_SPECIFIED (0); never sent explicitly
	}
	if !r.GetFacetedInherited() {
		c.FacetedInScopes, c.FacetedPartially = r.GetFacetedInScopes(), r.GetFacetedPartially()
	}
	if !r.GetIndexedInherited() {
		c.ScopedIndexTypes, c.ScopedIndexedComponents = r.GetScopedIndexTypes(), r.GetScopedIndexedComponents()
	}
	return append([]*pb.GrpcEntitySchemaMutation{&pb.GrpcEntitySchemaMutation{Mutation: &pb.GrpcEntitySchemaMutation_CreateReflectedReferenceSchemaMutation{CreateReflectedReferenceSchemaMutation: c}}},
		referenceExtras(r)...), ""
}

// for2026_1 rewrites the plan for evitaDB 2026.1's catalog (Line2026_1): what the line
// lacks is left out of every mutation, said once per schema element; on a 2026.1
// target (setIndexes) a reference's index types are sent again in a
// SetReferenceSchemaIndexedMutation after its creation.
func (p *ReplicationPlan) for2026_1(setIndexes bool) {
	note := func(where, what string) {
		p.Notes = append(p.Notes, fmt.Sprintf("%s: %s left out - evitaDB 2026.1 has none (the catalog written for 2026.1)", where, what))
	}
	// lost leaves out a reference's features 2026.1 lacks, each said once
	lost := func(where string, components, facets, buckets, bucketsPartially *[][]byte) {
		for _, f := range []struct {
			set  bool
			what string
		}{{len(*components) > 0, "its indexed components"}, {len(*facets) > 0, "its conditional facets"}, {len(*buckets)+len(*bucketsPartially) > 0, "its histogram"}} {
			if f.set {
				note(where, f.what)
			}
		}
		*components, *facets, *buckets, *bucketsPartially = nil, nil, nil, nil
	}
	for _, m := range p.Catalog {
		if g := m.GetCreateGlobalAttributeSchemaMutation(); g != nil && g.ConflictResolutionOverride != 0 {
			note("catalog attribute "+g.Name, "its conflict-resolution override")
			g.ConflictResolutionOverride = 0
		}
	}
	for _, pass := range [][]*pb.GrpcModifyEntitySchemaMutation{p.Bodies, p.Plain, p.Reflected, p.Deferred} {
		for _, em := range pass {
			var out []*pb.GrpcEntitySchemaMutation
			for _, m := range em.EntitySchemaMutations {
				out = append(out, m)
				where := em.EntityType + "."
				switch {
				case m.GetCreateReferenceSchemaMutation() != nil:
					c := m.GetCreateReferenceSchemaMutation()
					lost(where+c.Name, &c.ScopedIndexedComponents, &c.FacetedPartially, &c.BucketedInScopes, &c.BucketedPartiallyInScopes)
					if c.ConflictResolutionOverride != 0 {
						note(where+c.Name, "its conflict-resolution override")
						c.ConflictResolutionOverride = 0
					}
					if setIndexes {
						out = append(out, setIndexed(c.Name, c.ScopedIndexTypes)...)
					}
				case m.GetCreateReflectedReferenceSchemaMutation() != nil:
					c := m.GetCreateReflectedReferenceSchemaMutation()
					lost(where+c.Name, &c.ScopedIndexedComponents, &c.FacetedPartially, &c.BucketedInScopes, &c.BucketedPartiallyInScopes)
					if setIndexes && !c.IndexedInherited {
						out = append(out, setIndexed(c.Name, c.ScopedIndexTypes)...)
					}
				case m.GetCreateAttributeSchemaMutation() != nil && m.GetCreateAttributeSchemaMutation().ConflictResolutionOverride != 0:
					note(where+m.GetCreateAttributeSchemaMutation().Name, "its conflict-resolution override")
					m.GetCreateAttributeSchemaMutation().ConflictResolutionOverride = 0
				case m.GetCreateAssociatedDataSchemaMutation() != nil && m.GetCreateAssociatedDataSchemaMutation().ConflictResolutionOverride != 0:
					note(where+m.GetCreateAssociatedDataSchemaMutation().Name, "its conflict-resolution override")
					m.GetCreateAssociatedDataSchemaMutation().ConflictResolutionOverride = 0
				case m.GetModifyReferenceAttributeSchemaMutation() != nil:
					r := m.GetModifyReferenceAttributeSchemaMutation()
					if a := r.GetAttributeSchemaMutation().GetCreateAttributeSchemaMutation(); a != nil && a.ConflictResolutionOverride != 0 {
						note(where+r.Name+"."+a.Name, "its conflict-resolution override")
						a.ConflictResolutionOverride = 0
					}
				}
			}
			em.EntitySchemaMutations = out
		}
	}
}

// setIndexed sends a reference's index types again, where 2026.1 reads them. A scope
// the source leaves unindexed (NONE) is left out of the list: an empty list is
// "indexed in no scope" (2026.1's create would have indexed a reflected reference for
// filtering).
func setIndexed(name string, types [][]byte) []*pb.GrpcEntitySchemaMutation {
	if len(types) == 0 {
		return nil
	}
	var indexed [][]byte
	for _, t := range types {
		if scopedIndexType(t) != IndexNone {
			indexed = append(indexed, t)
		}
	}
	return []*pb.GrpcEntitySchemaMutation{{Mutation: &pb.GrpcEntitySchemaMutation_SetReferenceSchemaIndexedMutation{
		SetReferenceSchemaIndexedMutation: &pb.GrpcSetReferenceSchemaIndexedMutation{Name: name, ScopedIndexTypes: indexed}}}}
}

// scopedIndexType is the index type of a GrpcScopedReferenceIndexType (field 2; NONE
// when absent or unreadable: such a scope is not sent as indexed).
func scopedIndexType(b []byte) int32 {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return IndexNone
		}
		b = b[n:]
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return IndexNone
		}
		if num == 2 && typ == protowire.VarintType {
			v, _ := protowire.ConsumeVarint(b)
			return int32(v)
		}
		b = b[m:]
	}
	return IndexNone
}
