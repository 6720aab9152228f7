package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/internal/evitatest"
	"github.com/warmstat/warmstat/seed"
)

// Bad shape invocations are usage errors (exit 2) before anything is read or written.
func TestShapeUsage(t *testing.T) {
	tmp := t.TempDir()
	exists := filepath.Join(tmp, "exists.json")
	os.WriteFile(exists, []byte("{}"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"shape", "--workload", "x.wsw", "--out", exists}, "never overwritten"},
		{[]string{"shape", "--out", filepath.Join(tmp, "a.json")}, "needs a source: --workload FILE"},
		{[]string{"shape", "--workload", "x.wsw", "--source", "127.0.0.1:1", "--out", filepath.Join(tmp, "b.json")}, "one source"},
		{[]string{"shape", "--workload", "x.wsw"}, "needs --out"},
		{[]string{"shape", "--diff", exists}, "two shape files"},
		{[]string{"shape", "--diff", "--out", filepath.Join(tmp, "c.json"), exists, exists}, "measures nothing"},
	} {
		_, stderr, code := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, %q (want 2 and %q)", c.args, code, stderr, c.want)
		}
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 1 {
		t.Fatalf("a refused shape left files: %v", entries)
	}
}

// shape (attach) → seed --shape → shape → --diff, against a real server, for the fixture
// catalog (every kind of content, conditional facets with their literals scrubbed) and
// the default catalog at scale 0.002: the regenerated catalog is accepted by evitaDB and
// has its source's shape; a shape of another catalog does not.
func TestShapeRoundTripThroughAServer(t *testing.T) {
	srv, c := evitatest.Start(t)
	ctx := context.Background()
	evitatest.LoadFixture(t, ctx, c, "fixture")
	if out, stderr, code := runCLI(t, "seed", "--target", srv.Addr, "--catalog", "shop", "--scale", "0.002"); code != 0 {
		t.Fatalf("seed: %d %s %s", code, out, stderr)
	}
	tmp := t.TempDir()
	shapes := map[string]string{}
	for _, catalog := range []string{"fixture", "shop"} {
		first := filepath.Join(tmp, catalog+".shape.json")
		out, stderr, code := runCLI(t, "shape", "--source", srv.Addr, "--source-catalog", catalog, "--out", first)
		if code != 0 || !strings.Contains(out, "shape "+first+": ") {
			t.Fatalf("shape of %s: %d %s %s", catalog, code, out, stderr)
		}
		p, err := seed.LoadProfile(first)
		if err != nil || p.Measured.From != "server" || p.Measured.Scale != 1 || p.Measured.SourceVersion == "" {
			t.Fatalf("%s: %v %+v", first, err, p.Measured)
		}
		if out, stderr, code := runCLI(t, "seed", "--shape", first, "--target", srv.Addr, "--catalog", catalog+"Again"); code != 0 {
			t.Fatalf("seed --shape %s: %d %s %s", first, code, out, stderr)
		}
		again := filepath.Join(tmp, catalog+"Again.shape.json")
		if _, stderr, code := runCLI(t, "shape", "--source", srv.Addr, "--source-catalog", catalog+"Again", "--out", again); code != 0 {
			t.Fatalf("shape of %sAgain: %d %s", catalog, code, stderr)
		}
		if out, stderr, code := runCLI(t, "shape", "--diff", again, first); code != 0 {
			t.Fatalf("the catalog seeded from %s does not have its shape: %d\n%s%s", first, code, out, stderr)
		}
		shapes[catalog] = first
	}
	out, stderr, code := runCLI(t, "shape", "--diff", shapes["fixture"], shapes["shop"])
	if code != 1 || !strings.Contains(out, "entities") || !strings.Contains(stderr, "differs from") {
		t.Fatalf("two different catalogs compared as one shape: %d\n%s%s", code, out, stderr)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 4 {
		t.Fatalf("shape left more than its files in %s: %v", tmp, entries)
	}
}
