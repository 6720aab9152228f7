package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/series"
)

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
		if err := WriteSeriesAnswer(&w, BuildSeriesAnswer(st, "series/x"), Text); err != nil {
			t.Fatal(err)
		}
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

func f64(v float64) *float64 { return &v }

// A timed series' state: 4 runs of 20 s each, one of them failed.
func timedSeries(plan series.Plan, statuses ...string) *series.State {
	start := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	end := start.Add(20 * time.Second)
	st := &series.State{Plan: plan}
	for i, status := range statuses {
		st.Entries = append(st.Entries, series.Entry{Seq: i + 1, Side: []string{"A", "B", "B", "A"}[i%4], Kind: series.Measured, Status: status, Started: &start, Ended: &end})
	}
	return st
}

// The run line's ETA in words: "at most" a plan's maximum (a failed run is run again:
// 1 run left of 2 × 2, not 0), and a fixed-size series' certain runs left.
func TestSeriesRunETA(t *testing.T) {
	began := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	st := timedSeries(series.Plan{MaxRuns: 2}, series.Done, series.Done, series.Failed, series.Done)
	var b bytes.Buffer
	SeriesRun(&b, st, st.Entries[3], st.Remaining(began, began))
	if !strings.Contains(b.String(), "ETA: at most 20s (1 run left of the plan's maximum)") {
		t.Fatalf("%s", b.String())
	}
	st = timedSeries(series.Plan{Pairs: 3, MinRuns: 3, MaxRuns: 3}, series.Done, series.Done, series.Done, series.Done)
	b.Reset()
	SeriesRun(&b, st, st.Entries[3], st.Remaining(began, began))
	if got := b.String(); !strings.Contains(got, "ETA: 40s (2 runs left of the series' 3 pairs)") || strings.Contains(got, "at most") {
		t.Fatalf("%s", got)
	}
	b.Reset()
	SeriesRun(&b, st, st.Entries[3], series.ETA{Left: 10, Likely: 4, PerRun: time.Minute})
	if !strings.Contains(b.String(), "ETA: about 4m0s if the noise holds (4 runs more), at most 10m0s") {
		t.Fatalf("%s", b.String())
	}
}

// Markdown and JSON render the same answer: markdown the same words as a list under the
// headline, JSON the model with the figures the words come from.
func TestSeriesAnswerFormats(t *testing.T) {
	plan := series.Plan{A: series.Build{Spec: "2026.2.2", Label: "2026.2.2"}, B: series.Build{Spec: "2026.2.3"}, ThresholdPct: 2, MinRuns: 2, MaxRuns: 6}
	st := timedSeries(plan, series.Done, series.Done, series.Done, series.Done)
	for i := range st.Entries {
		st.Entries[i].Health = &analyze.RunHealth{TotalS: f64(4 + float64(i)/10)}
	}
	st.Outcome = &series.Outcome{Reason: "resolved", Runs: 2, Saved: 4, Gates: []analyze.GateLook{
		{Gate: "Product/mean", Verdict: analyze.Faster, DeltaPct: f64(-14.1), LowPct: f64(-20.3), HighPct: f64(-7.9), NoisePct: f64(2.4)}}}
	a := BuildSeriesAnswer(st, "series/x")
	var text, md, js bytes.Buffer
	for f, w := range map[Format]*bytes.Buffer{Text: &text, Markdown: &md, JSON: &js} {
		if err := WriteSeriesAnswer(w, a, f); err != nil {
			t.Fatal(err)
		}
	}
	sentence := "Product/mean: 2026.2.3 is faster than 2026.2.2 by -14.1 % [-20.3 %, -7.9 %]: the whole interval lies beyond the ±2 % noise threshold"
	for name, out := range map[string]string{"text": text.String(), "md": md.String()} {
		if !strings.Contains(out, sentence) || !strings.Contains(out, "series resolved after 2 runs per side (4 saved against --max-runs 6); Product/mean faster") {
			t.Errorf("%s lacks the answer:\n%s", name, out)
		}
	}
	if strings.Contains(md.String(), "the table above") || !strings.Contains(md.String(), "`warmstat table --group series/x/A series/x/B` has their intervals") ||
		!strings.Contains(text.String(), "the table above has their intervals") {
		t.Errorf("markdown stands alone, text follows the table:\n%s\n%s", md.String(), text.String())
	}
	if !strings.HasPrefix(md.String(), "### warmstat ab: 2026.2.3 against 2026.2.2\n\n**series resolved") ||
		!strings.Contains(md.String(), "\n  - this machine's noise: 2.4 % per run (within a pair)") {
		t.Errorf("markdown:\n%s", md.String())
	}
	var back SeriesAnswer
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	g := back.Gates[0]
	if back.Schema != SeriesAnswerSchema || back.B != "2026.2.3" || g.Verdict != analyze.Faster || *g.DeltaPct != -14.1 || g.DetectablePct == nil ||
		math.Abs(*g.DetectablePct-(6.2+2)) > 1e-9 || back.MachineTime == nil || back.MachineTime.TotalS != 80 || len(back.Slower) != 0 {
		t.Errorf("json: %s", js.String())
	}
}

// An allocation's verdict reads as bytes, in every place a series shows it: "less" or
// "more", never "faster" or "slower"; a time's verdict as it is.
func TestAllocationVerdictsReadAsBytes(t *testing.T) {
	for _, c := range []struct {
		gate string
		v    analyze.Verdict
		want string
	}{
		{"Product/alloc", analyze.Faster, "less"},
		{"Product/alloc", analyze.Slower, "more"},
		{"Product/alloc", analyze.Equivalent, string(analyze.Equivalent)},
		{"Product/mean_adj", analyze.Faster, string(analyze.Faster)},
	} {
		if got := verdictWord(c.gate, c.v); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.gate, c.v, got, c.want)
		}
	}
}
