package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/internal/evitatest"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/runfmt"
)

// seed → load (attach) → report → compare, against real servers.
func TestLoadCommandEndToEnd(t *testing.T) {
	srcSrv, src, dstSrv, _ := evitatest.StartTwo(t)
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
	if err != nil || m.Entities != int64(len(evitatest.FixtureEntities())) || m.Server.Version == "" || *m.Server.MaxHeapBytes != 1<<30 || m.Machine.Cores == nil {
		t.Fatalf("%v %+v", err, m)
	}
	// a second load into the same target without --replace-target is refused, nothing written
	out, stderr, code := runCLI(t, "load", "--source", srcSrv.Addr, "--source-catalog", "shop", "--target", dstSrv.Addr, "--target-catalog", "shop_copy",
		"--out", filepath.Join(runs, "r3"), "--build", "local")
	if code != 1 || !strings.Contains(stderr, "--replace-target") {
		t.Fatalf("existing target: %d %q", code, stderr)
	}
	// the same runs on both sides are refused; one run against the other compares, and
	// one run a side can call nothing
	if _, _, code := runCLI(t, "compare", runs, runs); code != 3 {
		t.Fatalf("compare X X: exit %d, want 3", code)
	}
	out, stderr, code = runCLI(t, "compare", "--format", "json", filepath.Join(runs, "r1"), filepath.Join(runs, "r2"))
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
	earlier, work := t.TempDir(), t.TempDir()
	// a snapshot's metadata names its collections: ab's gates are checked against them
	gated := t.TempDir()
	os.MkdirAll(filepath.Join(gated, "shop"), 0o755)
	os.WriteFile(filepath.Join(gated, "shop.snapshot.json"), []byte(`{"schema": "`+evitaserver.SnapshotSchema+`", "catalog": "shop", "storage_compress": false, "counts": {"Brand": 2, "Product": 5}}`), 0o644)
	if err := os.WriteFile(filepath.Join(earlier, "manifest.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
		code int // 0: 1
	}{
		// usage errors: load's own code (64; its 2 is the harness's "counts unknown"), 2 elsewhere
		{[]string{"load", "--out", "x", "--build", "b"}, "either --pristine DIR --catalog NAME (spawn mode), --source ADDR --source-catalog NAME --target ADDR (attach mode), or --replay FILE", 64},
		{[]string{"load", "--out", "x", "--build", "b", "--pristine", "p", "--source", "s:1"}, "either --pristine", 64},
		{[]string{"load", "--out", "x", "--build", "b", "--pristine", "p"}, "spawn mode needs --catalog", 64},
		{[]string{"load", "--out", "x", "--build", "b", "--source", "s:1", "--target", "t:1"}, "attach mode needs --source ADDR, --source-catalog NAME and --target ADDR", 64},
		{[]string{"load", "--out", "x", "--build", "b", "--source", "s:1", "--source-catalog", "c"}, "attach mode needs", 64},
		{[]string{"load", "--out", "x", "--build", "b", "--source-catalog", "c", "--target", "t:1"}, "attach mode needs", 64},
		{[]string{"load", "--out", "x", "--build", "b", "--source", "s:1", "--source-catalog", "c", "--target", "t:1", "--writer-profile", "cpu"}, "--writer-profile needs spawn mode", 64},
		{[]string{"load", "--out", "x", "--pristine", "p", "--catalog", "c"}, `Required flag "build" not set`, 64},
		{[]string{"load", "--bogus"}, "flag provided but not defined: -bogus (warmstat load --help)", 64},
		{[]string{"load", "--out", "x", "--build", "b", "--pristine", "p", "--catalog", "c", "--target-mode", "embedded"}, "--target-mode embedded replays a workload in a writer warmstat starts: it needs --replay FILE", 64},
		{[]string{"load", "--out", "x", "--build", "b", "--replay", "w", "--target", "t:1", "--target-mode", "embedded"}, "--target-mode embedded replays a workload", 64},
		{[]string{"load", "--out", "x", "--build", "b", "--replay", "w", "--target-mode", "wire"}, `--target-mode "wire": remote or embedded`, 64},
		{[]string{"load", "--out", "x", "--build", "b", "--replay", "w", "--target", "t:1", "--evita-home", "/nowhere"}, "--evita-home names a server for warmstat to start; attach mode (--target) uses the running one", 64},
		{[]string{"load", "--out", "x", "--build", "b", "--source", "s:1", "--source-catalog", "c", "--target", "t:1", "--evita-version", "9"}, "--evita-version names a server", 64},
		{[]string{"load", "--out", "x", "--build", "b", "--source", "s:1", "--source-catalog", "c", "--target", "t:1", "--writer-jvm-option=-XX:+AlwaysPreTouch"},
			"--writer-jvm-option sets up a JVM warmstat starts", 64},
		{[]string{"load", "--out", "x", "--build", "b", "--pristine", "p", "--catalog", "c", "--evita-version", "9", "--writer-jvm-option", "-Xmx2g"},
			`--writer-jvm-option "-Xmx2g": a JVM option (starting with -), not a heap size`, 64},
		{[]string{"ab", "--pristine", "p", "--catalog", "c", "--a", "2026.2.2", "--b", "2026.2.3", "--out", "s", "--server-heap", "1g", "--reader-heap", "1g", "--replay", "--batch-size", "10"},
			"--prefetch and --batch-size shape reading a source server", 2},
		{[]string{"ab", "--pristine", "p", "--catalog", "c", "--a", "2026.2.2", "--b", "2026.2.3", "--out", "s", "--server-heap", "1g", "--reader-heap", "1g", "--target-mode", "remote", "--duet"},
			"--duet replays one workload in both writers at once: it needs --replay or --workload", 2},
		{[]string{"load", "--out", "x", "--build", "b", "--pristine", t.TempDir(), "--catalog", "c", "--server-heap", "1g", "--reader-heap", "1g"}, "spawn mode needs a server: --evita-version V", 64},
		{[]string{"load", "--out", "x", "--build", "b", "--pristine", t.TempDir(), "--catalog", "c", "--classpath", "x.jar", "--evita-version", "1", "--server-heap", "1g", "--reader-heap", "1g"}, "takes one server, got --evita-version and --classpath", 64},
		{[]string{"load", "--out", "x", "--build", "b", "--pristine", "p", "--catalog", "c", "--server-heap", "lots"}, "--server-heap", 64},
		{[]string{"seed", "--pristine", t.TempDir(), "--heap", "lots", "--evita-version", "2026.2.3"}, "--heap: size \"lots\"", 2},
		{[]string{"seed", "--pristine", t.TempDir(), "--heap", "0", "--evita-version", "2026.2.3"}, "--heap 0: a size must be positive", 2},
		// a stray word is never dropped: these commands take flags only
		{[]string{"load", "--out", "x", "--build", "b", "--pristine", "p", "--catalog", "c", "extra"}, `load takes no arguments, got "extra"`, 64},
		{[]string{"import", "--java", "j", "--out", "x", "extra"}, `import takes no arguments, got "extra"`, 2},
		{[]string{"seed", "--target", "127.0.0.1:1", "extra"}, `seed takes no arguments`, 2},
		{[]string{"extract", "--out", "x", "a", "b"}, `extract takes no arguments, got "a b"`, 2},
		{[]string{"ab", "--pristine", "p", "--catalog", "c", "--a", "2026.2.2", "--b", "2026.2.3", "--out", "s", "--server-heap", "0", "--reader-heap", "1g"}, "--server-heap 0: a size must be positive (warmstat ab --help)", 2},
		{[]string{"ab", "--pristine", gated, "--catalog", "shop", "--a", "2026.2.2", "--b", "2026.2.3", "--out", "s", "--server-heap", "1g", "--reader-heap", "1g", "--gate", "product/mean"},
			`--gate "product/mean": the snapshot has no collection "product" (it has Brand, Product or *); names are case-sensitive: did you mean Product/mean?`, 2},
		{[]string{"seed", "--pristine", t.TempDir(), "--classpath", "x.jar", "--evita-version", "1"}, "takes one server, got --evita-version and --classpath", 2},
		{[]string{"load", "--out", "x", "--build", "b", "--pristine", t.TempDir(), "--catalog", "c", "--evita-version", "0.0.0-none", "--server-heap", "1g", "--reader-heap", "1g"}, "is not fetched", 0},
		{[]string{"load", "--out", "x", "--build", "b", "--pristine", t.TempDir(), "--catalog", "c", "--classpath", "x.jar", "--server-heap", "1g", "--reader-heap", "1g"}, "server classpath entry x.jar: no such file", 0},
		{[]string{"load", "--out", "x", "--build", "b", "--pristine", t.TempDir(), "--catalog", "c", "--server-jar", "README.md", "--server-heap", "1g", "--reader-heap", "1g"}, "server jar README.md: not a jar", 0},
		{[]string{"load", "--out", "x", "--build", "b", "--pristine", t.TempDir(), "--catalog", "c", "--evita-home", t.TempDir(), "--server-heap", "1g", "--reader-heap", "1g"}, "not a git checkout", 0},
		{[]string{"seed", "--target", "127.0.0.1:1", "--storage-compress", "true"}, "a --target server has its own", 2},
		{[]string{"seed", "--pristine", t.TempDir(), "--storage-compress", "maybe"}, `--storage-compress: "maybe" is not true or false`, 2},
		{[]string{"seed", "--pristine", t.TempDir()}, "--evita-version V", 2},
		{[]string{"seed"}, "--target host:port, or --pristine", 2},
		{[]string{"nope"}, `no command "nope"`, 2},
		// refused before any server starts: an existing run, a run inside its work directory,
		// conditions a spawned server does not have
		{[]string{"load", "--out", earlier, "--build", "b", "--pristine", t.TempDir(), "--catalog", "c", "--server-heap", "1g", "--reader-heap", "1g"}, "exists and is not empty", 0},
		{[]string{"load", "--out", filepath.Join(work, "run"), "--work", work, "--build", "b", "--pristine", t.TempDir(), "--catalog", "c"}, "one inside the other", 64},
		{[]string{"load", "--out", "x", "--build", "b", "--pristine", t.TempDir(), "--catalog", "c", "--cache", "true"}, "--cache describes an attached server", 64},
		// every flag checked before any server starts (a bad one cost a whole run before)
		{[]string{"load", "--out", "x", "--build", "b", "--pristine", "p", "--catalog", "c", "--max-per-collection", "-1"}, "--max-per-collection -1: must be 0 (no cap) or positive", 64},
		{[]string{"load", "--out", "x", "--build", "b", "--pristine", "p", "--catalog", "c", "--batch-size", "0"}, "--batch-size 0: must be 1 to 100000", 64},
		{[]string{"load", "--out", "x", "--build", "b", "--format", "yaml"}, "--format", 64},
		{[]string{"seed", "--scale", "NaN"}, "--scale NaN: must be above 0", 2},
		{[]string{"seed", "--scale", "0"}, "--scale 0: must be above 0", 2},
		{[]string{"ab", "--pristine", "p", "--catalog", "c", "--a", "2026.2.2", "--b", "2026.2.3", "--out", "s", "--server-heap", "1g", "--reader-heap", "1g", "--threshold", "500"}, "--threshold \"500\"", 2},
		{[]string{"ab", "--pristine", "p", "--catalog", "c", "--a", "2026.2.2", "--b", "2026.2.3", "--out", "s", "--server-heap", "1g", "--reader-heap", "1g", "--alpha", "0"}, "--alpha 0", 2},
		{[]string{"ab", "--pristine", "p", "--catalog", "c", "--a", "2026.2.2", "--b", "2026.2.3", "--out", "s", "--server-heap", "1g", "--reader-heap", "1g", "--gate", "foo/bar"}, `--gate "foo/bar": a gate is COLLECTION/METRIC`, 2},
		{[]string{"ab", "--pristine", "p", "--catalog", "c", "--a", "2026.2.2", "--b", "2026.2.3", "--out", "s", "--server-heap", "1g", "--reader-heap", "1g", "--max-runs", "1"}, `--max-runs "1": must be at least the minimum runs`, 2},
		{[]string{"ab", "--pristine", "p", "--catalog", "c", "--a", "2026.2.2", "--b", "2026.2.3", "--out", "s", "--server-heap", "100000g", "--reader-heap", "1g"}, "do not fit", 0},
	} {
		_, stderr, code := runCLI(t, c.args...)
		if c.code == 0 {
			c.code = 1
		}
		if code != c.code || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || c.code != 1 && strings.Count(stderr, "--help)") != 1 {
			t.Errorf("%v: exit %d %q, want %q", c.args, code, stderr, c.want)
		}
	}
}

// Every server source a user has, through the CLI: seed --pristine from a runnable
// server jar (java -jar), then spawn-mode loads from each of two releases and from an
// evitaDB checkout; the manifests say how each server was obtained and what its own
// jars say it is, and compare treats the two releases as the builds under test.
func TestSpawnModeCommand(t *testing.T) {
	older, newer := evitatest.TwoReleases(t)
	tmp := t.TempDir()
	fixture, err := filepath.Abs(filepath.Join(testdata, "javagen", "HarnessFixture.java"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(tmp) // every path below is relative, as in the README's examples
	jar := filepath.Join(tmp, "dist", "evita-server.jar")
	evitatest.LauncherJar(t, newer, jar)
	pristine := "pristine"
	out, stderr, code := runCLI(t, "seed", "--pristine", pristine, "--catalog", "shop", "--scale", "0.001", "--server-jar", jar, "--heap", "1g")
	if code != 0 || !strings.Contains(out, "pristine snapshot") {
		t.Fatalf("seed --pristine --server-jar: %d %s %s", code, out, stderr)
	}
	load := func(id string, server ...string) *runfmt.Manifest {
		t.Helper()
		args := append([]string{"load", "--pristine", pristine, "--catalog", "shop", "--server-heap", "1g", "--reader-heap", "1g",
			"--out", filepath.Join("runs", id), "--build", id, "--run-id", id}, server...)
		out, stderr, code := runCLI(t, args...)
		if code != 0 || !strings.Contains(out, "writer GC:") || !strings.HasSuffix(strings.TrimSpace(out), "RUN_STATUS=MEASUREMENT-DONE-"+id) {
			t.Fatalf("load %v: %d\n%s\n%s", server, code, out, stderr)
		}
		m, err := runfmt.ReadManifest(filepath.Join(tmp, "runs", id, runfmt.ManifestFile))
		if err != nil {
			t.Fatal(err)
		}
		b, j := m.Server.Build, m.Server.JVM
		if b == nil || j == nil || m.Reader.Build == nil || m.Reader.JVM == nil || b.Version == "" || b.BuildCommit == "" ||
			len(b.ClasspathSHA256) != 64 || j.GC == "" || j.Vendor == "" || m.Machine.Kernel == "" {
			t.Fatalf("%s: server %+v jvm %+v machine %+v", id, b, j, m.Machine)
		}
		// what the JVMs take from the environment is recorded and is a condition (make
		// test gives them JDK_JAVA_OPTIONS)
		var env []string
		if o := os.Getenv("JDK_JAVA_OPTIONS"); o != "" {
			env = []string{"JDK_JAVA_OPTIONS=" + o}
		}
		if !slices.Equal(j.EnvOptions, env) || !slices.Equal(m.Reader.JVM.EnvOptions, env) {
			t.Fatalf("%s: the JVMs' options from the environment: writer %q, reader %q, want %q", id, j.EnvOptions, m.Reader.JVM.EnvOptions, env)
		}
		if len(env) > 0 && !strings.Contains(report.Conditions(m), `writer-jvm-options="`+env[0]+`"`) {
			t.Fatalf("%s: conditions %q do not name the writer's options from the environment", id, report.Conditions(m))
		}
		return m
	}
	// the other builds replay the workload replayedAgainstLoad extracts (the writer
	// alone: what is tested here is how a build is named and recorded)
	replay := func(id string, server ...string) *runfmt.Manifest {
		t.Helper()
		args := append([]string{"load", "--replay", filepath.Join("runs", "shop.wsw"), "--server-heap", "1g",
			"--out", filepath.Join("runs", id), "--build", id, "--run-id", id}, server...)
		out, stderr, code := runCLI(t, args...)
		if code != 0 || !strings.HasSuffix(strings.TrimSpace(out), "RUN_STATUS=MEASUREMENT-DONE-"+id) {
			t.Fatalf("load --replay %v: %d\n%s\n%s", server, code, out, stderr)
		}
		m, err := runfmt.ReadManifest(filepath.Join(tmp, "runs", id, runfmt.ManifestFile))
		if err != nil || m.SourceMode() != runfmt.SourceReplay || m.Server.Build == nil || m.Server.JVM == nil || len(m.Server.Build.ClasspathSHA256) != 64 {
			t.Fatalf("%s: %v %+v", id, err, m)
		}
		return m
	}
	// a load that fails after its servers started leaves nothing it created
	_, stderr, code = runCLI(t, "load", "--pristine", pristine, "--catalog", "shop", "--server-heap", "1g", "--reader-heap", "1g",
		"--out", "runs/fail", "--build", "x", "--evita-version", older.Ref, "--collections", "Nope")
	if code != 1 || !strings.Contains(stderr, `collection "Nope" is not in source catalog`) {
		t.Fatalf("failing load: %d %s", code, stderr)
	}
	for _, d := range []string{"runs/fail", "runs/fail.work"} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s left behind by a failed load", d)
		}
	}
	a := load("a", "--evita-version", older.Ref)
	importedAgainstLoad(t, fixture, filepath.Join(tmp, "runs", "a"), filepath.Join(tmp, "runs", "a.work", "writer-logs", "gc.log"))
	replayedAgainstLoad(t, pristine, older.Ref, a)
	b := replay("b", "--evita-version", newer.Ref)
	if a.Server.Build.Source != runfmt.ServerFromRelease || a.Server.Build.Version != older.Ref || b.Server.Build.Version != newer.Ref ||
		a.Server.Build.ClasspathSHA256 == b.Server.Build.ClasspathSHA256 {
		t.Fatalf("releases recorded as %+v and %+v", a.Server.Build, b.Server.Build)
	}
	// an evitaDB checkout whose built jar is the newer release
	root := filepath.Join(tmp, "evitaDB")
	os.MkdirAll(root, 0o755)
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("target/\n"), 0o644)
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"commit", "-q", "-m", "x"}} {
		if out, err := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git: %v %s", err, out)
		}
	}
	_, stderr, code = runCLI(t, "load", "--pristine", pristine, "--catalog", "shop", "--server-heap", "1g", "--reader-heap", "1g",
		"--out", filepath.Join(tmp, "runs", "nojar"), "--build", "c", "--evita-home", root)
	if code != 1 || !strings.Contains(stderr, "mvn install -pl evita_server -am") {
		t.Fatalf("checkout without a built jar: %d %s", code, stderr)
	}
	evitatest.LauncherJar(t, newer, filepath.Join(root, evitaserver.CheckoutJar))
	c := replay("c", "--evita-home", root)
	if co := c.Server.Build.Checkout; c.Server.Build.Source != runfmt.ServerFromCheckout || co == nil || len(co.Commit) != 40 || co.Dirty {
		t.Fatalf("checkout recorded as %+v", c.Server.Build)
	}
	// two releases: the server version is the build under test, not a refusal
	out, stderr, code = runCLI(t, "compare", filepath.Join(tmp, "runs", "replay"), filepath.Join(tmp, "runs", "b"))
	if code != 0 || strings.Contains(out, "differs") {
		t.Fatalf("compare of two releases: %d\n%s\n%s", code, out, stderr)
	}
}

// A Java-harness run and a warmstat run of the same catalog on this machine differ in
// the loader alone, as the README says: the harness run is rendered by a real JVM with
// the harness's format strings (testdata/javagen) around the real load's own upsert
// times, imported with --machine this --jvm this and the writer's real GC log, and
// compared with the real load.
func importedAgainstLoad(t *testing.T, fixture, run, gcLog string) {
	t.Helper()
	tmp := t.TempDir()
	rows, err := os.ReadFile(filepath.Join(run, runfmt.EntitiesFile))
	if err != nil {
		t.Fatal(err)
	}
	// the harness's per-entity CSV: collection,primaryKey,upsert_nanos
	lines := strings.Split(strings.TrimSpace(string(rows)), "\n")
	head := strings.Split(lines[0], ",")
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	samples := []string{"collection,primaryKey,upsert_nanos"}
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		samples = append(samples, f[col["collection"]]+","+f[col["primary_key"]]+","+f[col["upsert_ns"]])
	}
	csv := filepath.Join(tmp, "samples.csv")
	os.WriteFile(csv, []byte(strings.Join(samples, "\n")+"\n"), 0o644)
	classes, harness := filepath.Join(tmp, "classes"), filepath.Join(tmp, "harness")
	if out, err := exec.Command("javac", "-d", classes, fixture).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	if out, err := exec.Command("java", "-cp", classes, "HarnessFixture", harness, "ok", "en-US", "1", csv).CombinedOutput(); err != nil {
		t.Fatalf("HarnessFixture: %v\n%s", err, out)
	}
	imp := filepath.Join(tmp, "imported")
	if _, stderr, code := runCLI(t, "import", "--java", harness, "--out", imp, "--machine", "this", "--jvm", "this", "--writer-gc-log", gcLog,
		"--server-heap", "1g", "--reader-heap", "1g", "--storage-compress", "true", "--cache", "false", "--traffic-recording", "false"); code != 0 {
		t.Fatalf("import: %d %s", code, stderr)
	}
	d, stderr, code := compareJSON(t, imp, run)
	var fields []string
	for _, x := range d.Mismatches {
		fields = append(fields, x.Field+" (A="+x.A+", B="+x.B+")")
	}
	if code != 3 || len(d.Mismatches) != 1 || d.Mismatches[0].Field != "loader" {
		t.Fatalf("a harness run and a load of the same catalog on this machine: exit %d, mismatches %v\n%s", code, fields, stderr)
	}
	// the one difference, allowed, compares
	if _, stderr, code := runCLI(t, "compare", "--allow-mismatch", "loader", imp, run); code != 0 {
		t.Fatalf("compare --allow-mismatch loader: %d %s", code, stderr)
	}
}

// The same workload applied by the embedded writer: a verified run of target mode
// embedded; compare of the remote replay against it prints the transport's cost per
// collection (not a verdict), report --transport marks by that measurement, and a live
// run against the embedded one is refused (source mode differs too).
func embeddedAgainstReplay(t *testing.T, wl, release string, remote *runfmt.Manifest) {
	t.Helper()
	out, stderr, code := runCLI(t, "load", "--replay", wl, "--target-mode", "embedded", "--evita-version", release, "--server-heap", "1g",
		"--out", filepath.Join("runs", "embedded"), "--build", "replay", "--run-id", "embedded")
	if code != 0 || !strings.Contains(out, "RUN_STATUS=MEASUREMENT-DONE-embedded") || !strings.Contains(out, "(embedded)") {
		t.Fatalf("load --target-mode embedded: %d\n%s\n%s", code, out, stderr)
	}
	m, err := runfmt.ReadManifest(filepath.Join("runs", "embedded", runfmt.ManifestFile))
	if err != nil || m.TargetMode != runfmt.TargetEmbedded || m.Verification.Status != runfmt.Verified || m.Entities != remote.Entities ||
		m.Dataset.Fingerprint != remote.Dataset.Fingerprint || m.WriterGC == nil || m.Server.Address != "" || m.Server.LoadCPUNs == nil {
		t.Fatalf("embedded run: %v %+v", err, m)
	}
	out, stderr, code = runCLI(t, "compare", "--format", "json", filepath.Join("runs", "replay"), filepath.Join("runs", "embedded"))
	var tc report.TransportJSON
	if err := json.Unmarshal([]byte(out), &tc); code != 0 || err != nil || tc.Kind != "transport-cost" || len(tc.Rows) != len(remote.Collections) {
		t.Fatalf("compare remote embedded: exit %d %v\n%s\n%s", code, err, out, stderr)
	}
	for _, r := range tc.Rows {
		if r.RemoteUs == nil || r.EmbeddedUs == nil || r.CostUs == nil || math.Abs(*r.RemoteUs-*r.EmbeddedUs-*r.CostUs) > 1e-6 || r.CostLowUs != nil {
			t.Fatalf("transport row %+v", r)
		}
	}
	out, _, code = runCLI(t, "compare", filepath.Join("runs", "embedded"), filepath.Join("runs", "replay"))
	if code != 0 || !strings.Contains(out, "what the transport costs: remote B (1 run) - embedded A (1 run)") || !strings.Contains(out, "not a verdict on a build") {
		t.Fatalf("compare embedded remote: %d\n%s", code, out)
	}
	out, stderr, code = runCLI(t, "report", "--format", "json", filepath.Join("runs", "replay"), "--transport", filepath.Join("runs", "embedded"))
	var rj report.RunJSON
	if err := json.Unmarshal([]byte(out), &rj); code != 0 || err != nil || rj.TransportFrom == "" || rj.Collections[0].TransportSharePct == nil {
		t.Fatalf("report --transport: %d %v\n%s", code, err, stderr)
	}
	if _, stderr, code := runCLI(t, "compare", filepath.Join("runs", "a"), filepath.Join("runs", "embedded")); code != 3 || !strings.Contains(stderr, "source-mode differs") {
		t.Fatalf("live against embedded: %d %s", code, stderr)
	}
}

// extract reads the snapshot once (a reader alone); load --replay loads it with the
// writer alone, verified, with the live load's dataset fingerprint; a replayed run is
// not compared with a live one (source mode differs); a damaged workload, or a subset
// the workload was not extracted with, is refused before any server starts.
func replayedAgainstLoad(t *testing.T, pristine, release string, live *runfmt.Manifest) {
	t.Helper()
	wl := filepath.Join("runs", "shop.wsw")
	out, stderr, code := runCLI(t, "extract", "--pristine", pristine, "--catalog", "shop", "--evita-version", release, "--reader-heap", "1g", "--out", wl)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("workload %s: %d entities from ", wl, live.Entities)) {
		t.Fatalf("extract: %d\n%s\n%s", code, out, stderr)
	}
	if _, stderr, code := runCLI(t, "extract", "--pristine", pristine, "--catalog", "shop", "--evita-version", release, "--out", wl); code != 1 ||
		!strings.Contains(stderr, "never overwritten") {
		t.Fatalf("extract onto an existing workload: %d %s", code, stderr)
	}
	if _, err := os.Stat(wl + ".work"); !os.IsNotExist(err) { // refused before any server started
		t.Fatalf("extract onto an existing workload prepared a work directory: %v", err)
	}
	out, stderr, code = runCLI(t, "load", "--replay", wl, "--evita-version", release, "--server-heap", "1g", "--out", filepath.Join("runs", "replay"),
		"--build", "replay", "--run-id", "replay")
	if code != 0 || !strings.Contains(out, "RUN_STATUS=MEASUREMENT-DONE-replay") {
		t.Fatalf("load --replay: %d\n%s\n%s", code, out, stderr)
	}
	m, err := runfmt.ReadManifest(filepath.Join("runs", "replay", runfmt.ManifestFile))
	if err != nil || m.SourceMode() != runfmt.SourceReplay || m.Dataset.Fingerprint != live.Dataset.Fingerprint || m.Entities != live.Entities ||
		m.Verification.Status != runfmt.Verified || m.Reader.MaxHeapBytes != nil {
		t.Fatalf("replayed run: %v %+v", err, m)
	}
	if _, err := os.Stat(filepath.Join("runs", "replay.work", "reader-logs")); !os.IsNotExist(err) {
		t.Fatalf("a reader was started for a replay: %v", err)
	}
	d, stderr, code := compareJSON(t, filepath.Join("runs", "a"), filepath.Join("runs", "replay"))
	var fields []string
	for _, x := range d.Mismatches {
		fields = append(fields, x.Field)
	}
	if code != 3 || !slices.Contains(fields, "source-mode") {
		t.Fatalf("live against replay: exit %d, mismatches %v\n%s", code, fields, stderr)
	}
	embeddedAgainstReplay(t, wl, release, m)
	// refused before any server starts, one line each
	raw, _ := os.ReadFile(wl)
	damaged := filepath.Join("runs", "damaged.wsw")
	bad := slices.Clone(raw)
	bad[len(bad)/2] ^= 0x20
	os.WriteFile(damaged, bad, 0o644)
	for _, c := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"load", "--replay", damaged, "--evita-version", release, "--server-heap", "1g", "--out", "runs/x", "--build", "x"}, "checksum mismatch", 1},
		{[]string{"load", "--replay", wl, "--evita-version", release, "--server-heap", "1g", "--out", "runs/x", "--build", "x", "--collections", "Product"},
			"the workload was not extracted with these settings", 1},
		{[]string{"load", "--replay", wl, "--evita-version", release, "--reader-heap", "1g", "--out", "runs/x", "--build", "x"}, "a replay starts no reader", 64},
		{[]string{"load", "--replay", wl, "--pristine", pristine, "--catalog", "shop", "--out", "runs/x", "--build", "x"}, "--replay FILE is the source", 64},
		{[]string{"extract", "--out", "x.wsw"}, "extract needs either --pristine", 2},
	} {
		_, stderr, code := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d %q, want %d and %q", c.args, code, stderr, c.code, c.want)
		}
	}
	if _, err := os.Stat("runs/x"); !os.IsNotExist(err) {
		t.Fatal("a refused replay left a run")
	}
}
