package evita_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evita/pb"
	"github.com/warmstat/warmstat/internal/evitatest"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

// The lean connection UpsertUncancelled uses, against a real server: an upsert of
// 3 MB (about 200 DATA frames, far beyond HTTP/2's 64 KB initial windows, so flow
// control must work both ways), the server's refusal of a second MUST_NOT_EXIST upsert
// of the same entity as an *Error with its code and message (not a broken
// connection), then more upserts on the same connection, and everything read back.
func TestLeanConnectionOnRealServer(t *testing.T) {
	_, c := evitatest.Start(t)
	ctx := context.Background()
	cat, schemas := evitatest.FixtureSchema()
	must(t, c.CreateCatalog(ctx, "lean", false, evita.PlanReplication(cat, schemas)))
	s, err := c.Open(ctx, "lean", true)
	must(t, err)
	defer s.Close(ctx)
	var product *pb.GrpcSealedEntity
	for _, e := range evitatest.FixtureEntities() {
		if e.GetEntityType() == "Product" {
			product = proto.Clone(e).(*pb.GrpcSealedEntity)
			break
		}
	}
	var productSchema *pb.GrpcEntitySchema
	for _, sch := range schemas {
		if sch.GetName() == "Product" {
			productSchema = sch
		}
	}
	plan := evita.CopyPlan{Reflected: evita.ReflectedNames(productSchema), WithPrices: true}
	huge := strings.Repeat("0123456789abcdef", 3<<20/16)
	product.GlobalAssociatedData["gallery"] = evita.AssociatedValue(evita.StringValue(huge))
	req, err := evita.UpsertRequest(product, plan)
	must(t, err)
	if len(req) < 3<<20 {
		t.Fatalf("request is only %d bytes", len(req))
	}
	must(t, s.UpsertUncancelled(req, "Product"))

	err = s.UpsertUncancelled(req, "Product")
	var ee *evita.Error
	if !errors.As(err, &ee) || ee.Code == codes.OK || ee.Code == codes.Unavailable || ee.Msg == "" {
		t.Fatalf("a second MUST_NOT_EXIST upsert: want the server's refusal, got %v", err)
	}
	t.Logf("refusal: %v", err)

	for pk := int32(1); pk <= 200; pk++ {
		req, err := evita.UpsertRequest(evitatest.Brand(pk), evita.CopyPlan{})
		must(t, err)
		must(t, s.UpsertUncancelled(req, "Brand"))
	}
	if n, err := s.CollectionSize(ctx, "Brand"); err != nil || n != 200 {
		t.Fatalf("Brand: %d entities (%v), want 200", n, err)
	}
	got, err := s.Fetch(ctx, productSchema, []int32{product.GetPrimaryKey()})
	must(t, err)
	if len(got) != 1 {
		t.Fatalf("read back %d products", len(got))
	}
	if ad := got[0].GetGlobalAssociatedData()["gallery"]; !strings.Contains(string(ad), huge) {
		t.Fatalf("the 3 MB associated data came back as %d bytes", len(ad))
	}
}
