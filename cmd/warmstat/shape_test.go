package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/internal/evitatest"
	"github.com/warmstat/warmstat/runfmt"
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
	sizedByItsOwnSize(t, shapes["shop"])
}

// sizedByItsOwnSize: a server-measured shape of a small catalog regenerated at its own
// size (--scale 1), then read back by shape --pristine and loaded by load --pristine,
// with no heap flag anywhere: every heap comes from the catalog's own entities (23 GiB
// × their share of production's + 1 GiB: 1.25 GiB), not from --scale 1 read as
// production's size (24 GiB, refused on this machine), and the live heap estimated
// before the catalog existed is within ×1.5 of the one measured once it was seeded.
// A snapshot of an older warmstat, without the record, keeps its seed scale and says so.
func sizedByItsOwnSize(t *testing.T, shapeFile string) {
	src := evitatest.Server(t)
	tmp := t.TempDir()
	regen := filepath.Join(tmp, "regen")
	out, stderr, code := runCLI(t, "seed", "--pristine", regen, "--catalog", "shop", "--shape", shapeFile, "--scale", "1", "--evita-version", src.Ref)
	if code != 0 || !strings.Contains(out, "pristine snapshot") {
		t.Fatalf("seed --pristine --shape --scale 1: %d %s %s", code, out, stderr)
	}
	info, err := evitaserver.ReadSnapshot(regen, "shop")
	if err != nil {
		t.Fatal(err)
	}
	sz := info.Size
	if sz == nil || sz.Entities != int64(info.Entities) || info.LiveHeapBytes == nil {
		t.Fatalf("the snapshot's record of its size: %+v, %d entities, live %v", sz, info.Entities, info.LiveHeapBytes)
	}
	heap := evitaserver.HeapForShare(sz.ProductionShare)
	if heap != 1280<<20 || !strings.Contains(out, "with a 1.25g heap") {
		t.Fatalf("%d entities: heap %d, want 1.25g: %s", sz.Entities, heap, out)
	}
	ratio := float64(sz.LiveHeapEstimateBytes) / float64(*info.LiveHeapBytes)
	t.Logf("%d entities: live heap estimated %d, measured %d (×%.2f)", sz.Entities, sz.LiveHeapEstimateBytes, *info.LiveHeapBytes, ratio)
	if ratio < 1/1.5 || ratio > 1.5 {
		t.Errorf("the estimate %d is not within ×1.5 of the measured live heap %d", sz.LiveHeapEstimateBytes, *info.LiveHeapBytes)
	}
	again := filepath.Join(tmp, "regen.shape.json")
	if out, stderr, code := runCLI(t, "shape", "--pristine", regen, "--catalog", "shop", "--out", again, "--evita-version", src.Ref); code != 0 || strings.Contains(stderr, "predates") {
		t.Fatalf("shape --pristine: %d %s %s", code, out, stderr)
	}
	if p, err := seed.LoadProfile(again); err != nil || p.Measured.LiveHeapBytes == nil || *p.Measured.LiveHeapBytes != *info.LiveHeapBytes {
		t.Fatalf("the shape keeps its source's measured live heap: %v %+v", err, p)
	}
	out, stderr, code = runCLI(t, "load", "--pristine", regen, "--catalog", "shop", "--out", filepath.Join(tmp, "run"), "--build", "x", "--evita-version", src.Ref)
	if code != 0 || strings.Contains(stderr, "predates") {
		t.Fatalf("load --pristine: %d %s %s", code, out, stderr)
	}
	m, err := runfmt.ReadManifest(filepath.Join(tmp, "run", runfmt.ManifestFile))
	if err != nil || m.Server.MaxHeapBytes == nil || *m.Server.MaxHeapBytes != heap || m.Reader.MaxHeapBytes == nil || *m.Reader.MaxHeapBytes != heap {
		t.Fatalf("the load's heaps: %v %+v %+v", err, m.Server, m.Reader)
	}
	// a snapshot of an older warmstat (a copy: a snapshot is only ever read) seeded at 0.05
	old := filepath.Join(tmp, "old")
	if err := evitaserver.CopyTree(filepath.Join(regen, "shop"), filepath.Join(old, "shop")); err != nil {
		t.Fatal(err)
	}
	info.Size, info.Seed.Scale = nil, 0.05
	if err := evitaserver.WriteSnapshot(old, info); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = runCLI(t, "shape", "--pristine", old, "--catalog", "shop", "--out", filepath.Join(tmp, "old.shape.json"), "--evita-version", src.Ref)
	if code != 0 || !strings.Contains(stderr, "predates warmstat's record of a catalog's own size: its heaps come from its seed scale 0.05 read as a share of production's size (2.25g), as before") {
		t.Fatalf("an older snapshot: %d %s", code, stderr)
	}
}
