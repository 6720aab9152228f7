package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/series"
)

func f64(v float64) *float64 { return &v }

// The last lines of a series are its answer in words, whatever the verdict: an
// unresolved gate still bounds the change and says what the machine's noise allowed, and
// what would resolve it.
func TestSeriesAnswer(t *testing.T) {
	plan := series.Plan{A: series.Build{Spec: "2026.2.2", Label: "2026.2.2"}, B: series.Build{Spec: "2026.2.3", Label: "2026.2.3"},
		ThresholdPct: 2, MinRuns: 2, MaxRuns: 3}
	sixteen := 16
	cases := []struct {
		name    string
		reason  string
		gate    analyze.GateLook
		want    []string
		wantNot []string
	}{
		{"unresolved", "max-runs",
			analyze.GateLook{Gate: "Product/mean", Verdict: analyze.Unresolved, DeltaPct: f64(-11.9), LowPct: f64(-32.9), HighPct: f64(15.8), NoisePct: f64(8.07), PlanRuns: &sixteen},
			[]string{"Product/mean: no verdict at ±2 %: 2026.2.3 against 2026.2.2 -11.9 % [-32.9 %, +15.8 %]; 2026.2.3 is somewhere from 32.9 % faster to 15.8 % slower than 2026.2.2",
				"this machine's noise: 8.1 % per run (within a pair); at it, 3 pairs tell apart only a change beyond about ±26 %",
				"to resolve Product/mean: at its noise and the change seen (-11.9 %) a series of about 16 pairs would: start one (a new --out, --max-runs 16)"},
			nil},
		{"too close to call", "max-runs",
			analyze.GateLook{Gate: "Product/mean", Verdict: analyze.Unresolved, DeltaPct: f64(-3.9), LowPct: f64(-18.0), HighPct: f64(12.5), NoisePct: f64(7.2)},
			[]string{"2026.2.3 is somewhere from 18.0 % faster to 12.5 % slower than 2026.2.2",
				"the change seen (-3.9 %) lies too close to the ±2 % threshold for even 100 pairs at this noise to decide it",
				"a larger catalog (seed --scale)"},
			nil},
		{"slower", "resolved",
			analyze.GateLook{Gate: "Product/mean", Verdict: analyze.Slower, DeltaPct: f64(9.5), LowPct: f64(4.1), HighPct: f64(15.2), NoisePct: f64(1.6)},
			[]string{"Product/mean: 2026.2.3 is slower than 2026.2.2 by +9.5 % [+4.1 %, +15.2 %]: the whole interval lies beyond the ±2 % noise threshold",
				"at it, 3 pairs tell apart only a change beyond about ±8 %"},
			[]string{"to resolve"}},
		{"same", "resolved",
			analyze.GateLook{Gate: "*/ingest", Verdict: analyze.Equivalent, DeltaPct: f64(0.2), LowPct: f64(-1.1), HighPct: f64(1.5), NoisePct: f64(0.9)},
			[]string{"*/ingest: 2026.2.3 and 2026.2.2 are the same within ±2 %: +0.2 % [-1.1 %, +1.5 %]"},
			[]string{"to resolve"}},
		{"no interval", "max-runs",
			analyze.GateLook{Gate: "all/goLive", Verdict: analyze.Insufficient, Reason: "every run has the same figure"},
			[]string{"all/goLive: insufficient, no interval (every run has the same figure)", "to resolve all/goLive: every run has the same figure"},
			nil},
	}
	for _, c := range cases {
		st := &series.State{Plan: plan, Outcome: &series.Outcome{Reason: c.reason, Runs: 3, Gates: []analyze.GateLook{c.gate}}}
		for i, total := range []float64{4.0, 4.5, 4.0, 4.2, 0, 4.4} { // a run without a figure counts for nothing
			st.Entries = append(st.Entries, series.Entry{Seq: i + 1, Side: []string{"A", "B", "B", "A", "A", "B"}[i], Kind: series.Measured, Status: series.Done,
				Health: &analyze.RunHealth{TotalS: f64(total)}})
		}
		c.want = append(c.want, "publishing (load + goLive) took 4.1 s with 2026.2.2 and 4.3 s with 2026.2.3 on this machine (geometric means of 2 runs and 3 runs")
		var w bytes.Buffer
		printAnswer(&w, st)
		nextStep(&w, st)
		for _, want := range c.want {
			if !strings.Contains(w.String(), want) {
				t.Errorf("%s: the answer lacks %q:\n%s", c.name, want, w.String())
			}
		}
		for _, not := range c.wantNot {
			if strings.Contains(w.String(), not) {
				t.Errorf("%s: the answer says %q:\n%s", c.name, not, w.String())
			}
		}
	}
}
