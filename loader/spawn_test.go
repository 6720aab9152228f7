package loader_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/internal/evitatest"
	"github.com/warmstat/warmstat/loader"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/seed"
)

// seed --pristine (a compressed snapshot), then two spawned loads on the same work
// directory with an uncompressed writer: both verified — the reader opens the snapshot
// with the snapshot's storage.compress, recorded beside it, not with the writer's (it
// used the writer's: "Record is compressed and ObservableInput has compression support
// disabled!") — the writer's GC recorded, heaps known, the snapshot unchanged, no JVM
// left behind.
func TestSpawnedLoadsOnPristineSnapshot(t *testing.T) {
	cp := evitatest.Server(t)
	ctx := context.Background()
	tmp := t.TempDir()
	pristine := filepath.Join(tmp, "pristine")
	p := seed.DefaultProfile()
	st, err := seed.Pristine(ctx, seed.PristineConfig{Server: cp, Dir: pristine, Catalog: "shop", Heap: 1 << 30, Compress: true, Probe: evitatest.Probe}, p, 0.001, 5)
	if err != nil {
		t.Fatal(err)
	}
	info, err := evitaserver.ReadSnapshot(pristine, "shop")
	if err != nil {
		t.Fatal(err)
	}
	if !info.StorageCompress || info.Entities != st.Entities || info.Seed == nil || info.Seed.Scale != 0.001 || info.Seed.Seed != 5 ||
		info.Seed.ProfileSHA256 != p.Digest() || info.Server == nil || info.Server.Version == "" || info.LiveHeapBytes == nil || info.Counts["Product"] == 0 {
		t.Fatalf("snapshot metadata: %+v", info)
	}
	t.Logf("snapshot: %d entities, live heap %d MB, server %s", info.Entities, *info.LiveHeapBytes>>20, info.Server.Version)
	sum, err := evitaserver.Checksum(filepath.Join(pristine, "shop"))
	if err != nil {
		t.Fatal(err)
	}
	sc := loader.SpawnConfig{Server: cp, Pristine: pristine, Catalog: "shop", WorkDir: filepath.Join(tmp, "work"),
		ServerHeap: 1 << 30, ReaderHeap: 1 << 30, Compress: false, Probe: evitatest.Probe}
	for _, id := range []string{"a", "b"} {
		out := filepath.Join(tmp, "runs", id)
		res, err := loader.Spawn(ctx, sc, loader.Config{Out: out, BatchSize: 100,
			Manifest: runfmt.Manifest{RunID: id, Build: runfmt.Build{Label: "local"}}})
		if err != nil {
			t.Fatalf("spawn %s: %v", id, err)
		}
		m := res.Manifest
		if m.ExitCode != 0 || m.WriterGC == nil || m.WriterGC.YoungPauses == nil || *m.Server.MaxHeapBytes != 1<<30 || *m.Conditions.CacheEnabled ||
			*m.Conditions.StorageCompress {
			t.Fatalf("run %s: exit %d gc %+v", id, m.ExitCode, m.WriterGC)
		}
		if back, err := runfmt.ReadManifest(filepath.Join(out, runfmt.ManifestFile)); err != nil || back.WriterGC == nil {
			t.Fatalf("writer GC not in the manifest on disk: %v", err)
		}
	}
	if after, _ := evitaserver.Checksum(filepath.Join(pristine, "shop")); after != sum {
		t.Fatal("pristine snapshot changed")
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), tmp) {
			t.Fatalf("a JVM outlived the runs: %s", p)
		}
	}
	// a work directory that is not ours is refused and left alone
	foreign := filepath.Join(tmp, "foreign")
	os.MkdirAll(foreign, 0o755)
	os.WriteFile(filepath.Join(foreign, "keep"), []byte("x"), 0o644)
	sc.WorkDir = foreign
	if _, err := loader.Spawn(ctx, sc, loader.Config{Out: filepath.Join(tmp, "runs", "c"), Manifest: runfmt.Manifest{Build: runfmt.Build{Label: "l"}}}); err == nil ||
		!strings.Contains(err.Error(), "refusing to wipe") {
		t.Fatalf("foreign work dir: %v", err)
	}
}
