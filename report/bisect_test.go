package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/bisect"
)

// A bisect's result in words: each culprit with its commit, change and reference (and
// the skipped commit that could be it instead), the skipped commits, every probe in a
// table, the machine time; markdown for a pull request.
func TestBisectResultWords(t *testing.T) {
	c := func(h, subj string) bisect.Commit {
		return bisect.Commit{Hash: strings.Repeat(h, 40), Subject: subj, Author: "Ann Tester <ann@example.org>", Date: "2026-11-30T10:00:00Z"}
	}
	good, slow, broken, bad := c("a", "Docs"), c("b", "Throttle"), c("c", "Break"), c("d", "Slower")
	subject := map[string]bisect.Commit{}
	for _, x := range []bisect.Commit{good, slow, broken, bad} {
		subject[x.Hash] = x
	}
	res := func(a, b bisect.Commit, v analyze.Verdict, d, lo, hi float64) bisect.Result {
		return bisect.Result{A: a.Hash, B: b.Hash, Verdict: v, Runs: 3, Series: "probes/" + b.Short() + "-vs-" + a.Short(),
			Gate: analyze.GateLook{Gate: "Product/mean", DeltaPct: &d, LowPct: &lo, HighPct: &hi}}
	}
	st := &bisect.State{Plan: bisect.Plan{Gate: "Product/mean"}, Good: good, Commits: []bisect.Commit{slow, broken, bad},
		Builds: map[string]bisect.Build{good.Hash: {TookNs: 61e9}, bad.Hash: {TookNs: 59e9}},
		Probes: []bisect.Probe{{Result: res(good, bad, analyze.Slower, 120.5, 80.1, 170.2), MachineNs: 300e9}, {Result: res(good, slow, analyze.Slower, 48.6, 23.3, 79.1), MachineNs: 240e9}}}
	o := &bisect.Outcome{Kind: bisect.Found, Culprits: []bisect.Culprit{{Commit: slow.Hash, Reference: good.Hash, Change: st.Probes[1].Result},
		{Commit: bad.Hash, Reference: slow.Hash, Change: res(slow, bad, analyze.Slower, 45.0, 20.0, 70.0), Range: []string{broken.Hash, bad.Hash}}},
		Skipped: []*bisect.Skip{{Commit: broken.Hash, Reason: "its build failed"}}}
	var b bytes.Buffer
	BisectResult(&b, st, o, subject, true, 5)
	out := b.String()
	for _, want := range []string{
		"### warmstat bisect aaaaaaaaaaaa..dddddddddddd (3 commits), gate Product/mean",
		`- **culprit 1 of 2: bbbbbbbbbbbb "Throttle" (Ann Tester <ann@example.org>, 2026-11-30T10:00:00Z): +48.6 % [+23.3, +79.1] slower against aaaaaaaaaaaa**`,
		"against bbbbbbbbbbbb (or cccccccccccc, which could not be measured)**",
		"skipped cccccccccccc: its build failed",
		"| dddddddddddd | aaaaaaaaaaaa |         3 | +120.5 % [+80.1, +170.2] slower |   59s |        5m0s |",
		"intervals: each series' last look, at 95 % or more",
		"machine time: 9m0s in 2 series, the builds they waited for included (2 commits built, 2m0s when they were built)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the result lacks %q:\n%s", want, out)
		}
	}
	none := &bisect.Outcome{Kind: bisect.NoRegression, Confirm: res(good, bad, analyze.Unresolved, 1.2, -3.0, 5.5), Detail: "good against bad: unresolved"}
	if got := BisectSummary(none, subject); got != "no regression confirmed: good against bad: unresolved (+1.2 % [-3.0, +5.5] unresolved): nothing bisected" {
		t.Errorf("no regression: %q", got)
	}
	if d, ok := st.Remaining(3); !ok || d != 270*time.Second {
		t.Errorf("ETA: %s %v, want 4m30s (one more series at the mean of two)", d, ok)
	}
}
