package evitatest

import (
	"context"
	"testing"

	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evita/pb"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Dump reads a catalog's schemas and entities, everything included (reflected
// references too), in a comparable form: versions and reference internal keys zeroed,
// fields our subset does not declare dropped.
func Dump(t testing.TB, ctx context.Context, c *evita.Client, name string) (map[string]*pb.GrpcEntitySchema, map[string][]*pb.GrpcSealedEntity) {
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

func CatalogSchema(t testing.TB, ctx context.Context, c *evita.Client, name string) *pb.GrpcCatalogSchema {
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
