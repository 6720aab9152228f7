package evita_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evita/pb"
	"github.com/warmstat/warmstat/internal/evitatest"
	"google.golang.org/protobuf/encoding/protowire"
)

// evitaDB 2026.1 refuses the fixture's catalog as 2026.2 takes it (its gRPC layer drops
// a new reference's index types, so a reflected reference's original is "not indexed"),
// and accepts the plan written for its line: every reference indexed as in the source,
// read back from the server, with what the line lacks left out and said.
func TestReplicationFor2026_1(t *testing.T) {
	src := evitatest.Line2026_1(t)
	_, c := evitatest.StartOn(t, src)
	ctx := context.Background()
	cat, schemas := evitatest.FixtureSchema()
	byName := map[string]*pb.GrpcEntitySchema{}
	for _, s := range schemas {
		byName[s.GetName()] = s
	}

	must(t, c.DefineCatalog(ctx, "native"))
	s, err := c.Open(ctx, "native", true)
	must(t, err)
	err = s.Replicate(ctx, evita.PlanReplication(cat, schemas))
	s.Close(ctx)
	if err == nil || !strings.Contains(err.Error(), "must be indexed") {
		t.Fatalf("2026.1 took the catalog as 2026.2 takes it (%v): the adjustment may no longer be needed", err)
	}

	plan := evita.PlanReplicationFor(evita.Line2026_1, evita.Line2026_1, cat, schemas)
	notes := strings.Join(plan.Notes, "\n")
	for _, want := range []string{"Product.parameterValues: its indexed components left out", "its conditional facets left out", "its histogram left out"} {
		if !strings.Contains(notes, want) {
			t.Errorf("the notes do not say %q:\n%s", want, notes)
		}
	}
	evitatest.LoadCatalog(t, ctx, c, "line", plan, evitatest.FixtureEntities(), byName)

	s, err = c.Open(ctx, "line", false)
	must(t, err)
	defer s.Close(ctx)
	checked := 0
	for _, want := range schemas {
		got, err := s.EntitySchema(ctx, want.GetName())
		must(t, err)
		for name, r := range want.GetReferences() {
			g, ok := got.GetReferences()[name]
			switch {
			case !ok:
				if !strings.Contains(notes, want.GetName()+"."+name+": reflected reference left out") {
					t.Errorf("%s.%s is missing on 2026.1", want.GetName(), name)
				}
				continue
			case r.GetReflectedReferenceName() != nil && r.GetIndexedInherited():
				continue // inherits its original's, checked there
			case len(r.GetScopedIndexTypes()) == 0:
				continue
			}
			if on, in := indexedScopes(t, g.GetScopedIndexTypes()), indexedScopes(t, r.GetScopedIndexTypes()); on != in {
				t.Errorf("%s.%s indexed as %s on 2026.1, %s in the source", want.GetName(), name, on, in)
			}
			checked++
		}
	}
	if checked < 3 {
		t.Fatalf("only %d references' indexes compared", checked)
	}
	counts := map[string]int{}
	for _, e := range evitatest.FixtureEntities() {
		counts[e.GetEntityType()]++
	}
	for ty, n := range counts {
		got, err := s.Count(ctx, ty)
		must(t, err)
		if got != n {
			t.Errorf("%s: %d entities on 2026.1, %d upserted", ty, got, n)
		}
	}
}

// indexedScopes are a reference's indexed scopes and their index types, in words (a
// scope at NONE is not indexed: the server may list it or leave it out).
func indexedScopes(t *testing.T, types [][]byte) string {
	t.Helper()
	var out []string
	for _, b := range types {
		if v := scopedIndex(t, b); v[1] != 0 {
			out = append(out, fmt.Sprintf("scope %d: type %d", v[0], v[1]))
		}
	}
	slices.Sort(out)
	return "[" + strings.Join(out, ", ") + "]"
}

// scopedIndex reads a GrpcScopedReferenceIndexType (scope 1, index type 2; a field at
// its default may be left out, as the server does).
func scopedIndex(t *testing.T, b []byte) [2]uint64 {
	t.Helper()
	var v [2]uint64
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || typ != protowire.VarintType || num < 1 || num > 2 {
			t.Fatalf("not a scoped index type: %x", b)
		}
		x, m := protowire.ConsumeVarint(b[n:])
		if m < 0 {
			t.Fatalf("not a scoped index type: %x", b)
		}
		v[num-1], b = x, b[n+m:]
	}
	return v
}
