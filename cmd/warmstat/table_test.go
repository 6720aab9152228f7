package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/internal/synthrun"
	"github.com/warmstat/warmstat/runfmt"
)

// A table mixing: verified synthetic runs, a run at another writer heap (the heap
// becomes a column), an imported run whose goLive failed (failed @ 15.0 s, footnote,
// no TOTAL), an unverified run (row mark) and runs without writer GC figures (—).
func TestTableGolden(t *testing.T) {
	tmp := t.TempDir()
	a := group(t, tmp, 2, 1, synthrun.Spec{Label: "v2026.2.0", Tau: 0.01})
	small := filepath.Join(tmp, "heap16")
	if _, err := synthrun.Write(small, synthrun.Spec{Label: "v2026.2.0", Seed: 3, Mutate: func(m *runfmt.Manifest) {
		h := int64(16 << 30)
		m.Server.MaxHeapBytes = &h
		young, full := int64(31), int64(2)
		m.WriterGC = &runfmt.GCStats{Collections: 33, YoungPauses: &young, FullPauses: &full, PauseNs: 4e8, ShareOfWallPc: 6.5}
	}}); err != nil {
		t.Fatal(err)
	}
	imp := func(sc string) string {
		out := filepath.Join(tmp, "java-"+sc)
		if _, e, c := runCLI(t, "import", "--java", filepath.Join(testdata, "java", sc), "--out", out, "--server-heap", "23g", "--build", "v2026.2.2"); c != 0 {
			t.Fatal(e)
		}
		return out
	}
	failed, unver := imp("golive-failed"), imp("unverified")
	args := []string{"table", "--columns", "build,Product.load,load,golive,total,full-gcs", a, small, failed, unver}
	for _, f := range []string{"md", "text", "csv", "json"} {
		out, stderr, code := runCLI(t, append([]string{args[0], "--format", f}, args[1:]...)...)
		if code != 0 {
			t.Fatalf("%s: %d %s", f, code, stderr)
		}
		golden(t, "table."+f, strings.ReplaceAll(out, tmp, "$TMP"))
	}
	md, _, _ := runCLI(t, args...)
	for _, want := range []string{"failed @ 15.0 s¹", "writer heap", "16g |", "— |", "java-unverified", "v2026.2.2² |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown table lacks %q:\n%s", want, md)
		}
	}
	// failed runs are refused unless asked for, then marked
	mis := filepath.Join(tmp, "java-mismatch")
	runCLI(t, "import", "--java", filepath.Join(testdata, "java", "mismatch"), "--out", mis)
	if _, stderr, code := runCLI(t, "table", mis); code != 1 || !strings.Contains(stderr, "--include-failed") {
		t.Errorf("failed run: %d %q", code, stderr)
	}
	out, _, code := runCLI(t, "table", "--include-failed", mis)
	if code != 0 || !strings.Contains(out, "FAILED run") {
		t.Errorf("--include-failed: %d\n%s", code, out)
	}
	// markdown escaping of labels
	pipe := filepath.Join(tmp, "pipe")
	synthrun.Write(pipe, synthrun.Spec{Label: "fix|pipe", Seed: 9})
	out, _, _ = runCLI(t, "table", pipe)
	if !strings.Contains(out, `fix\|pipe`) {
		t.Errorf("| not escaped:\n%s", out)
	}
	// grouped rows: geometric mean [95 % interval]
	out, _, _ = runCLI(t, "table", "--group", "--format", "text", a)
	if !strings.Contains(out, " s [") {
		t.Errorf("group row:\n%s", out)
	}
	if _, stderr, code := runCLI(t, "table", "--columns", "build,speed", a); code != 2 || !strings.Contains(stderr, `unknown column "speed"`) {
		t.Errorf("bad column: %d %q", code, stderr)
	}
}

// The writer's GC log given to import ends up in the manifest and the table.
func TestImportWriterGCLog(t *testing.T) {
	tmp := t.TempDir()
	log := filepath.Join(tmp, "gc.log")
	os.WriteFile(log, []byte(`[2026-11-29T19:27:56.392+0000][0.048s][info][gc          ] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 6M->1M(64M) 1.836ms
[2026-11-29T19:27:56.392+0000][0.048s][info][gc,start    ] GC(1) Pause Full (System.gc())
[2026-11-29T19:27:58.000+0000][2.000s][info][gc          ] GC(1) Pause Full (System.gc()) 38M->30M(64M) 12.5ms
`), 0o644)
	out := filepath.Join(tmp, "run")
	if _, e, c := runCLI(t, "import", "--java", filepath.Join(testdata, "java", "ok"), "--out", out, "--writer-gc-log", log); c != 0 {
		t.Fatal(e)
	}
	m, err := runfmt.ReadManifest(filepath.Join(out, runfmt.ManifestFile))
	if err != nil || m.WriterGC == nil || *m.WriterGC.YoungPauses != 1 || *m.WriterGC.FullPauses != 1 || m.WriterGC.PauseNs != 14_336_000 {
		t.Fatalf("%+v %v", m.WriterGC, err)
	}
	md, _, _ := runCLI(t, "table", "--columns", "build,full-gcs,young-gcs", out)
	if !strings.Contains(md, "| ok    |               1 |                1 |") {
		t.Fatalf("writer GC columns:\n%s", md)
	}
	// without the log the figures are not recorded: empty cells, never derived
	plain := filepath.Join(tmp, "plain")
	runCLI(t, "import", "--java", filepath.Join(testdata, "java", "ok"), "--out", plain)
	md, _, _ = runCLI(t, "table", "--columns", "build,full-gcs", plain)
	if !strings.Contains(md, "| ok    |               — |") {
		t.Fatalf("unrecorded GC figures:\n%s", md)
	}
}

// A run given twice (the same directory twice, or a copy of it, or a run also inside a
// group given beside it) is one run, not two rows: table and plot refuse it (exit 3),
// naming the places it appears.
func TestTableRefusesARunGivenTwice(t *testing.T) {
	tmp := t.TempDir()
	g := group(t, tmp, 2, 1, synthrun.Spec{Label: "v2026.2.0"})
	entries, err := os.ReadDir(g)
	if err != nil {
		t.Fatal(err)
	}
	one := filepath.Join(g, entries[0].Name())
	for _, args := range [][]string{
		{"table", one, one},
		{"table", "--group", g, g},
		{"table", g, one},
		{"plot", "--out", filepath.Join(tmp, "p.svg"), one, one},
	} {
		out, stderr, code := runCLI(t, args...)
		if code != 3 || !strings.Contains(stderr, "counted 2 times") || !strings.Contains(stderr, "one directory given more than once is one run") ||
			strings.Contains(stderr, "copies") {
			t.Errorf("%v: exit %d, stderr %q\n%s", args, code, stderr, out)
		}
	}
}
