package main

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/internal/synthrun"
	"github.com/warmstat/warmstat/runfmt"
)

func TestPlots(t *testing.T) {
	tmp := t.TempDir()
	a, b := filepath.Join(testdata, "groups", "v2026.2.0"), filepath.Join(testdata, "groups", "v2026.2.2")
	cases := []struct {
		name   string
		args   []string
		series []string // legend entries and labels the picture must carry
	}{
		{"cdf", []string{"--kind", "cdf", a, b}, []string{"Upsert latency distribution - Product", "v2026.2.0 / v2026.2.0-1", "v2026.2.2 / v2026.2.2-12", "p99", "p95", "p50", "upsert latency (µs, log scale)"}},
		{"timeline", []string{"--kind", "timeline", "--collection", "*", filepath.Join(a, "run-1"), filepath.Join(b, "run-1")}, []string{"all collections", "v2026.2.0 / v2026.2.0-1 median (blocks of 25)", "v2026.2.2 / v2026.2.2-10 p99", "upsert number within the run"}},
		{"compare", []string{"--kind", "compare", "--all", a, b}, []string{"Change of B (v2026.2.2) vs A (v2026.2.0)", "noise threshold ±2.0 %", "Product mean upsert", "Tag p99 upsert", "all TOTAL (load + goLive)", "faster", "unresolved"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pngPath := filepath.Join(tmp, c.name+".png")
			if _, stderr, code := runCLI(t, append([]string{"plot", "--out", pngPath, "--width", "800", "--height", "500"}, c.args...)...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			f, err := os.Open(pngPath)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(f)
			f.Close()
			if err != nil {
				t.Fatalf("not a PNG: %v", err)
			}
			if s := img.Bounds().Size(); s.X != 800 || s.Y != 500 {
				t.Fatalf("size %v, want 800x500", s)
			}
			svgPath := filepath.Join(tmp, c.name+".svg")
			if _, stderr, code := runCLI(t, append([]string{"plot", "--out", svgPath}, c.args...)...); code != 0 {
				t.Fatalf("svg: exit %d: %s", code, stderr)
			}
			svg, _ := os.ReadFile(svgPath)
			s := string(svg)
			if !strings.HasPrefix(s, "<?xml") || !strings.Contains(s, `width="960pt"`) && !strings.Contains(s, `width="720pt"`) {
				t.Fatalf("not the expected SVG: %.200s", s)
			}
			for _, want := range c.series {
				if !strings.Contains(s, xmlEscape(want)) {
					t.Errorf("SVG lacks %q", want)
				}
			}
		})
	}
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func TestPlotErrors(t *testing.T) {
	tmp := t.TempDir()
	a := filepath.Join(testdata, "groups", "v2026.2.0")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"plot", "--out", filepath.Join(tmp, "x.gif"), a}, 2, "must end in .svg, .png or .pdf"},
		{[]string{"plot", "--kind", "pie", "--out", filepath.Join(tmp, "x.svg"), a}, 2, `--kind "pie"`},
		{[]string{"plot", "--collection", "Voucher", "--out", filepath.Join(tmp, "x.svg"), a}, 2, `--collection "Voucher": `},
		{[]string{"plot", "--kind", "compare", "--out", filepath.Join(tmp, "x.svg"), a}, 2, "needs two arguments"},
		{[]string{"plot", "--threshold", "5", "--out", filepath.Join(tmp, "x.svg"), a}, 2, "--threshold applies to --kind compare, not cdf"},
		{[]string{"plot", "--kind", "timeline", "--method", "bca", "--out", filepath.Join(tmp, "x.svg"), a}, 2, "--method applies to --kind compare"},
	} {
		_, stderr, code := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d %q, want %d %q", c.args, code, stderr, c.code, c.want)
		}
	}
	// the compare view obeys the comparability contract
	b := filepath.Join(tmp, "b")
	synthrun.Group(tmp, 2, 5, synthrun.Spec{Label: "b", Mutate: func(m *runfmt.Manifest) { v := int64(8 << 30); m.Reader.MaxHeapBytes = &v }})
	_, stderr, code := runCLI(t, "plot", "--kind", "compare", "--out", filepath.Join(tmp, "c.svg"), a, b)
	if code != 3 || !strings.Contains(stderr, "reader-heap differs") {
		t.Errorf("refusal: %d %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(tmp, "c.svg")); err == nil {
		t.Error("a refused comparison wrote a picture")
	}
}
