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
// real server. Every variant builds the same fresh Brand upsert per iteration; "raw"
// then makes the bare generated-client call (what any client pays), "per-call-context"
// is Session.Upsert (a context, a timer and metadata per call: the load's old path),
// "leased" is UpsertUncancelled (the load's path). allocs/op over "raw" is the
// wrapper's own cost per upsert; BenchmarkBuildUpsert measures building the mutation.
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
	next := func() *pb.GrpcEntityUpsertMutation {
		pk++
		return evita.BuildUpsert(evitatest.Brand(pk), evita.CopyPlan{})
	}
	b.Run("raw", func(b *testing.B) {
		rctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(ctx, metadata.Pairs("sessionid", s.ID, "clientversion", c.Version)), time.Hour)
		defer cancel()
		b.ReportAllocs()
		for b.Loop() {
			req := &pb.GrpcUpsertEntityRequest{EntityMutation: &pb.GrpcEntityMutation{Mutation: &pb.GrpcEntityMutation_EntityUpsertMutation{EntityUpsertMutation: next()}}}
			if _, err := raw.UpsertEntity(rctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("per-call-context", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := s.Upsert(ctx, next()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("leased", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := s.UpsertUncancelled(next()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkBuildUpsert is the mutation building per upsert (no server): a Brand (a
// cheap collection's shape) and the fixture's Product (prices, references, groups,
// reference attributes, associated data).
func BenchmarkBuildUpsert(b *testing.B) {
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
	brand := evitatest.Brand(1)
	b.Run("Brand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			evita.BuildUpsert(brand, evita.CopyPlan{})
		}
	})
	b.Run("Product", func(b *testing.B) {
		plan := evita.CopyPlan{Reflected: evita.ReflectedNames(productSchema), WithPrices: true}
		b.ReportAllocs()
		for b.Loop() {
			evita.BuildUpsert(product, plan)
		}
	})
}
