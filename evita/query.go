package evita

import (
	"strings"

	"github.com/warmstat/warmstat/evita/pb"
)

// The server parses queries in SAFE mode: every literal is rejected, so every value —
// the collection name included — travels as a positional `?` parameter.

func str(s string) *pb.GrpcQueryParam {
	return &pb.GrpcQueryParam{QueryParam: &pb.GrpcQueryParam_StringValue{StringValue: s}}
}

func num(i int32) *pb.GrpcQueryParam {
	return &pb.GrpcQueryParam{QueryParam: &pb.GrpcQueryParam_IntegerValue{IntegerValue: i}}
}

// CountQuery asks for a collection's LIVE entity count (Query → totalRecordCount).
func CountQuery(entityType string) *pb.GrpcQueryRequest {
	return &pb.GrpcQueryRequest{Query: "query(collection(?),require(page(?,?)))",
		PositionalQueryParams: []*pb.GrpcQueryParam{str(entityType), num(1), num(1)}}
}

// PrimaryKeysQuery lists one page of primary keys (QueryList → entityReferences); the
// default order is ascending primary key. Pages must be asked for explicitly: the
// server's default page size is 20.
func PrimaryKeysQuery(entityType string, page, size int32) *pb.GrpcQueryRequest {
	return &pb.GrpcQueryRequest{Query: "query(collection(?),require(page(?,?)))",
		PositionalQueryParams: []*pb.GrpcQueryParam{str(entityType), num(page), num(size)}}
}

// FetchQuery fetches entities by primary key with all the content a copy needs
// (QueryList → sealedEntities). With reflected references in the schema it names each
// plain reference instead of fetching all references (reflected ones are rebuilt by
// the engine, never copied).
func FetchQuery(entityType string, pks []int32, plainReferences []string, hasReflected, withPrice, withHierarchy bool) *pb.GrpcQueryRequest {
	params := []*pb.GrpcQueryParam{str(entityType),
		{QueryParam: &pb.GrpcQueryParam_IntegerArrayValue{IntegerArrayValue: &pb.GrpcIntegerArray{Value: pks}}},
		num(1), num(int32(len(pks)))}
	var content string
	if !hasReflected {
		content = "attributeContentAll(),hierarchyContent(),associatedDataContentAll(),priceContentAll(),referenceContentAllWithAttributes(),dataInLocalesAll()"
	} else {
		parts := []string{"attributeContentAll()", "associatedDataContentAll()", "dataInLocalesAll()"}
		if withPrice {
			parts = append(parts, "priceContentAll()")
		}
		if withHierarchy {
			parts = append(parts, "hierarchyContent()")
		}
		for _, r := range plainReferences {
			parts = append(parts, "referenceContentWithAttributes(?)")
			params = append(params, str(r))
		}
		content = strings.Join(parts, ",")
	}
	return &pb.GrpcQueryRequest{Query: "query(collection(?),filterBy(entityPrimaryKeyInSet(?)),require(page(?,?),entityFetch(" + content + ")))",
		PositionalQueryParams: params}
}
