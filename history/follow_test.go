package history

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/bisect"
	"github.com/warmstat/warmstat/internal/synthrun"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/series"
)

// A record is of a change point when it names the metric and the same builds on either
// side, a build counted as the line counts it: its commit (whatever label its runs
// carried), or without a commit its label and order.
func TestFollowUpOf(t *testing.T) {
	b := Build{Commit: "775cde35495390e47c6302593ec02db4a94b1849", Label: "checkout", Order: 10}
	a := Build{Commit: "50ed1015f87e4633724f74ed58049e689d32bf3b", Label: "checkout", Order: 11}
	relabelled := a
	relabelled.Label = "jar"
	other := Build{Commit: "0b1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d", Label: "checkout", Order: 11}
	v1, v2 := Build{Label: "2026.2.2", Order: 1}, Build{Label: "2026.2.3", Order: 2}
	cs := []Confirmation{
		{Metric: FigureProductMean, Before: b, After: relabelled, Series: "s1"},
		{Metric: FigureGoLive, Before: b, After: other, Series: "s2"},
		{Metric: FigureProductMean, Before: v1, After: v2, Series: "s3"},
	}
	bs := []Bisection{{Metric: FigureProductMean, Before: b, After: a, Dir: "b1"}}
	for _, c := range []struct {
		name          string
		metric        string
		before, after Build
		series, dir   string // "" for none
	}{
		{"the same commits, the after build's runs labelled otherwise", FigureProductMean, b, a, "s1", "b1"},
		{"another metric", FigurePublishing, b, a, "", ""},
		{"another build after", FigureProductMean, b, other, "", ""},
		{"the sides swapped", FigureProductMean, a, b, "", ""},
		{"goLive's record", FigureGoLive, b, other, "s2", ""},
		{"builds without a commit: label and order", FigureProductMean, v1, v2, "s3", ""},
		{"without a commit, another order", FigureProductMean, v1, Build{Label: "2026.2.3", Order: 5}, "", ""},
	} {
		f := FollowUpOf(cs, bs, c.metric, c.before, c.after)
		gotS, gotD := "", ""
		if f.Confirmation != nil {
			gotS = f.Confirmation.Series
		}
		if f.Bisection != nil {
			gotD = f.Bisection.Dir
		}
		if gotS != c.series || gotD != c.dir {
			t.Errorf("%s: confirmation %q, bisection %q; want %q, %q", c.name, gotS, gotD, c.series, c.dir)
		}
	}
	an := Analysis{Confirmations: cs, Bisections: bs}
	if f := an.FollowUpOf(FigureProductMean, b, a); f.Confirmation == nil || f.Bisection == nil {
		t.Errorf("an analysis' own records: %+v", f)
	}
}

func pct(v float64) *float64 { return &v }

// A series confirms a change point when its verdict on the gate is the history's
// change in its direction; no verdict, another gate, or no outcome confirms nothing.
func TestTheVerdictRule(t *testing.T) {
	for _, c := range []struct {
		change float64
		v      analyze.Verdict
		want   bool
	}{
		{-14, analyze.Faster, true}, {12, analyze.Slower, true},
		{-14, analyze.Slower, false}, {12, analyze.Faster, false},
		{-14, analyze.Unresolved, false}, {-14, analyze.Equivalent, false}, {-14, analyze.Insufficient, false}, {0, analyze.Faster, false},
	} {
		if got := Confirms(c.change, c.v); got != c.want {
			t.Errorf("a change of %v %% and a series %s: confirms %t, want %t", c.change, c.v, got, c.want)
		}
	}
	st := &series.State{Outcome: &series.Outcome{Reason: "resolved", Gates: []analyze.GateLook{
		{Gate: "*/ingest_adj", Verdict: analyze.Slower, DeltaPct: pct(3)},
		{Gate: "Product/mean_adj", Verdict: analyze.Faster, DeltaPct: pct(-13.9), LowPct: pct(-16), HighPct: pct(-11.5)},
	}}}
	c := Confirmation{Gate: "Product/mean_adj", Series: "s"}
	if err := c.Judge(st, -14.2); err != nil || !c.Confirmed || c.Verdict != analyze.Faster || *c.DeltaPct != -13.9 || *c.CIHighPct != -11.5 {
		t.Errorf("a series faster on the gate, the history's step downward: %+v %v", c, err)
	}
	if err := c.Judge(st, 9); err != nil || c.Confirmed || c.Verdict != analyze.Faster {
		t.Errorf("a series faster on the gate, the history's step upward: %+v %v", c, err)
	}
	other := Confirmation{Gate: "Brand/mean_adj", Series: "s"}
	if err := other.Judge(st, -14); err != nil || other.Confirmed || other.Verdict != "" || other.DeltaPct != nil {
		t.Errorf("a series that did not judge the gate: %+v %v", other, err)
	}
	if err := c.Judge(&series.State{}, -14); err != nil || c.Confirmed || c.Verdict != "" {
		t.Errorf("a series that has not ended: %+v %v", c, err)
	}
	if err := c.Judge(nil, -14); err == nil || !strings.Contains(err.Error(), "no series there") {
		t.Errorf("no series at all: %v", err)
	}
}

// What a bisect named: its outcome in words, each culprit with its commit's subject and
// the change its probe measured; nothing while it runs.
func TestBisectOutcome(t *testing.T) {
	st := &bisect.State{
		Commits: []bisect.Commit{{Hash: "aaa", Subject: "refactor the index"}, {Hash: "bbb", Subject: "faster Product upserts"}},
		Outcome: &bisect.Record{Kind: "found", Detail: "one commit", Culprits: []bisect.Culprit{
			{Commit: "bbb", Reference: "aaa", Change: bisect.Result{Gate: analyze.GateLook{DeltaPct: pct(-12.5)}}},
			{Commit: "ccc", Reference: "bbb"},
		}},
	}
	words, culprits := BisectOutcome(st)
	if words != "found: one commit" || len(culprits) != 2 {
		t.Fatalf("%q %+v", words, culprits)
	}
	if c := culprits[0]; c.Commit != "bbb" || c.Title != "faster Product upserts" || c.DeltaPct == nil || *c.DeltaPct != -12.5 {
		t.Errorf("the first culprit: %+v", c)
	}
	if c := culprits[1]; c.Commit != "ccc" || c.Title != "" || c.DeltaPct != nil {
		t.Errorf("a culprit outside the commits listed, without a change: %+v", c)
	}
	st.Outcome = &bisect.Record{Kind: "end-unmeasurable"}
	if words, culprits := BisectOutcome(st); words != "end-unmeasurable" || culprits != nil {
		t.Errorf("no culprit: %q %+v", words, culprits)
	}
	st.Outcome = nil
	if words, culprits := BisectOutcome(st); words != "" || culprits != nil {
		t.Errorf("a bisect still running: %q %+v", words, culprits)
	}
}

// A line's per-upsert figures are gated on its dominant collection, as its points
// recorded it: Product where the catalog has it, else its largest collection; a point
// added before the record (no collection field) still reads, and its line is Product's.
func TestGateOfALine(t *testing.T) {
	tmp := t.TempDir()
	noProduct := filepath.Join(tmp, "articles")
	if _, err := synthrun.Write(noProduct, synthrun.Spec{Label: "c01", Seed: 3, Tau: 0.004, Theta: 2.5, Machine: 0.01, Cost: true,
		Collections: []synthrun.Collection{{Name: "Tag", N: 60, MeanNs: 120e3}, {Name: "Article", N: 300, MeanNs: 5e6}, {Name: "Author", N: 40, MeanNs: 1e6}}}); err != nil {
		t.Fatal(err)
	}
	withProduct := synthLine(t, filepath.Join(tmp, "products"), 1, 9, 1, nil)[0]
	st, err := Open(filepath.Join(tmp, "h"), true)
	if err != nil {
		t.Fatal(err)
	}
	added := addAll(t, st, []string{noProduct, withProduct}, 1)
	if added[0].Collection != "Article" || added[1].Collection != "Product" {
		t.Fatalf("the points' collections: %q, %q", added[0].Collection, added[1].Collection)
	}
	art := Line{Points: added[:1]}
	for fig, want := range map[string]string{FigureProductMean: "Article/mean_adj", FigureProductAlloc: "Article/alloc",
		FigurePublishing: "*/ingest_adj", FigureGoLive: "*/golive"} {
		if got := GateOf(fig, art.Dominant()); got != want {
			t.Errorf("%s on a catalog without Product: %s, want %s", fig, got, want)
		}
	}
	if got := GateOf(FigureProductMean, Line{Points: added[1:]}.Dominant()); got != "Product/mean_adj" {
		t.Errorf("a catalog with Product: %s", got)
	}
	// a point of an older warmstat: no collection recorded
	f := added[0].File()
	b, _ := os.ReadFile(f)
	old := regexp.MustCompile(`(?m)^\s*"collection": "Article",\n`).ReplaceAll(b, nil)
	if len(old) == len(b) {
		t.Fatalf("no collection field in %s:\n%s", f, b)
	}
	os.WriteFile(f, old, 0o644)
	points, err := st.Points()
	if err != nil {
		t.Fatalf("an old point: %v", err)
	}
	for _, l := range Lines(points) {
		if l.Points[0].Build.Label == "c01" && (l.Points[0].Collection != "" || GateOf(FigureProductMean, l.Dominant()) != "Product/mean_adj") {
			t.Errorf("a line of old points: collection %q, gate %s", l.Points[0].Collection, GateOf(FigureProductMean, l.Dominant()))
		}
	}
}

// InHistory keeps a follow-up's directory relative to the history when it lies under
// it, so that a history moved or published names no path of this machine.
func TestInHistory(t *testing.T) {
	if got := InHistory("/h", "/h/followed/l/x/confirm"); got != "followed/l/x/confirm" {
		t.Errorf("under the history: %q", got)
	}
	if got := InHistory("/h", "/elsewhere/s"); got != "/elsewhere/s" {
		t.Errorf("elsewhere: %q", got)
	}
}

// gitCommits makes a checkout of n commits and returns their hashes, oldest first.
func gitCommits(t *testing.T, root string, n int) []string {
	t.Helper()
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", root, "-c", "user.name=Ann", "-c", "user.email=ann@example.org"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	var out []string
	for i := range n {
		os.WriteFile(filepath.Join(root, "f"), []byte(fmt.Sprint(i)), 0o644)
		git("add", ".")
		git("commit", "-q", "-m", fmt.Sprintf("commit %d", i))
		out = append(out, git("rev-parse", "HEAD"))
	}
	return out
}

// Following up a line's step: the series is asked for between the builds on either
// side of it, on the line's gate, into HISTORY/followed/; what it found is recorded
// (relative to the history) and a second pass asks for nothing more; the bisect starts
// at the build before and ends at the build after. A build without its server's name
// cannot be confirmed, and the error says so.
func TestFollow(t *testing.T) {
	tmp := t.TempDir()
	repo := filepath.Join(tmp, "repo")
	os.MkdirAll(repo, 0o755)
	commits := gitCommits(t, repo, 48)
	dirs := synthLine(t, filepath.Join(tmp, "runs"), 24, 14, 0.86, nil)
	st, err := Open(filepath.Join(tmp, "h"), true)
	if err != nil {
		t.Fatal(err)
	}
	var points []Point
	for i, d := range dirs {
		run, _ := runfmt.Open(d)
		o := 2*i + 1 // a commit between every two builds
		p, err := PointOf(context.Background(), run, Placement{Order: &o, Rev: commits[2*i], Ref: fmt.Sprintf("jar:/b/%d.jar", i)})
		if err != nil {
			t.Fatal(err)
		}
		points = append(points, p)
	}
	if _, err := st.Add(points, time.Now()); err != nil {
		t.Fatal(err)
	}
	analyse := func() []Analysis {
		ps, err := st.Points()
		if err != nil {
			t.Fatal(err)
		}
		a := Analyze(Lines(ps)[0], analyze.ChangePointOptions{})
		if a.Confirmations, err = st.Confirmations(a.Line.Key); err != nil {
			t.Fatal(err)
		}
		if a.Bisections, err = st.Bisections(a.Line.Key); err != nil {
			t.Fatal(err)
		}
		return []Analysis{a}
	}
	var confirms []ConfirmRequest
	var bisects []BisectRequest
	r := Runner{
		Confirm: func(_ context.Context, req ConfirmRequest) (*series.State, error) {
			confirms = append(confirms, req)
			return &series.State{Outcome: &series.Outcome{Gates: []analyze.GateLook{{Gate: req.Gate, Verdict: analyze.Faster, DeltaPct: pct(-13)}}}}, nil
		},
		Bisect: func(_ context.Context, req BisectRequest) (*bisect.State, error) {
			bisects = append(bisects, req)
			return &bisect.State{Commits: []bisect.Commit{{Hash: commits[27], Subject: "commit 27"}},
				Outcome: &bisect.Record{Kind: "found", Culprits: []bisect.Culprit{{Commit: commits[27]}}}}, nil
		},
	}
	o := FollowOptions{Metric: FigureProductMean, Confirm: true, Bisect: true, Repo: repo}
	if err := Follow(context.Background(), st, analyse(), o, r); err != nil {
		t.Fatal(err)
	}
	if len(confirms) != 1 || len(bisects) != 1 {
		t.Fatalf("%d series and %d bisects asked for, want 1 each", len(confirms), len(bisects))
	}
	c, b := confirms[0], bisects[0]
	if c.Before.Commit != commits[26] || c.After.Commit != commits[28] || c.Gate != "Product/mean_adj" || c.After.Ref != "jar:/b/14.jar" ||
		!strings.HasPrefix(c.Dir, filepath.Join(st.Dir, "followed")) {
		t.Errorf("the series asked for: %+v", c)
	}
	if b.Good != commits[26] || b.Bad != commits[28] || !b.Faster || b.Gate != "Product/mean_adj" {
		t.Errorf("the bisect asked for: good %.8s bad %.8s faster %t gate %s", b.Good, b.Bad, b.Faster, b.Gate)
	}
	a := analyse()[0]
	done := a.FollowUpOf(FigureProductMean, c.Before, c.After)
	if done.Confirmation == nil || !done.Confirmation.Confirmed || filepath.IsAbs(done.Confirmation.Series) {
		t.Fatalf("the confirmation recorded: %+v", done.Confirmation)
	}
	if done.Bisection == nil || len(done.Bisection.Culprits) != 1 || done.Bisection.Culprits[0].Title != "commit 27" || filepath.IsAbs(done.Bisection.Dir) {
		t.Fatalf("the bisection recorded: %+v", done.Bisection)
	}
	if err := Follow(context.Background(), st, []Analysis{a}, o, r); err != nil || len(confirms) != 1 || len(bisects) != 1 {
		t.Errorf("a second pass over followed change points: %d series, %d bisects, %v", len(confirms), len(bisects), err)
	}
	// builds that name no server: nothing can be run, and the error says why
	a.Confirmations = nil
	for i := range a.Line.Builds {
		a.Line.Builds[i].Build.Ref = ""
	}
	if err := Follow(context.Background(), st, []Analysis{a}, FollowOptions{Metric: FigureProductMean, Confirm: true}, r); !errors.Is(err, ErrNoRef) || len(confirms) != 1 {
		t.Errorf("builds without a server's name: %v", err)
	}
}

// A change point between builds without a commit is not bisected: said, not run.
func TestFollowWithoutCommits(t *testing.T) {
	tmp := t.TempDir()
	st, err := Open(filepath.Join(tmp, "h"), true)
	if err != nil {
		t.Fatal(err)
	}
	addAll(t, st, synthLine(t, filepath.Join(tmp, "runs"), 24, 14, 0.86, nil), 1)
	ps, _ := st.Points()
	a := Analyze(Lines(ps)[0], analyze.ChangePointOptions{})
	var log strings.Builder
	called := false
	r := Runner{Bisect: func(context.Context, BisectRequest) (*bisect.State, error) { called = true; return nil, nil }}
	if err := Follow(context.Background(), st, []Analysis{a}, FollowOptions{Metric: FigureProductMean, Bisect: true, Log: &log}, r); err != nil {
		t.Fatal(err)
	}
	if called || !strings.Contains(log.String(), "between c13 and c14: a build without a commit cannot be bisected") {
		t.Errorf("bisect run %t; said %q", called, log.String())
	}
}
