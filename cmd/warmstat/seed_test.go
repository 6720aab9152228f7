package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/seed"
	"github.com/warmstat/warmstat/workload"
)

// A bad --profile is refused with one line naming the file, line and field, before
// any server starts or any directory is made (an unknown kind used to pass, start the
// seeding server, create the catalog and then panic in the generator).
func TestSeedRefusesBadProfileBeforeAnything(t *testing.T) {
	tmp := t.TempDir()
	printed, _, code := runCLI(t, "seed", "--print-profile")
	if code != 0 {
		t.Fatal("--print-profile failed")
	}
	bad := strings.Replace(printed, `"kind": "text"`, `"kind": "txet"`, 1)
	line := strings.Count(bad[:strings.Index(bad, `"txet"`)], "\n") + 1
	f := filepath.Join(tmp, "profile.json")
	os.WriteFile(f, []byte(bad), 0o644)
	dir := filepath.Join(tmp, "pristine")
	for _, args := range [][]string{
		{"seed", "--profile", f, "--pristine", dir, "--server-jar", "main.go"},
		{"seed", "--profile", f, "--target", "127.0.0.1:1"},
	} {
		_, stderr, code := runCLI(t, args...)
		want := f + ":" + strconv.Itoa(line) + ": collections["
		if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, `unknown kind "txet"`) || strings.Count(stderr, "\n") != 1 {
			t.Fatalf("%v: exit %d, %q (want %s...)", args, code, stderr, want)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the snapshot directory was made: %v", err)
	}
	printedBack := filepath.Join(tmp, "printed.json")
	os.WriteFile(printedBack, []byte(printed), 0o644)
	if out, stderr, code := runCLI(t, "seed", "--profile", printedBack, "--print-profile"); code != 0 || out != printed {
		t.Fatalf("the printed profile does not load back as itself: %d %s", code, stderr)
	}
}

// seed --workload writes the generated catalog into a workload file with no server:
// the file verifies, holds every entity the generator makes at that scale and says its
// scale (load and ab size their heaps from it); an existing file, a server flag or a
// missing directory is a usage error that writes nothing.
func TestSeedWorkload(t *testing.T) {
	tmp := t.TempDir()
	path := filepath.Join(tmp, "shop.wsw")
	out, stderr, code := runCLI(t, "seed", "--workload", path, "--catalog", "shop", "--scale", "0.002")
	if code != 0 || !strings.Contains(out, "workload "+path+": ") || !strings.Contains(out, "load --replay "+path) {
		t.Fatalf("exit %d, %q %q", code, out, stderr)
	}
	info, err := workload.Verify(path)
	if err != nil {
		t.Fatal(err)
	}
	g := seed.NewGenerator(seed.DefaultProfile(), 0.002, 1)
	var want int64
	for _, c := range seed.DefaultProfile().Collections {
		want += int64(g.Count(c.Name))
	}
	if h := info.Header; info.Trailer.Entities != want || h.Catalog != "shop" || h.SnapshotScale == nil || *h.SnapshotScale != 0.002 ||
		h.BatchSize != workload.DefaultBatchSize { // as extract's default records it: the same conditions
		t.Fatalf("the workload holds %d entities of %q at scale %v; the generator makes %d at 0.002", info.Trailer.Entities, h.Catalog, h.SnapshotScale, want)
	}
	if !strings.Contains(out, strconv.FormatInt(want, 10)+" entities") {
		t.Errorf("the summary does not count %d entities: %q", want, out)
	}
	// the estimated live heap a replay sizes its writer by; a catalog this small fits
	// any machine, so no note
	if e := seed.LiveHeapAt(seed.DefaultProfile(), 0.002); info.Header.LiveHeapEstimateBytes == nil ||
		*info.Header.LiveHeapEstimateBytes != e.Bytes || info.Header.LiveHeapEstimateSource != e.Source || strings.Contains(out, "note:") {
		t.Errorf("live heap estimate %v %q (want %d), output %q", info.Header.LiveHeapEstimateBytes, info.Header.LiveHeapEstimateSource, e.Bytes, out)
	}
	// and its own size, the share of production's entities it holds, a replay's heap is proposed from
	if sh := info.Header.ProductionShare; sh == nil || *sh != evitaserver.ProductionShare(want) {
		t.Errorf("production share %v, want %g", sh, evitaserver.ProductionShare(want))
	}
	for _, args := range [][]string{
		{"seed", "--workload", path, "--scale", "0.002"},
		{"seed", "--workload", filepath.Join(tmp, "b.wsw"), "--target", "127.0.0.1:1"},
		{"seed", "--workload", filepath.Join(tmp, "c.wsw"), "--evita-version", "2026.2.3"},
		{"seed", "--workload", filepath.Join(tmp, "no", "d.wsw")},
	} {
		if _, stderr, code := runCLI(t, args...); code != 2 || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, %q (want a one-line usage error, exit 2)", args, code, stderr)
		}
	}
	if after, err := workload.Verify(path); err != nil || after.SHA256 != info.SHA256 {
		t.Fatalf("the existing workload changed: %v", err)
	}
	for _, name := range []string{"b.wsw", "c.wsw"} {
		if _, err := os.Stat(filepath.Join(tmp, name)); !os.IsNotExist(err) {
			t.Errorf("%s was written: %v", name, err)
		}
	}
}
