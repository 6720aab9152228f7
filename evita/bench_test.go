package evita_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evita/pb"
	"github.com/warmstat/warmstat/internal/evitatest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// BenchmarkServerStatusRoundTrip is the wire's physical floor on loopback: one bare
// gRPC call. The loader's cheapest collection should upsert within 1.3x of it.
// WARMSTAT_EVITA_ADDR measures an already running server instead of starting one.
func BenchmarkServerStatusRoundTrip(b *testing.B) {
	ctx := context.Background()
	var c *evita.Client
	if addr := os.Getenv("WARMSTAT_EVITA_ADDR"); addr != "" {
		var err error
		if c, err = evita.Dial(ctx, addr, evita.Options{}); err != nil {
			b.Fatal(err)
		}
		defer c.Close()
	} else {
		_, c = evitatest.Start(b)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.ServerStatus(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpsertPath measures what warmstat adds around the timed upsert call, on a
// real server. Every variant sends the same kind of fresh Brand upsert per iteration;
// "raw" builds it as messages and makes the bare generated-client call (what any client
// pays), "leased" transcodes it into a reused buffer and sends the bytes with
// UpsertUncancelled (the load's path). allocs/op over "raw" is the wrapper's own cost
// per upsert; BenchmarkTranscode measures building the request alone.
func BenchmarkUpsertPath(b *testing.B) {
	_, c := evitatest.Start(b)
	ctx := context.Background()
	cat, schemas := evitatest.FixtureSchema()
	if err := c.CreateCatalog(ctx, "bench", false, evita.PlanReplication(cat, schemas)); err != nil {
		b.Fatal(err)
	}
	s, err := c.Open(ctx, "bench", true)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(ctx)
	conn, err := grpc.NewClient(c.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	raw := pb.NewEvitaSessionServiceClient(conn)
	pk := int32(0)
	b.Run("raw", func(b *testing.B) {
		rctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(ctx, metadata.Pairs("sessionid", s.ID, "clientversion", c.Version)), time.Hour)
		defer cancel()
		b.ReportAllocs()
		for b.Loop() {
			pk++
			req := &pb.GrpcUpsertEntityRequest{EntityMutation: &pb.GrpcEntityMutation{Mutation: &pb.GrpcEntityMutation_EntityUpsertMutation{
				EntityUpsertMutation: evita.BuildUpsertMessages(evitatest.Brand(pk), evita.CopyPlan{})}}}
			if _, err := raw.UpsertEntity(rctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("leased", func(b *testing.B) {
		var tc evita.Transcoder
		var req []byte
		b.ReportAllocs()
		for b.Loop() {
			pk++
			e, err := proto.Marshal(evitatest.Brand(pk)) // a fetched entity arrives as bytes
			if err != nil {
				b.Fatal(err)
			}
			if req, _, err = tc.Upsert(req[:0], e); err != nil {
				b.Fatal(err)
			}
			if err := s.UpsertUncancelled(req, "Brand"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTranscode is building one upsert request from one fetched entity (no
// server), for a Brand (a cheap collection's shape) and the fixture's Product (prices,
// references, groups, reference attributes, associated data): "messages" is the old
// path (decode the entity, build the upsert as messages, encode it), "wire" the
// Transcoder the load uses.
func BenchmarkTranscode(b *testing.B) {
	_, schemas := evitatest.FixtureSchema()
	var product *pb.GrpcSealedEntity
	for _, e := range evitatest.FixtureEntities() {
		if e.GetEntityType() == "Product" {
			product = e
		}
	}
	var productSchema *pb.GrpcEntitySchema
	for _, s := range schemas {
		if s.GetName() == "Product" {
			productSchema = s
		}
	}
	for _, c := range []struct {
		name string
		e    *pb.GrpcSealedEntity
		plan evita.CopyPlan
	}{
		{"Brand", evitatest.Brand(1), evita.CopyPlan{}},
		{"Product", product, evita.CopyPlan{Reflected: evita.ReflectedNames(productSchema), WithPrices: true}},
	} {
		wire, err := proto.Marshal(c.e)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/messages", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(wire)))
			for b.Loop() {
				var e pb.GrpcSealedEntity
				if err := proto.Unmarshal(wire, &e); err != nil {
					b.Fatal(err)
				}
				req := &pb.GrpcUpsertEntityRequest{EntityMutation: &pb.GrpcEntityMutation{Mutation: &pb.GrpcEntityMutation_EntityUpsertMutation{
					EntityUpsertMutation: evita.BuildUpsertMessages(&e, c.plan)}}}
				if _, err := proto.Marshal(req); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/wire", func(b *testing.B) {
			tc := evita.Transcoder{Plan: c.plan}
			var req []byte
			b.ReportAllocs()
			b.SetBytes(int64(len(wire)))
			for b.Loop() {
				if req, _, err = tc.Upsert(req[:0], wire); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
