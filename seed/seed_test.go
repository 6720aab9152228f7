package seed_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/internal/evitatest"
	"github.com/warmstat/warmstat/seed"
	"google.golang.org/protobuf/proto"
)

func TestProfileAndGeneratorOffline(t *testing.T) {
	p := seed.DefaultProfile()
	total := 0
	for _, c := range p.Collections {
		total += c.Count
	}
	if total != 386369 {
		t.Fatalf("scale 1 totals %d, want the production 386,369", total)
	}
	g := seed.NewGenerator(p, 0.01, 7)
	var product seed.Collection
	for _, c := range p.Collections {
		if c.Name == "Product" {
			product = c
		}
	}
	if g.Count("Product") != 1188 || g.Count("Stock") != 1 || g.Count("Parameter") != 3 { // linear, at least one
		t.Fatalf("counts at 0.01: %d %d %d", g.Count("Product"), g.Count("Stock"), g.Count("Parameter"))
	}
	// the shape the profile promises, on average over the products of a small seed
	var prices, refs, partitioned int
	for i := 0; i < g.Count("Product"); i++ {
		e := g.Entity(product, i)
		prices += len(e.GetPrices())
		refs += len(e.GetReferences())
		for _, r := range e.GetReferences() {
			switch r.GetReferenceName() {
			case "categories", "brand", "groups", "stocks":
				partitioned++
			}
		}
	}
	n := float64(g.Count("Product"))
	if p := float64(prices) / n; p < 35 || p > 65 {
		t.Errorf("prices per product %.1f, profile says ~48", p)
	}
	if r := float64(refs) / n; r < 12 || r > 30 {
		t.Errorf("references per product %.1f", r)
	}
	if pp := float64(partitioned) / n; pp < 3.5 || pp > 6.5 {
		t.Errorf("partitioned references per product %.1f, profile says ~5", pp)
	}
	if !proto.Equal(g.Entity(product, 17), seed.NewGenerator(p, 0.01, 7).Entity(product, 17)) ||
		proto.Equal(g.Entity(product, 17), seed.NewGenerator(p, 0.01, 8).Entity(product, 17)) {
		t.Error("same seed must give the same entity; another seed another one")
	}
	t.Logf("Product at scale 0.01: %.1f prices, %.1f references (%.1f partitioned) per entity", float64(prices)/n, float64(refs)/n, float64(partitioned)/n)
}

// Seeds a small catalog into a real server: every collection has the profile's count,
// the schema carries the features, and a second seed with the same arguments gives
// identical content.
func TestSeedIntoRealServer(t *testing.T) {
	_, c := evitatest.Start(t)
	ctx := context.Background()
	p := seed.DefaultProfile()
	const scale = 0.002
	st, err := seed.Seed(ctx, c, "a", p, scale, 42, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("seeded %d entities in %s", st.Entities, st.Took)
	g := seed.NewGenerator(p, scale, 42)
	s, err := c.Open(ctx, "a", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, col := range p.Collections {
		n, err := s.Count(ctx, col.Name)
		if err != nil || n != g.Count(col.Name) {
			t.Errorf("%s: %d entities, profile says %d (%v)", col.Name, n, g.Count(col.Name), err)
		}
	}
	ps, err := s.EntitySchema(ctx, "Product")
	if err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)
	if !ps.GetWithPrice() || len(ps.GetReferences()) != 10 || !bytes.Equal(ps.GetReferences()["parameterValues"].GetScopedIndexedComponents()[0], evita.ScopedList(0, 0, 1)[2:]) && !bytes.Equal(ps.GetReferences()["parameterValues"].GetScopedIndexedComponents()[0], evita.ScopedList(0, 0, 1)) ||
		len(ps.GetReferences()["categories"].GetFacetedInScopes()) != 1 || len(ps.GetAttributes()["ean"].GetUniqueInScopes()) != 1 {
		t.Errorf("Product schema lacks features: %v", ps)
	}
	if _, err := seed.Seed(ctx, c, "a", p, scale, 42, false, nil); err == nil {
		t.Error("an existing catalog must be refused without --replace")
	}
	if _, err := seed.Seed(ctx, c, "b", p, scale, 42, false, nil); err != nil {
		t.Fatal(err)
	}
	as, ae := evitatest.Dump(t, ctx, c, "a")
	bs, be := evitatest.Dump(t, ctx, c, "b")
	for ty := range as {
		if !proto.Equal(as[ty], bs[ty]) || len(ae[ty]) != len(be[ty]) {
			t.Fatalf("%s differs between two seeds with the same arguments", ty)
		}
		for i := range ae[ty] {
			if !proto.Equal(ae[ty][i], be[ty][i]) {
				t.Fatalf("%s %d differs between two seeds with the same arguments", ty, ae[ty][i].GetPrimaryKey())
			}
		}
	}
}

// Every seeded collection reads back through the server's REST API, which validates
// each entity against its schema as it renders it, and every entity holds as many
// references of each name as the reference's cardinality allows. (Brand.products,
// reflected from Product.brand, once inherited ZERO_OR_ONE: the REST API answered every
// Brand with HTTP 500 "Reference cardinality is: ZERO_OR_ONE but found 31 references".)
func TestSeededCatalogReadsBackThroughREST(t *testing.T) {
	srv, c := evitatest.StartREST(t)
	ctx := context.Background()
	p := seed.DefaultProfile()
	const scale = 0.002
	if _, err := seed.Seed(ctx, c, "shop", p, scale, 3, false, nil); err != nil {
		t.Fatal(err)
	}
	d := evitatest.RequireRESTDump(t, ctx, srv.Addr, "shop")
	g := seed.NewGenerator(p, scale, 3)
	reflected := 0
	for _, col := range p.Collections {
		if n := len(d.Entities[col.Name]); n != g.Count(col.Name) {
			t.Errorf("%s: REST lists %d entities, the profile makes %d", col.Name, n, g.Count(col.Name))
		}
		for _, r := range col.References {
			if r.Reflected != "" {
				reflected++
			}
		}
	}
	if reflected == 0 {
		t.Fatal("the profile has no reflected reference: the test proves nothing")
	}
	if v := d.CardinalityViolations(10); len(v) > 0 {
		t.Fatalf("references that do not fit their cardinality:\n%s", strings.Join(v, "\n"))
	}
}
