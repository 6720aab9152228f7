package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/internal/evitatest"
	"github.com/warmstat/warmstat/runfmt"
)

// The upgrade question across evitaDB's lines: 2026.1 against 2026.2 by the one
// command, with the embedded writer (the default) and a remote one. Both sides get the
// catalog written for 2026.1, the first lines say so, every run records it, and the
// series answers.
func TestABAcrossLines(t *testing.T) {
	old := evitatest.Line2026_1(t)
	newer := evitatest.Server(t)
	tmp := t.TempDir()
	wl := filepath.Join(tmp, "shop.wsw")
	if out, stderr, code := runCLI(t, "seed", "--workload", wl, "--catalog", "shop", "--scale", "0.003"); code != 0 {
		t.Fatalf("seed: exit %d\n%s\n%s", code, out, stderr)
	}
	for _, mode := range []string{"embedded", "remote"} {
		dir := filepath.Join(tmp, mode)
		out, stderr, code := runCLI(t, "ab", "--workload", wl, "--a", old.Ref, "--b", newer.Ref, "--max-runs", "2", "--target-mode", mode, "--out", dir)
		if code != 0 && code != exitRefused {
			t.Fatalf("%s: exit %d\n%s\n%s", mode, code, out, stderr)
		}
		if want := "catalog: written for evitaDB 2026.1 on both sides (" + old.Ref + " is of that line)"; !strings.Contains(stderr, want) {
			t.Fatalf("%s: the first lines lack %q:\n%s", mode, want, stderr)
		}
		if !strings.Contains(out, "look after 2 pairs") || !strings.Contains(out, "== warmstat compare") {
			t.Fatalf("%s: no answer:\n%s", mode, out)
		}
		for _, side := range []string{"A", "B"} {
			runs, _ := filepath.Glob(filepath.Join(dir, side, "run-*", runfmt.ManifestFile))
			if len(runs) != 2 {
				t.Fatalf("%s side %s: %d runs", mode, side, len(runs))
			}
			for _, f := range runs {
				m, err := runfmt.ReadManifest(f)
				if err != nil {
					t.Fatal(err)
				}
				if m.Conditions.CatalogLine != "2026.1" || m.Verification.Status != runfmt.Verified || m.TargetMode != mode {
					t.Fatalf("%s: catalog line %q, %s, %s", f, m.Conditions.CatalogLine, m.Verification.Status, m.TargetMode)
				}
			}
		}
	}
}
