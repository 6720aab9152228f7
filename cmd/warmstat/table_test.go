package main

import (
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
	// grouped rows: mean ± interval
	out, _, _ = runCLI(t, "table", "--group", "--format", "text", a)
	if !strings.Contains(out, " ± ") {
		t.Errorf("group row:\n%s", out)
	}
	if _, stderr, code := runCLI(t, "table", "--columns", "build,speed", a); code != 1 || !strings.Contains(stderr, `unknown column "speed"`) {
		t.Errorf("bad column: %d %q", code, stderr)
	}
}
