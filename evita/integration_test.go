package evita_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evita/pb"
	"github.com/warmstat/warmstat/internal/evitatest"
	"google.golang.org/protobuf/proto"
)

// ---- helpers

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// copyCatalog is the loader's path through the driver: schema, then every entity by
// primary-key batches, then goLive.
func copyCatalog(t *testing.T, ctx context.Context, src, dst *evita.Client, from, to string) {
	t.Helper()
	rs, err := src.Open(ctx, from, false)
	must(t, err)
	defer rs.Close(ctx)
	cat, err := rs.CatalogSchema(ctx)
	must(t, err)
	types, err := rs.EntityTypes(ctx)
	must(t, err)
	slices.Sort(types)
	var schemas []*pb.GrpcEntitySchema
	byName := map[string]*pb.GrpcEntitySchema{}
	for _, ty := range types {
		sch, err := rs.EntitySchema(ctx, ty)
		must(t, err)
		schemas = append(schemas, sch)
		byName[ty] = sch
	}
	plan := evita.PlanReplication(cat, schemas)
	if len(plan.Notes) > 0 {
		t.Logf("replication notes: %v", plan.Notes)
	}
	var ents []*pb.GrpcSealedEntity
	for _, ty := range types {
		n, err := rs.Count(ctx, ty)
		must(t, err)
		pks, err := rs.PrimaryKeys(ctx, ty, n)
		must(t, err)
		for i := 0; i < len(pks); i += 2 { // tiny batches: exercise the batching
			batch, err := rs.Fetch(ctx, byName[ty], pks[i:min(i+2, len(pks))])
			must(t, err)
			ents = append(ents, batch...)
		}
	}
	evitatest.LoadCatalog(t, ctx, dst, to, plan, ents, byName)
}

// TestCopyAgainstRealServers: a catalog exercising every schema feature and every kind
// of content is defined on one real server, copied to another with the driver, and
// the copy proven equal — schema field by field, every entity field by field, counts
// equal, target ALIVE.
func TestCopyAgainstRealServers(t *testing.T) {
	_, src, _, dst := evitatest.StartTwo(t)
	ctx := context.Background()

	evitatest.LoadFixture(t, ctx, src, "source")
	copyCatalog(t, ctx, src, dst, "source", "target")

	state, ok, err := dst.CatalogState(ctx, "target")
	if err != nil || !ok || state != evita.CatalogAlive {
		t.Fatalf("target state %d known %v: %v", state, ok, err)
	}
	ss, se := evitatest.Dump(t, ctx, src, "source")
	ts, te := evitatest.Dump(t, ctx, dst, "target")
	sc, tc := evitatest.CatalogSchema(t, ctx, src, "source"), evitatest.CatalogSchema(t, ctx, dst, "target")
	if !proto.Equal(sc.GetAttributes()["url"], tc.GetAttributes()["url"]) || len(tc.GetAttributes()) != 1 {
		t.Errorf("global attributes differ:\nsource %v\ntarget %v", sc.GetAttributes(), tc.GetAttributes())
	}
	for ty, s := range ss {
		if !proto.Equal(s, ts[ty]) {
			t.Errorf("schema %s differs:\nsource %v\ntarget %v", ty, s, ts[ty])
		}
		if len(se[ty]) != len(te[ty]) {
			t.Errorf("%s: %d entities in source, %d in target", ty, len(se[ty]), len(te[ty]))
			continue
		}
		for i := range se[ty] {
			if !proto.Equal(se[ty][i], te[ty][i]) {
				t.Errorf("%s %d differs:\nsource %v\ntarget %v", ty, se[ty][i].GetPrimaryKey(), se[ty][i], te[ty][i])
			}
		}
	}
	if len(ss) != 5 || len(se["Product"]) != 6 || len(se["Category"]) != 4 || len(se["ParameterValue"]) != 4 {
		t.Fatalf("source dump incomplete: %d schemas, %d products, %d categories", len(ss), len(se["Product"]), len(se["Category"]))
	}
	// the features the Java harness lost are really there
	p := se["Product"][0]
	if len(te["Category"][1].GetReferences()) == 0 {
		t.Error("reflected references were not rebuilt on the target")
	}
	if te["Category"][1].GetParent().GetValue() != 1 {
		t.Errorf("hierarchy parent not copied: %v", te["Category"][1].GetParent())
	}
	if len(p.GetPrices()) != 4 {
		t.Errorf("prices %d", len(p.GetPrices()))
	}
}

// goLive must outlive the deadline of ordinary calls: the catalog is loaded with a normal
// client, then its session is driven by a client whose per-call deadline (10 ms) is
// far below the goLive time. goLive still completes, is measured, and ends ALIVE.
func TestGoLiveOutlivesCallTimeout(t *testing.T) {
	s, c := evitatest.Start(t)
	ctx := context.Background()
	cat, schemas := evitatest.FixtureSchema()
	plan := evita.PlanReplication(cat, schemas)
	must(t, c.DefineCatalog(ctx, "slow"))
	ss, err := c.Open(ctx, "slow", true)
	must(t, err)
	must(t, ss.Replicate(ctx, plan))
	must(t, ss.Close(ctx))
	load, err := c.Open(ctx, "slow", true)
	must(t, err)
	for _, e := range evitatest.FixtureEntities() {
		var sch *pb.GrpcEntitySchema
		for _, x := range schemas {
			if x.GetName() == e.GetEntityType() {
				sch = x
			}
		}
		must(t, load.Upsert(ctx, e, evita.CopyPlan{Reflected: evita.ReflectedNames(sch), WithPrices: sch.GetWithPrice()}))
	}
	// 10 ms: far below any goLive; Dial's own first call is not bound by it
	slow, err := evita.Dial(ctx, s.Addr, evita.Options{CallTimeout: 10 * time.Millisecond})
	must(t, err)
	defer slow.Close()
	begin := time.Now()
	o := slow.Resume(load.ID, "slow").GoLive(ctx, time.Minute, 10*time.Second, nil)
	took := time.Since(begin)
	if o.Err != nil {
		t.Fatalf("goLive with a 10 ms call deadline: %v", o.Err)
	}
	if state, ok, err := c.CatalogState(ctx, "slow"); err != nil || !ok || state != evita.CatalogAlive {
		t.Fatalf("after goLive the catalog is %d (%v, %v)", state, ok, err)
	}
	if took < 10*time.Millisecond {
		t.Fatalf("goLive took only %s, under the 10 ms deadline: the test proves nothing", took)
	}
	t.Logf("goLive took %s with a 10 ms per-call deadline and completed", took.Round(time.Millisecond))
}
