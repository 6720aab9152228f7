package evita

import (
	"bytes"
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// The copy of an entity is made on the wire: a fetched GrpcSealedEntity's bytes are
// read field by field and the GrpcUpsertEntityRequest that recreates it is written
// directly, without decoding either into Go messages. Decoding, building messages and
// encoding them again was most of warmstat's own CPU during a load (allocations for
// every map entry, reference and price of every Product); here an entity costs no
// garbage once the Transcoder's scratch has grown to the largest entity.
//
// What is copied, and in which order (the harness's): scope, parent, references
// (insert, group, attributes), attributes, associated data, inner-record handling,
// prices — map entries sorted by key, so the same entity always gives the same bytes.
// Unlike the Java harness it copies the hierarchy parent. Reflected references are
// skipped (the engine rebuilds them from the owning side); empty (null) values too.

// Field numbers read: GrpcSealedEntity, GrpcReference, GrpcPrice.
const (
	entType, entPK, entParent, entAttrs, entLocAttrs = 1, 2, 5, 8, 9
	entPrices, entInnerRecord, entRefs               = 10, 12, 13
	entAssoc, entLocAssoc, entScope                  = 14, 15, 17

	refName, refTarget, refGroup, refGroupEntity = 1, 3, 5, 6
	refAttrs, refLocAttrs, refCardinality        = 7, 8, 9
	refInternal                                  = 10

	// GrpcPrice 1–8 are GrpcUpsertPriceMutation 1–8; GrpcPrice 10 is its version and
	// 11 `indexed`, which the mutation has at 10 (and at 9, as the deprecated
	// `sellable`): a price cannot pass through as bytes
	priceIndexed = 11
)

// Field numbers written: GrpcLocalMutation's oneof.
const (
	lmUpsertAttribute, lmUpsertAssociatedData, lmUpsertPrice = 2, 4, 6
	lmInnerRecord, lmSetParent, lmInsertReference            = 8, 9, 11
	lmSetReferenceGroup, lmReferenceAttribute, lmSetScope    = 13, 15, 16
	// GrpcEntityUpsertMutation.mutations
	upsertMutations = 4
)

// CopyPlan says what of a collection's entities is copied.
type CopyPlan struct {
	// Reflected reference names are skipped: the engine rebuilds them from the owning
	// references of the other collection.
	Reflected map[string]bool
	// WithPrices: copy prices and inner-record handling (only when the schema has prices).
	WithPrices bool
}

// Entity names what was transcoded, for messages about it (the type as bytes of the
// entity: a string of its own would be the only allocation per entity).
type Entity struct {
	Type       []byte
	PrimaryKey int32
}

// kv is a map entry: key and value bytes.
type kv struct{ k, v []byte }

// Transcoder writes upsert requests from fetched entities. Its scratch is reused from
// one entity to the next: not safe for concurrent use.
type Transcoder struct {
	Plan CopyPlan

	attrs, locAttrs, assoc, locAssoc []kv
	refAttrs, refLocAttrs, perLocale []kv
	prices, refs                     [][]byte
	body                             []byte
}

// field is one field of a message being read.
type field struct {
	n   protowire.Number
	typ protowire.Type
	v   []byte // a length-delimited field's bytes
	u   uint64 // a varint's value
}

// fields reads a message's fields one by one.
type fields struct {
	m   []byte
	f   field
	err error
}

func (r *fields) next() bool {
	if len(r.m) == 0 || r.err != nil {
		return false
	}
	n, typ, k := protowire.ConsumeTag(r.m)
	if k < 0 {
		r.err = protowire.ParseError(k)
		return false
	}
	r.m = r.m[k:]
	r.f = field{n: n, typ: typ}
	switch typ {
	case protowire.VarintType:
		r.f.u, k = protowire.ConsumeVarint(r.m)
	case protowire.BytesType:
		r.f.v, k = protowire.ConsumeBytes(r.m)
	default:
		k = protowire.ConsumeFieldValue(n, typ, r.m)
	}
	if k < 0 {
		r.err = fmt.Errorf("field %d: %w", n, protowire.ParseError(k))
		return false
	}
	r.m = r.m[k:]
	return true
}

func (f field) is(n protowire.Number, typ protowire.Type) bool { return f.n == n && f.typ == typ }

// Upsert appends to dst the GrpcUpsertEntityRequest (MUST_NOT_EXIST, the source's
// primary key) that recreates the GrpcSealedEntity encoded in entity.
func (t *Transcoder) Upsert(dst, entity []byte) ([]byte, Entity, error) {
	var typ, parent []byte
	var pk, inner, scope uint64
	hasParent := false
	t.attrs, t.locAttrs, t.assoc, t.locAssoc = t.attrs[:0], t.locAttrs[:0], t.assoc[:0], t.locAssoc[:0]
	t.prices, t.refs = t.prices[:0], t.refs[:0]
	var err error
	r := fields{m: entity}
	for r.next() && err == nil {
		switch f := r.f; {
		case f.is(entType, protowire.BytesType):
			typ = f.v
		case f.is(entPK, protowire.VarintType):
			pk = f.u
		case f.is(entParent, protowire.BytesType):
			parent, hasParent = f.v, true
		case f.is(entAttrs, protowire.BytesType):
			t.attrs, err = appendEntry(t.attrs, f.v)
		case f.is(entLocAttrs, protowire.BytesType):
			t.locAttrs, err = appendEntry(t.locAttrs, f.v)
		case f.is(entPrices, protowire.BytesType):
			t.prices = append(t.prices, f.v)
		case f.is(entInnerRecord, protowire.VarintType):
			inner = f.u
		case f.is(entRefs, protowire.BytesType):
			t.refs = append(t.refs, f.v)
		case f.is(entAssoc, protowire.BytesType):
			t.assoc, err = appendEntry(t.assoc, f.v)
		case f.is(entLocAssoc, protowire.BytesType):
			t.locAssoc, err = appendEntry(t.locAssoc, f.v)
		case f.is(entScope, protowire.VarintType):
			scope = f.u
		}
	}
	id := Entity{Type: typ, PrimaryKey: int32(pk)}
	fail := func(what string, err error) ([]byte, Entity, error) {
		return dst, id, fmt.Errorf("entity %s %d%s: %w", id.Type, id.PrimaryKey, what, err)
	}
	if err = cmpErr(r.err, err); err != nil {
		return fail("", err)
	}
	b := t.body[:0]
	if int32(scope) != ScopeLive {
		b = varintMutation(b, lmSetScope, scope)
	}
	if hasParent {
		var p uint64
		pr := fields{m: parent}
		for pr.next() {
			if pr.f.is(1, protowire.VarintType) {
				p = pr.f.u
			}
		}
		if pr.err != nil {
			return fail(" parent", pr.err)
		}
		b = varintMutation(b, lmSetParent, p)
	}
	for _, ref := range t.refs {
		if b, err = t.reference(b, ref); err != nil {
			return fail(" reference", err)
		}
	}
	if b, err = t.attributes(b, t.attrs, t.locAttrs, nil); err != nil {
		return fail(" attributes", err)
	}
	if b, err = t.associatedData(b); err != nil {
		return fail(" associated data", err)
	}
	if t.Plan.WithPrices {
		if int32(inner) != InnerRecordUnknown {
			b = varintMutation(b, lmInnerRecord, inner)
		}
		for _, p := range t.prices {
			if b, err = price(b, p); err != nil {
				return fail(" price", err)
			}
		}
	}
	t.body = b
	// GrpcUpsertEntityRequest{1: GrpcEntityMutation{1: GrpcEntityUpsertMutation{
	// 1: type, 2: Int32Value{pk}, 3: existence, 4: the mutations written above}}}
	mut := begin(&dst, 1)
	up := begin(&dst, 1)
	dst = bytesField(dst, 1, typ)
	k := begin(&dst, 2)
	dst = uvarint(dst, 1, pk)
	end(&dst, k)
	dst = uvarint(dst, 3, uint64(MustNotExist))
	dst = append(dst, b...)
	end(&dst, up)
	end(&dst, mut)
	return dst, id, nil
}

// refContext is what a reference attribute's mutation repeats of its reference.
type refContext struct {
	name, target []byte
	targetPK     uint64
	internal     uint64
}

// reference writes a reference's insert, its group and its attributes — nothing for a
// reflected one.
func (t *Transcoder) reference(b, ref []byte) ([]byte, error) {
	var rc refContext
	var target, group []byte
	var cardinality uint64
	hasGroup := false
	t.refAttrs, t.refLocAttrs = t.refAttrs[:0], t.refLocAttrs[:0]
	var err error
	r := fields{m: ref}
	for r.next() && err == nil {
		switch f := r.f; {
		case f.is(refName, protowire.BytesType):
			rc.name = f.v
		case f.is(refTarget, protowire.BytesType):
			target = f.v
		case f.is(refGroup, protowire.BytesType), f.is(refGroupEntity, protowire.BytesType):
			group, hasGroup = f.v, true
		case f.is(refAttrs, protowire.BytesType):
			t.refAttrs, err = appendEntry(t.refAttrs, f.v)
		case f.is(refLocAttrs, protowire.BytesType):
			t.refLocAttrs, err = appendEntry(t.refLocAttrs, f.v)
		case f.is(refCardinality, protowire.VarintType):
			cardinality = f.u
		case f.is(refInternal, protowire.VarintType):
			rc.internal = f.u
		}
	}
	if err = cmpErr(r.err, err); err != nil {
		return b, fmt.Errorf("%s: %w", rc.name, err)
	}
	if t.Plan.Reflected[string(rc.name)] {
		return b, nil
	}
	rc.target, rc.targetPK, err = entityReference(target)
	if err != nil {
		return b, fmt.Errorf("%s target: %w", rc.name, err)
	}
	s := begin(&b, upsertMutations)
	m := begin(&b, lmInsertReference)
	b = bytesField(b, 1, rc.name)
	b = uvarint(b, 2, rc.targetPK)
	b = uvarint(b, 3, cardinality)
	w := begin(&b, 4) // StringValue, always present
	b = bytesField(b, 1, rc.target)
	end(&b, w)
	b = uvarint(b, 5, rc.internal)
	end(&b, m)
	end(&b, s)
	if hasGroup {
		groupType, groupPK, err := entityReference(group)
		if err != nil {
			return b, fmt.Errorf("%s group: %w", rc.name, err)
		}
		s := begin(&b, upsertMutations)
		m := begin(&b, lmSetReferenceGroup)
		b = bytesField(b, 1, rc.name)
		b = uvarint(b, 2, rc.targetPK)
		w := begin(&b, 3)
		b = bytesField(b, 1, groupType)
		end(&b, w)
		b = uvarint(b, 4, groupPK)
		b = uvarint(b, 5, rc.internal)
		end(&b, m)
		end(&b, s)
	}
	b, err = t.attributes(b, t.refAttrs, t.refLocAttrs, &rc)
	if err != nil {
		return b, fmt.Errorf("%s attributes: %w", rc.name, err)
	}
	return b, nil
}

// attributes writes the upserts of global attributes, then localized ones per locale,
// each sorted; ref is nil for an entity's own attributes.
func (t *Transcoder) attributes(b []byte, global, localized []kv, ref *refContext) ([]byte, error) {
	one := func(b, name, locale, value []byte, localizedValue bool) []byte {
		s := begin(&b, upsertMutations)
		var m, am int
		if ref == nil {
			m = begin(&b, lmUpsertAttribute)
		} else {
			m = begin(&b, lmReferenceAttribute)
			b = bytesField(b, 1, ref.name)
			b = uvarint(b, 2, ref.targetPK)
			am = begin(&b, 3) // GrpcAttributeMutation{2: upsert}
			am2 := begin(&b, 2)
			b = upsertValue(b, name, locale, value, localizedValue)
			end(&b, am2)
			end(&b, am)
			b = uvarint(b, 4, ref.internal)
			end(&b, m)
			end(&b, s)
			return b
		}
		b = upsertValue(b, name, locale, value, localizedValue)
		end(&b, m)
		end(&b, s)
		return b
	}
	return t.values(b, global, localized, one)
}

// values writes one mutation (one) per non-empty value: the global ones sorted by
// name, then the localized ones per locale, locales and names sorted.
func (t *Transcoder) values(b []byte, global, localized []kv, one func(b, name, locale, value []byte, localized bool) []byte) ([]byte, error) {
	for _, a := range sortEntries(global) {
		if len(a.v) > 0 {
			b = one(b, a.k, nil, a.v, false)
		}
	}
	for _, loc := range sortEntries(localized) {
		var err error
		if t.perLocale, err = innerMap(t.perLocale[:0], loc.v); err != nil {
			return b, fmt.Errorf("locale %s: %w", loc.k, err)
		}
		for _, a := range sortEntries(t.perLocale) {
			if len(a.v) > 0 {
				b = one(b, a.k, loc.k, a.v, true)
			}
		}
	}
	return b, nil
}

// varintMutation writes a local mutation whose message is one varint at field 1
// (GrpcSetEntityScopeMutation, GrpcSetParentMutation, GrpcSetPriceInnerRecordHandlingMutation).
func varintMutation(b []byte, kind protowire.Number, v uint64) []byte {
	s := begin(&b, upsertMutations)
	m := begin(&b, kind)
	b = uvarint(b, 1, v)
	end(&b, m)
	end(&b, s)
	return b
}

// upsertValue writes the fields of a GrpcUpsertAttributeMutation or
// GrpcUpsertAssociatedDataMutation (name 1, locale 2, value 3; they are alike).
func upsertValue(b, name, locale, value []byte, localized bool) []byte {
	b = bytesField(b, 1, name)
	if localized {
		l := begin(&b, 2)
		b = bytesField(b, 1, locale)
		end(&b, l)
	}
	return bytesField(b, 3, value)
}

func (t *Transcoder) associatedData(b []byte) ([]byte, error) {
	one := func(b, name, locale, value []byte, localized bool) []byte {
		s := begin(&b, upsertMutations)
		m := begin(&b, lmUpsertAssociatedData)
		b = upsertValue(b, name, locale, value, localized)
		end(&b, m)
		end(&b, s)
		return b
	}
	return t.values(b, t.assoc, t.locAssoc, one)
}

// price writes a GrpcUpsertPriceMutation from a GrpcPrice: fields 1–8 as they are,
// `indexed` (11) as indexed (10) and sellable (9), the version (10) dropped.
func price(b, p []byte) ([]byte, error) {
	s := begin(&b, upsertMutations)
	m := begin(&b, lmUpsertPrice)
	var indexed uint64
	r := fields{m: p}
	for r.next() {
		switch f := r.f; {
		case f.n >= 2 && f.n <= 8 && f.typ == protowire.BytesType:
			b = bytesField(b, f.n, f.v)
		case f.n == 1 && f.typ == protowire.VarintType:
			b = uvarint(b, 1, f.u)
		case f.is(priceIndexed, protowire.VarintType):
			indexed = f.u
		}
	}
	if r.err != nil {
		return b, r.err
	}
	b = uvarint(b, 9, indexed)
	b = uvarint(b, 10, indexed)
	end(&b, m)
	end(&b, s)
	return b, nil
}

// entityReference reads a GrpcEntityReference: type (1) and primary key (2).
func entityReference(m []byte) (typ []byte, pk uint64, err error) {
	r := fields{m: m}
	for r.next() {
		switch {
		case r.f.is(1, protowire.BytesType):
			typ = r.f.v
		case r.f.is(2, protowire.VarintType):
			pk = r.f.u
		}
	}
	return typ, pk, r.err
}

// appendEntry reads one map entry (key 1, value 2).
func appendEntry(dst []kv, m []byte) ([]kv, error) {
	var e kv
	r := fields{m: m}
	for r.next() {
		switch {
		case r.f.is(1, protowire.BytesType):
			e.k = r.f.v
		case r.f.is(2, protowire.BytesType):
			e.v = r.f.v
		}
	}
	if r.err != nil {
		return dst, fmt.Errorf("map entry: %w", r.err)
	}
	return append(dst, e), nil
}

// innerMap reads GrpcLocalizedAttribute / GrpcLocalizedAssociatedData: a map at 1.
func innerMap(dst []kv, m []byte) ([]kv, error) {
	r := fields{m: m}
	var err error
	for r.next() && err == nil {
		if r.f.is(1, protowire.BytesType) {
			dst, err = appendEntry(dst, r.f.v)
		}
	}
	return dst, cmpErr(r.err, err)
}

// sortEntries sorts map entries by key in place; a key given twice keeps its last
// value, as decoding the map would.
func sortEntries(es []kv) []kv {
	if len(es) < 2 {
		return es
	}
	slices.SortStableFunc(es, func(a, b kv) int { return bytes.Compare(a.k, b.k) })
	out := es[:0]
	for i, e := range es {
		if i+1 < len(es) && bytes.Equal(es[i+1].k, e.k) {
			continue
		}
		out = append(out, e)
	}
	return out
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// begin starts a length-delimited field whose length is not known yet: one byte is
// kept for it, and end widens it when the content turns out longer than 127 bytes.
func begin(b *[]byte, n protowire.Number) int {
	*b = protowire.AppendTag(*b, n, protowire.BytesType)
	*b = append(*b, 0)
	return len(*b)
}

func end(b *[]byte, start int) {
	n := len(*b) - start
	if n < 0x80 {
		(*b)[start-1] = byte(n)
		return
	}
	k := protowire.SizeVarint(uint64(n))
	for range k - 1 {
		*b = append(*b, 0)
	}
	copy((*b)[start+k-1:], (*b)[start:start+n])
	protowire.AppendVarint((*b)[:start-1], uint64(n))
}

// str writes a string or bytes field; proto3 leaves an empty one out.
func bytesField(b []byte, n protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	return protowire.AppendBytes(protowire.AppendTag(b, n, protowire.BytesType), v)
}

// varint writes a varint field; proto3 leaves a zero out.
func uvarint(b []byte, n protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	return protowire.AppendVarint(protowire.AppendTag(b, n, protowire.VarintType), v)
}

// SealedEntities splits a GrpcQueryListResponse into its sealed entities' bytes (field
// 2), as sub-slices of resp.
func SealedEntities(resp []byte) ([][]byte, error) {
	var out [][]byte
	r := fields{m: resp}
	for r.next() {
		if r.f.is(2, protowire.BytesType) {
			out = append(out, r.f.v)
		}
	}
	return out, r.err
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
