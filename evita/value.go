package evita

import "google.golang.org/protobuf/encoding/protowire"

// Encoders of the protocol's value messages (GrpcEvitaValue and friends) for code that
// writes data of its own (the seed generator, tests). Field numbers are the protocol's:
// GrpcEvitaValue oneof stringValue 1, integerValue 2, longValue 3, booleanValue 4,
// bigDecimalValue 5, dateTimeRangeValue 6, offsetDateTimeValue 10; type 100.

// Data types (GrpcEvitaDataType) used by schemas and values.
const (
	TypeString         int32 = 0
	TypeInteger        int32 = 3
	TypeLong           int32 = 4
	TypeBoolean        int32 = 5
	TypeBigDecimal     int32 = 7
	TypeOffsetDateTime int32 = 8
	TypeDateTimeRange  int32 = 12
)

func msgField(b []byte, n protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(b, n, protowire.BytesType), v)
}

func varintField(b []byte, n protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(b, n, protowire.VarintType), v)
}

// Text is a one-string message: GrpcLocale{languageTag}, GrpcCurrency{code},
// GrpcBigDecimal{valueString}, StringValue, GrpcAttributeElement{attributeName}.
func Text(s string) []byte { return msgField(nil, 1, []byte(s)) }

// StringValue .. DateTimeRangeValue encode attribute values.
func StringValue(s string) []byte { return msgField(nil, 1, []byte(s)) }
func IntValue(i int32) []byte {
	return varintField(varintField(nil, 2, uint64(i)), 100, uint64(TypeInteger))
}
func LongValue(i int64) []byte {
	return varintField(varintField(nil, 3, uint64(i)), 100, uint64(TypeLong))
}
func BoolValue(b bool) []byte {
	v := uint64(0)
	if b {
		v = 1
	}
	return varintField(varintField(nil, 4, v), 100, uint64(TypeBoolean))
}
func DecimalValue(s string) []byte {
	return varintField(msgField(nil, 5, Text(s)), 100, uint64(TypeBigDecimal))
}

// offsetDateTime is GrpcOffsetDateTime{timestamp{seconds}, offset}.
func offsetDateTime(sec int64, offset string) []byte {
	return msgField(msgField(nil, 1, varintField(nil, 1, uint64(sec))), 2, []byte(offset))
}

func DateTimeValue(sec int64, offset string) []byte {
	return varintField(msgField(nil, 10, offsetDateTime(sec, offset)), 100, uint64(TypeOffsetDateTime))
}

func DateTimeRangeValue(from, to int64) []byte {
	r := msgField(msgField(nil, 1, offsetDateTime(from, "+01:00")), 2, offsetDateTime(to, "+01:00"))
	return varintField(msgField(nil, 6, r), 100, uint64(TypeDateTimeRange))
}

// DateTimeRange is a bare GrpcDateTimeRange (price validity).
func DateTimeRange(from, to int64) []byte {
	return msgField(msgField(nil, 1, offsetDateTime(from, "+01:00")), 2, offsetDateTime(to, "+01:00"))
}

// AssociatedValue wraps a value as GrpcEvitaAssociatedDataValue{primitiveValue}.
func AssociatedValue(v []byte) []byte { return msgField(nil, 1, v) }

// Int32Message is google.protobuf.Int32Value (price inner record ids).
func Int32Message(i int32) []byte { return varintField(nil, 1, uint64(i)) }

// Scoped is a scoped schema setting {scope 1, value 2} (uniqueness, index type, indexed
// component).
func Scoped(scope int32, v int32) []byte {
	return varintField(varintField(nil, 1, uint64(scope)), 2, uint64(v))
}

// ScopedList is a scoped setting with a repeated value {scope 1, values 2 (packed)},
// e.g. GrpcScopedReferenceIndexedComponents: one entry per scope carries every component.
func ScopedList(scope int32, vs ...int32) []byte {
	var packed []byte
	for _, v := range vs {
		packed = protowire.AppendVarint(packed, uint64(v))
	}
	return msgField(varintField(nil, 1, uint64(scope)), 2, packed)
}

// ScopedExpression is a per-scope expression {scope 1, expression 2 (StringValue)}:
// GrpcScopedFacetedPartially (conditional facets) and GrpcScopedBucketedPartially (which
// references a bucketed histogram takes in). The expression language is evitaDB's, e.g.
// `$reference.groupEntity?.attributes['inputWidgetType'] == 'CHECKBOX'`.
func ScopedExpression(scope int32, expression string) []byte {
	return msgField(varintField(nil, 1, uint64(scope)), 2, Text(expression))
}

// ScopedHistogram is GrpcScopedHistogramIndexDefinition {scope 1, nameOfTheIndex 2,
// valueExpression 4 (StringValue), assignedWhen 5 (StringValue)}: a bucketed histogram
// over a reference, its value computed per referenced entity, e.g.
// `$reference.referencedEntity?.attributes['basicUnitValue']`. Empty expressions are
// left out (absent, not empty).
func ScopedHistogram(scope int32, name, valueExpression, assignedWhen string) []byte {
	b := msgField(varintField(nil, 1, uint64(scope)), 2, []byte(name))
	if valueExpression != "" {
		b = msgField(b, 4, Text(valueExpression))
	}
	if assignedWhen != "" {
		b = msgField(b, 5, Text(assignedWhen))
	}
	return b
}

// Schema enum values used with Scoped.
const (
	UniqueWithinCollection       int32 = 1
	UniqueWithinCollectionLocale int32 = 2
	UniqueWithinCatalog          int32 = 1
	UniqueWithinCatalogLocale    int32 = 2
	IndexNone                    int32 = 0
	IndexForFiltering            int32 = 1
	IndexForPartitioning         int32 = 2
	ComponentReferencedEntity    int32 = 0
	ComponentReferencedGroup     int32 = 1

	CardinalityZeroOrOne  int32 = 1
	CardinalityExactlyOne int32 = 2
	CardinalityZeroOrMore int32 = 3
	CardinalityOneOrMore  int32 = 4
)
