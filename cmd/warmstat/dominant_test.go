package main

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/history"
	"github.com/warmstat/warmstat/internal/evitatest"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/series"
)

// A catalog without a Product collection is asked the faithful way on its own dominant
// collection (the one with the most entities), against real servers: ab's first lines
// and plan gate on its adjusted mean and watch its allocation, every run is an embedded
// replay, and a history of those runs follows the same collection and gates its
// follow-up on it (history.GateOf, the gate --confirm and --bisect judge on).
func TestFaithfulMethodWithoutProduct(t *testing.T) {
	older, newer := evitatest.TwoReleases(t)
	pristine, _ := evitatest.SmallSnapshot(t, older)
	info, err := evitaserver.ReadSnapshot(pristine, "shop")
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	for n, c := range info.Counts {
		if n != "Product" {
			counts[n] = int64(c)
		}
	}
	dom := analyze.Dominant(counts)
	tmp := t.TempDir()
	wl := filepath.Join(tmp, "no-product.wsw")
	if _, stderr, code := runCLI(t, "extract", "--pristine", pristine, "--catalog", "shop", "--evita-version", older.Ref, "--reader-heap", "1g",
		"--collections", strings.Join(slices.Sorted(maps.Keys(counts)), ","), "--out", wl); code != 0 {
		t.Fatalf("extract: exit %d %s", code, stderr)
	}
	dir := filepath.Join(tmp, "series")
	_, stderr, code := runCLI(t, "ab", "--workload", wl, "--a", older.Ref, "--b", newer.Ref, "--pairs", "2", "--server-heap", "1g", "--out", dir)
	if code != 0 {
		t.Fatalf("ab: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"the question is asked of the workload " + wl, "gated on " + dom + "/mean_adj (the " + dom + " mean with the machine's speed set aside)",
		"watching " + dom + "/alloc"} {
		if !strings.Contains(stderr, want) {
			t.Fatalf("ab's first lines lack %q:\n%s", want, stderr)
		}
	}
	st, err := series.Read(dir)
	if err != nil || !slices.Equal(st.Plan.Gates, []string{dom + "/mean_adj"}) || !slices.Equal(st.Plan.Watch, []string{dom + "/alloc"}) {
		t.Fatalf("the plan: %v %+v", err, st)
	}
	runs, _ := filepath.Glob(filepath.Join(dir, "?", "run-*", runfmt.ManifestFile))
	for _, f := range runs {
		m, err := runfmt.ReadManifest(f)
		if err != nil || m.TargetMode != runfmt.TargetEmbedded || m.SourceMode() != runfmt.SourceReplay || slices.ContainsFunc(m.Collections, func(c runfmt.Collection) bool { return c.Name == "Product" }) {
			t.Fatalf("%s: %v %s %s", f, err, m.TargetMode, m.SourceMode())
		}
	}
	if len(runs) != 4 {
		t.Fatalf("%d runs, want 4", len(runs))
	}
	hist := filepath.Join(tmp, "history")
	for i, side := range []struct{ dir, ref string }{{"A", older.Ref}, {"B", newer.Ref}} {
		if _, stderr, code := runCLI(t, "history", "add", hist, filepath.Join(dir, side.dir), "--order", []string{"1", "2"}[i], "--ref", side.ref); code != 0 {
			t.Fatalf("history add %s: exit %d %s", side.dir, code, stderr)
		}
	}
	out, stderr, code := runCLI(t, "history", hist, "--format", "json")
	if code != 0 || !json.Valid([]byte(out)) {
		t.Fatalf("history: exit %d %s", code, stderr)
	}
	hs, err := history.Open(hist, false)
	if err != nil {
		t.Fatal(err)
	}
	points, err := hs.Points()
	if err != nil {
		t.Fatal(err)
	}
	lines := history.Lines(points)
	if len(lines) != 1 || lines[0].Dominant() != dom || history.GateOf(history.FigureProductMean, lines[0].Dominant()) != dom+"/mean_adj" {
		t.Fatalf("the history follows %q, gated on %q; want %s", lines[0].Dominant(), history.GateOf(history.FigureProductMean, lines[0].Dominant()), dom)
	}
}
