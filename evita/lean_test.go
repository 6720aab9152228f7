package evita_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

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
//
// Through a proxy (the only way to see what a call carries): every lean call states
// its deadline (grpc-timeout; without one evitaDB cuts a call after 2 s). Straight to
// the server, a call after 2.5 s of idleness still goes through (evitaDB 2026.2 keeps
// the connection; a connection idle over 1 s is replaced anyway, for servers that
// close idle ones or expect their PINGs answered).
func TestLeanConnectionOnRealServer(t *testing.T) {
	srv, direct := evitatest.Start(t)
	px := evitatest.StartProxy(t, srv.Addr)
	ctx := context.Background()
	c, err := evita.Dial(ctx, px.Addr, evita.Options{CallTimeout: 7 * time.Minute})
	must(t, err)
	defer c.Close()
	var mu sync.Mutex
	var deadlines []time.Duration
	px.SetFault(func(pctx context.Context, method string) (proto.Message, error) {
		if evitatest.Short(method) == "UpsertEntity" {
			d, ok := pctx.Deadline()
			mu.Lock()
			if ok {
				deadlines = append(deadlines, time.Until(d))
			} else {
				deadlines = append(deadlines, -1)
			}
			mu.Unlock()
		}
		return nil, nil
	})
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
	// straight to the server, idle between calls
	ds := direct.Resume(s.ID, "lean") // the same session, another client
	for _, pk := range []int32{201, 202} {
		req, err = evita.UpsertRequest(evitatest.Brand(pk), evita.CopyPlan{})
		must(t, err)
		must(t, ds.UpsertUncancelled(req, "Brand"))
		time.Sleep(2500 * time.Millisecond)
	}
	if n, err := s.CollectionSize(ctx, "Brand"); err != nil || n != 202 {
		t.Fatalf("Brand: %d entities (%v), want 202", n, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(deadlines) != 202 {
		t.Fatalf("the proxy saw %d upserts, want 202", len(deadlines))
	}
	for i, d := range deadlines {
		if d < 6*time.Minute || d > 7*time.Minute {
			t.Fatalf("upsert %d arrived with deadline %v, want the 7m call timeout", i, d)
		}
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
