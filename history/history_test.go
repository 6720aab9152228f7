package history

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/internal/synthrun"
	"github.com/warmstat/warmstat/runfmt"
)

// synthLine writes n builds' runs (one each) of a line whose Product mean steps by
// step at build stepAt, on a machine that swings, and returns their directories.
func synthLine(t *testing.T, dir string, n, stepAt int, step float64, mutate func(*runfmt.Manifest)) []string {
	t.Helper()
	rng := rand.New(rand.NewPCG(9, 10))
	var out []string
	for i := range n {
		effect := 1.0
		if i >= stepAt {
			effect = step
		}
		d := filepath.Join(dir, fmt.Sprintf("b%02d", i))
		if _, err := synthrun.Write(d, synthrun.Spec{Label: fmt.Sprintf("c%02d", i), Seed: uint64(i + 1), Effect: effect, Tau: 0.004,
			Machine: 0.04 * rng.NormFloat64(), Theta: 2.5, Cost: true, Mutate: mutate}); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

func addAll(t *testing.T, st *Store, dirs []string, firstOrder int) []Point {
	t.Helper()
	var ps []Point
	for i, d := range dirs {
		run, err := runfmt.Open(d)
		if err != nil {
			t.Fatal(err)
		}
		o := firstOrder + i
		p, err := PointOf(context.Background(), run, Placement{Order: &o, Ref: fmt.Sprintf("jar:/builds/c%02d.jar", i)})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	added, err := st.Add(ps, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return added
}

// A history made of runs: each run a file of its own under its line, read back whole;
// the step the line's Product mean took is its one change point, found with the
// machine's swing set aside; a run of other conditions starts another line; a run
// given twice or already there is refused before anything is written; a damaged point
// is refused naming its file and field; a directory that is not a history is never
// written into.
func TestHistoryStore(t *testing.T) {
	tmp := t.TempDir()
	hist := filepath.Join(tmp, "hist")
	st, err := Open(hist, true)
	if err != nil {
		t.Fatal(err)
	}
	dirs := synthLine(t, filepath.Join(tmp, "runs"), 24, 14, 0.86, nil)
	added := addAll(t, st, dirs[:12], 100)
	addAll(t, st, dirs[12:], 112) // a second machine's share, added apart
	points, err := st.Points()
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != 24 || len(added) != 12 || !strings.HasPrefix(added[0].File(), filepath.Join(hist, "points", added[0].Line)) {
		t.Fatalf("%d points, %d added, first at %s", len(points), len(added), added[0].File())
	}
	lines := Lines(points)
	if len(lines) != 1 || len(lines[0].Builds) != 24 || lines[0].Builds[0].Build.Order != 100 {
		t.Fatalf("lines %+v", lines)
	}
	a := Analyze(lines[0], analyze.ChangePointOptions{})
	mean := a.Series[0]
	if mean.Metric.Figure != FigureProductMean || mean.Seg == nil || len(mean.Seg.ChangePoints) != 1 || mean.Seg.ChangePoints[0].Index != 14 {
		t.Fatalf("Product mean: %+v", mean.Seg)
	}
	if c := mean.Seg.ChangePoints[0]; c.CILowPct > -14 || c.CIHighPct < -14 {
		t.Errorf("the change point's interval [%.1f, %.1f] misses the -14 %% step", c.CILowPct, c.CIHighPct)
	}
	if b, af := mean.Span(mean.Seg.ChangePoints[0]); lines[0].Builds[b].Build.Label != "c13" || lines[0].Builds[af].Build.Label != "c14" {
		t.Errorf("the builds around the change point: %s and %s", lines[0].Builds[b].Build.Label, lines[0].Builds[af].Build.Label)
	}
	if alloc := a.Series[3]; alloc.Metric.Figure != FigureProductAlloc || alloc.Seg == nil {
		t.Errorf("allocation: %+v", alloc)
	}

	// other conditions: another line
	other := synthLine(t, filepath.Join(tmp, "other"), 1, 99, 1, func(m *runfmt.Manifest) {
		h := int64(8 << 30)
		m.Server.MaxHeapBytes = &h
		later := m.StartedAt.Add(time.Hour) // another run than the line's first (its id and start are its identity)
		m.StartedAt = &later
	})
	addAll(t, st, other, 200)
	points, _ = st.Points()
	if ls := Lines(points); len(ls) != 2 || len(ls[1].Builds) != 1 || ls[1].Conditions["server-heap"] == ls[0].Conditions["server-heap"] {
		t.Fatalf("a run with another heap: %d lines", len(ls))
	}

	// refusals, nothing written
	run, _ := runfmt.Open(dirs[3])
	o := 103
	p, _ := PointOf(context.Background(), run, Placement{Order: &o})
	if _, err := st.Add([]Point{p}, time.Now()); err == nil || !strings.Contains(err.Error(), "in the history already") {
		t.Errorf("a run added again: %v", err)
	}
	copyDir := filepath.Join(tmp, "copy")
	os.MkdirAll(copyDir, 0o755)
	for _, f := range []string{runfmt.ManifestFile, runfmt.EntitiesFile} {
		b, _ := os.ReadFile(filepath.Join(dirs[3], f))
		os.WriteFile(filepath.Join(copyDir, f), b, 0o644)
	}
	crun, _ := runfmt.Open(copyDir)
	cp, _ := PointOf(context.Background(), crun, Placement{Order: &o})
	if _, err := st.Add([]Point{cp}, time.Now()); err == nil || !strings.Contains(err.Error(), "in the history already") {
		t.Errorf("a copy of a run in the history: %v", err)
	}
	fresh := synthLine(t, filepath.Join(tmp, "fresh"), 1, 99, 1, func(m *runfmt.Manifest) { m.RunID = "fresh" })
	frun, _ := runfmt.Open(fresh[0])
	fp, _ := PointOf(context.Background(), frun, Placement{Order: &o})
	if _, err := st.Add([]Point{fp, fp}, time.Now()); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("a run given twice: %v", err)
	}
	if ps, _ := st.Points(); len(ps) != 25 {
		t.Errorf("%d points after refusals, want 25", len(ps))
	}

	// a damaged point: named with its file and field
	f := added[5].File()
	b, _ := os.ReadFile(f)
	os.WriteFile(f, []byte(strings.Replace(string(b), `"product_mean_us": `, `"product_mean_us": -`, 1)), 0o644)
	if _, err := st.Points(); err == nil || !strings.Contains(err.Error(), f) || !strings.Contains(err.Error(), "figures.product_mean_us") {
		t.Errorf("a damaged point: %v", err)
	}
	os.WriteFile(f, []byte(strings.Replace(string(b), `"server-heap": "`, `"server-heap": "x`, 1)), 0o644)
	if _, err := st.Points(); err == nil || !strings.Contains(err.Error(), "conditions edited") {
		t.Errorf("a point whose conditions were edited: %v", err)
	}
	os.WriteFile(f, b, 0o644)

	// never written into what is not a history
	foreign := filepath.Join(tmp, "foreign")
	os.MkdirAll(foreign, 0o755)
	os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644)
	if _, err := Open(foreign, true); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("a directory with files of its own: %v", err)
	}
	if _, err := Open(filepath.Join(tmp, "absent"), false); err == nil || !strings.Contains(err.Error(), "not a history") {
		t.Errorf("reading an absent history: %v", err)
	}
	os.WriteFile(filepath.Join(hist, storeFile), []byte(`{"schema": "other/v9", "created": "2026-01-01T00:00:00Z"}`), 0o644)
	if _, err := Open(hist, false); err == nil || !strings.Contains(err.Error(), "field schema") {
		t.Errorf("another schema: %v", err)
	}
}

// A run without a commit or an order cannot be placed; an incomplete run is refused.
func TestPointOfRefuses(t *testing.T) {
	dirs := synthLine(t, t.TempDir(), 1, 9, 1, nil)
	run, _ := runfmt.Open(dirs[0])
	if _, err := PointOf(context.Background(), run, Placement{}); err == nil || !strings.Contains(err.Error(), "give the checkout") {
		t.Errorf("no placement: %v", err)
	}
	failed := synthLine(t, t.TempDir(), 1, 9, 1, func(m *runfmt.Manifest) {
		m.GoLive = runfmt.GoLive{Status: runfmt.GoLiveSkipped}
		m.Outcome.Status = runfmt.OutcomeAborted
	})
	frun, err := runfmt.Open(failed[0])
	if err != nil {
		t.Fatal(err)
	}
	o := 1
	if _, err := PointOf(context.Background(), frun, Placement{Order: &o}); err == nil || !strings.Contains(err.Error(), "complete, verified runs") {
		t.Errorf("an aborted run: %v", err)
	}
	_ = math.Pi
}

// Builds placed by a checkout: two commits of parallel branches share a count (both
// are added, and the checkout's topology orders them), a commit given for a run that
// records none places it, and one that contradicts a recorded commit is refused.
func TestPlacedByACheckout(t *testing.T) {
	root := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", root, "-c", "user.name=Ann", "-c", "user.email=ann@example.org"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	commit := func(msg string) string {
		os.WriteFile(filepath.Join(root, "f"), []byte(msg), 0o644)
		git("add", ".")
		git("commit", "-q", "-m", msg)
		return git("rev-parse", "HEAD")
	}
	commit("a")
	git("checkout", "-q", "-b", "side")
	side := commit("b on a branch")
	git("checkout", "-q", "main")
	main := commit("c on main")
	dirs := synthLine(t, t.TempDir(), 2, 9, 1, nil)
	var points []Point
	for i, rev := range []string{side, main} {
		run, _ := runfmt.Open(dirs[i])
		p, err := PointOf(context.Background(), run, Placement{Repo: root, Rev: rev})
		if err != nil {
			t.Fatal(err)
		}
		points = append(points, p)
	}
	if points[0].Build.Order != points[1].Build.Order || points[0].Build.Placed != "checkout" {
		t.Fatalf("two branches' commits: orders %d and %d, placed %q", points[0].Build.Order, points[1].Build.Order, points[0].Build.Placed)
	}
	st, err := Open(filepath.Join(t.TempDir(), "h"), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Add(points, time.Now()); err != nil {
		t.Fatalf("two commits sharing a count: %v", err)
	}
	// a run that records a commit: another given for it is refused
	rec := synthLine(t, t.TempDir(), 1, 9, 1, func(m *runfmt.Manifest) { m.Build.Commit = main })
	run, _ := runfmt.Open(rec[0])
	if _, err := PointOf(context.Background(), run, Placement{Repo: root, Rev: side}); err == nil || !strings.Contains(err.Error(), "is another") {
		t.Errorf("a commit given against the recorded one: %v", err)
	}
	if p, err := PointOf(context.Background(), run, Placement{Repo: root, Rev: main[:8]}); err != nil || p.Build.Commit != main {
		t.Errorf("the recorded commit given again, short: %+v %v", p.Build, err)
	}
}

// What --confirm and --bisect found is kept (the line's first record makes its
// directory) and read back whole.
func TestConfirmationsAndBisectionsAreKept(t *testing.T) {
	st, err := Open(filepath.Join(t.TempDir(), "h"), true)
	if err != nil {
		t.Fatal(err)
	}
	d := -10.7
	before, after := Build{Commit: "775cde35495390e47c6302593ec02db4a94b1849", Label: "a"}, Build{Commit: "50ed1015f87e4633724f74ed58049e689d32bf3b", Label: "b"}
	if err := st.SaveConfirmation(Confirmation{Line: "l1", Metric: FigureProductMean, Before: before, After: after, Gate: "Product/mean_adj",
		Verdict: analyze.Faster, DeltaPct: &d, Confirmed: true}); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveBisection(Bisection{Line: "l1", Metric: FigureProductMean, Before: before, After: after, Outcome: "culprit",
		Culprits: []Culprit{{Commit: after.Commit, DeltaPct: &d}}}); err != nil {
		t.Fatal(err)
	}
	cs, err := st.Confirmations("l1")
	if err != nil || len(cs) != 1 || !cs[0].Confirmed || *cs[0].DeltaPct != d {
		t.Fatalf("confirmations: %+v %v", cs, err)
	}
	bs, err := st.Bisections("l1")
	if err != nil || len(bs) != 1 || bs[0].Culprits[0].Commit != after.Commit {
		t.Fatalf("bisections: %+v %v", bs, err)
	}
}
