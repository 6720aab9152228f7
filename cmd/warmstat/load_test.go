package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/internal/evitatest"
	"github.com/warmstat/warmstat/runfmt"
)

// seed → load (attach) → report → compare, against real servers.
func TestLoadCommandEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts evitaDB servers")
	}
	srcSrv, src := evitatest.Start(t)
	dstSrv, _ := evitatest.Start(t)
	evitatest.LoadFixture(t, context.Background(), src, "shop")

	runs := t.TempDir()
	for i, id := range []string{"r1", "r2"} {
		args := []string{"load", "--source", srcSrv.Addr, "--source-catalog", "shop", "--target", dstSrv.Addr, "--target-catalog", "shop_copy",
			"--out", filepath.Join(runs, id), "--build", "local", "--run-id", id, "--server-heap", "1g", "--reader-heap", "1g",
			"--storage-compress", "true", "--cache", "false", "--traffic-recording", "false", "--batch-size", "3"}
		if i > 0 {
			args = append(args, "--replace-target")
		}
		out, stderr, code := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("load %s: exit %d\n%s\n%s", id, code, out, stderr)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if lines[len(lines)-1] != "RUN_STATUS=MEASUREMENT-DONE-"+id || !strings.Contains(out, "verification: verified, outcome complete, exit code 0") {
			t.Fatalf("output:\n%s", out)
		}
	}
	m, err := runfmt.ReadManifest(filepath.Join(runs, "r1", runfmt.ManifestFile))
	if err != nil || m.Entities != 13 || m.Server.Version == "" || *m.Server.MaxHeapBytes != 1<<30 || m.Machine.Cores == nil {
		t.Fatalf("%v %+v", err, m)
	}
	// a second load into the same target without --replace-target is refused, nothing written
	_, stderr, code := runCLI(t, "load", "--source", srcSrv.Addr, "--source-catalog", "shop", "--target", dstSrv.Addr, "--target-catalog", "shop_copy",
		"--out", filepath.Join(runs, "r3"), "--build", "local")
	if code != 1 || !strings.Contains(stderr, "--replace-target") {
		t.Fatalf("existing target: %d %q", code, stderr)
	}
	// the two runs compare (2 runs of one build against themselves: nothing may be called)
	out, stderr, code := runCLI(t, "compare", "--format", "json", runs, runs)
	if code != 0 || strings.Contains(out, `"verdict": "faster"`) || strings.Contains(out, `"verdict": "slower"`) {
		t.Fatalf("compare: %d %s %s", code, out, stderr)
	}
	// an unknown collection is an error before anything is loaded
	_, stderr, code = runCLI(t, "load", "--source", srcSrv.Addr, "--source-catalog", "shop", "--target", dstSrv.Addr, "--target-catalog", "x",
		"--out", filepath.Join(runs, "r4"), "--build", "local", "--collections", "Product,Voucher")
	if code != 1 || !strings.Contains(stderr, `collection "Voucher" is not in source catalog`) {
		t.Fatalf("unknown collection: %d %q", code, stderr)
	}
}

func TestLoadArguments(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"load", "--out", "x", "--build", "b"}, "either --pristine DIR --catalog NAME (spawn mode) or --source"},
		{[]string{"load", "--out", "x", "--build", "b", "--pristine", "p", "--source", "s:1"}, "either --pristine"},
		{[]string{"load", "--out", "x", "--build", "b", "--pristine", t.TempDir(), "--catalog", "c", "--server-heap", "1g", "--reader-heap", "1g"}, "--evita-version V"},
		{[]string{"load", "--out", "x", "--build", "b", "--pristine", t.TempDir(), "--catalog", "c", "--evita-version", "0.0.0-none", "--server-heap", "1g", "--reader-heap", "1g"}, "is not fetched"},
		{[]string{"load", "--out", "x", "--build", "b", "--pristine", t.TempDir(), "--catalog", "c", "--classpath", "x.jar"}, "--server-heap"},
		{[]string{"seed", "--pristine", t.TempDir()}, "--evita-version V"},
		{[]string{"seed"}, "--target host:port, or --pristine"},
	} {
		_, stderr, code := runCLI(t, c.args...)
		if code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d %q, want %q", c.args, code, stderr, c.want)
		}
	}
}

// seed --pristine, then load in spawn mode, via the CLI.
func TestSpawnModeCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("starts evitaDB servers")
	}
	cp := evitatest.Classpath()
	if cp == "" {
		t.Skip("no evitaDB server: `make evita` could not fetch io.evitadb:evita_server here; set WARMSTAT_EVITA_CLASSPATH to run against a local server")
	}
	tmp := t.TempDir()
	out, stderr, code := runCLI(t, "seed", "--pristine", filepath.Join(tmp, "pristine"), "--catalog", "shop", "--scale", "0.001", "--classpath", cp, "--heap", "1g")
	if code != 0 || !strings.Contains(out, "pristine snapshot") {
		t.Fatalf("seed --pristine: %d %s %s", code, out, stderr)
	}
	out, stderr, code = runCLI(t, "load", "--pristine", filepath.Join(tmp, "pristine"), "--catalog", "shop", "--classpath", cp,
		"--server-heap", "1g", "--reader-heap", "1g", "--out", filepath.Join(tmp, "run"), "--build", "local", "--run-id", "s1")
	if code != 0 || !strings.Contains(out, "writer GC:") || !strings.HasSuffix(strings.TrimSpace(out), "RUN_STATUS=MEASUREMENT-DONE-s1") {
		t.Fatalf("load --pristine: %d\n%s\n%s", code, out, stderr)
	}
}
