package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/internal/synthrun"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/series"
)

// writeSeries lays out an ABBA series of n pairs as ab leaves it (DIR/A/run-k,
// DIR/B/run-k, DIR/series.json): B is 5 % slower, and the machine wanders between
// pairs (15 % SD) while the two runs of a pair share its state.
func writeSeries(t *testing.T, dir string, n int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	st := series.State{Schema: series.Schema, Plan: series.Plan{MinRuns: 2, MaxRuns: 10, ThresholdPct: 2, AlphaPct: 5}, Started: time.Now().UTC()}
	seq := 0
	for k := range n {
		machine := math.Exp(0.15 * rng.NormFloat64())
		order := []string{"A", "B"}
		if k%2 == 1 {
			order = []string{"B", "A"}
		}
		for _, side := range order {
			effect := machine
			if side == "B" {
				effect *= 1.05
			}
			rel := filepath.Join(side, fmt.Sprintf("run-%d", k+1))
			seq++
			if _, err := synthrun.Write(filepath.Join(dir, rel), synthrun.Spec{Label: side, Seed: uint64(seq), Effect: effect, Tau: 0.002}); err != nil {
				t.Fatal(err)
			}
			st.Entries = append(st.Entries, series.Entry{Seq: seq, Side: side, Kind: series.Measured, Dir: rel, Status: series.Done})
		}
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, series.File), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// compare on a series' two sides uses its pairs (and says so); the machine's wandering
// between pairs then leaves the intervals, and a 5 % slowdown that welch-t cannot
// resolve across the pairs is found. Either order of the sides works; --method
// welch-t still compares them as groups; outside the series, paired-t pairs the runs
// by start time, and refuses groups whose runs are no pairs.
func TestCompareUsesTheSeriesPairs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "series")
	writeSeries(t, dir, 6)
	a, b := filepath.Join(dir, "A"), filepath.Join(dir, "B")
	get := func(args ...string) report.CompareJSON {
		t.Helper()
		out, stderr, code := runCLI(t, append([]string{"compare", "--format", "json"}, args...)...)
		var d report.CompareJSON
		if code != 0 || json.Unmarshal([]byte(out), &d) != nil {
			t.Fatalf("compare %v: %d %s", args, code, stderr)
		}
		return d
	}
	row := func(d report.CompareJSON, coll, metric string) analyze.Row {
		for _, r := range d.Rows {
			if r.Collection == coll && string(r.Metric) == metric {
				return r
			}
		}
		t.Fatalf("no row %s/%s", coll, metric)
		return analyze.Row{}
	}
	paired := get(a, b)
	r := row(paired, "Product", "mean")
	if paired.Method != "paired-t" || len(paired.Pairs) != 6 || r.Pairs == nil || *r.Pairs != 6 || r.PairCVPct == nil || *r.PairCVPct > *r.CVPct/2 ||
		r.Verdict != analyze.Slower || math.Abs(*r.DeltaPct-5) > 2 {
		t.Fatalf("paired: method %s, %d pairs, %s, change %s, within pairs %s, between runs %s", paired.Method, len(paired.Pairs), r.Verdict,
			optFig(r.DeltaPct), optFig(r.PairCVPct), optFig(r.CVPct))
	}
	welch := get("--method", "welch-t", a, b)
	if w := row(welch, "Product", "mean"); welch.Method != "welch-t" || w.Pairs != nil || w.Verdict != analyze.Unresolved || *w.CVPct < 3 {
		t.Fatalf("welch-t on the same runs: %s %+v", welch.Method, w)
	}
	swapped := row(get(b, a), "Product", "mean")
	if swapped.Verdict != analyze.Faster || math.Abs(*swapped.DeltaPct-(100/1.05-100)) > 1 {
		t.Fatalf("B against A: %+v", swapped)
	}
	out, _, code := runCLI(t, "compare", a, b)
	if code != 0 || !strings.Contains(out, "95 % paired-t") || !strings.Contains(out, "paired: 6 pairs of the series") ||
		!strings.Contains(out, "within-pair noise") || !strings.Contains(out, "pairs") {
		t.Fatalf("text: %d\n%s", code, out)
	}
	// the same runs outside their series: paired by start time, each pair back to back
	loose := t.TempDir()
	os.Rename(a, filepath.Join(loose, "A"))
	byTime := get("--method", "paired-t", filepath.Join(loose, "A"), b)
	if r := row(byTime, "Product", "mean"); len(byTime.Pairs) != 6 || r.Verdict != analyze.Slower || *r.DeltaPct != *row(paired, "Product", "mean").DeltaPct {
		t.Fatalf("paired by start time: %d pairs, %+v", len(byTime.Pairs), r)
	}
	os.RemoveAll(filepath.Join(loose, "A", "run-6"))
	if _, stderr, code := runCLI(t, "compare", "--method", "paired-t", filepath.Join(loose, "A"), b); code != 2 || !strings.Contains(stderr, "as many runs on each side (A 5, B 6)") {
		t.Fatalf("paired-t on unequal groups: %d %s", code, stderr)
	}
	os.RemoveAll(filepath.Join(b, "run-1")) // now A's 1st ran beside B's 2nd's partner: no pairs by position
	if _, stderr, code := runCLI(t, "compare", "--method", "paired-t", filepath.Join(loose, "A"), b); code != 2 || !strings.Contains(stderr, "did not run back to back") {
		t.Fatalf("paired-t on runs that are no pairs: %d %s", code, stderr)
	}
}

// optFig is a figure with two decimals, "—" when unknown.
func optFig(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.2f", *v)
}
