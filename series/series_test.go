package series

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/internal/synthrun"
	"github.com/warmstat/warmstat/runfmt"
)

// The orchestration, with synthetic runs in place of loads (what is tested here is the
// order, the looks, the state file and recovery; the loads themselves are tested on
// real servers in cmd/warmstat's TestABSeries): B is effect× slower, run-to-run noise
// 1 %; disturb multiplies one run (by its sequence number) by 1.9.
func synthetic(effect float64, disturb int, fail func(seq int) error) func(ctx context.Context, side, dir, id, work string) error {
	seq := 0
	return func(ctx context.Context, side, dir, id, work string) error {
		seq++
		if fail != nil {
			if err := fail(seq); err != nil {
				return err
			}
		}
		e := 1.0
		if side == "B" {
			e = effect
		}
		if seq == disturb {
			e *= 1.9
		}
		_, err := synthrun.Write(dir, synthrun.Spec{Label: side, Seed: uint64(seq), Effect: e, Tau: 0.01})
		return err
	}
}

func config(dir string, run func(ctx context.Context, side, dir, id, work string) error) Config {
	return Config{Dir: dir, Run: run, Checksum: func() (string, error) { return "pristine-sum", nil },
		Plan:    Plan{A: Build{Spec: "a", Label: "A"}, B: Build{Spec: "b", Label: "B"}, Pristine: "p", Catalog: "c", MinRuns: 2, MaxRuns: 10, ThresholdPct: 2},
		Compare: analyze.CompareOptions{}}
}

func sides(s *State) string {
	var b strings.Builder
	for _, e := range s.Entries {
		b.WriteString(e.Side)
	}
	return b.String()
}

// A 10 % slowdown stops the series early with "slower" on every gate; runs are in
// ABBA order, every look is recorded, and the state file reads back.
func TestSeriesStopsWhenResolved(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	s, err := Execute(context.Background(), config(dir, synthetic(1.10, 0, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if s.Outcome == nil || s.Outcome.Reason != "resolved" || s.Outcome.Runs > 6 {
		t.Fatalf("outcome %+v after %s", s.Outcome, sides(s))
	}
	for g, v := range s.Outcome.Verdicts {
		if v != string(analyze.Slower) {
			t.Errorf("gate %s: %s", g, v)
		}
	}
	if got := sides(s); !strings.HasPrefix("ABBAABBAABBAABBAABBA", got) {
		t.Fatalf("order %s is not ABBA", got)
	}
	if len(s.Looks) == 0 || s.Looks[0].Runs != 2 {
		t.Fatalf("looks %+v", s.Looks)
	}
	back, err := load(dir)
	if err != nil || back == nil || len(back.Entries) != len(s.Entries) || back.Outcome.Reason != "resolved" {
		t.Fatalf("state file: %v %+v", err, back)
	}
	// identical builds: no false verdict, and at 1 % noise the series ends equivalent
	// or at its maximum
	dir2 := filepath.Join(t.TempDir(), "aa")
	s, err = Execute(context.Background(), config(dir2, synthetic(1.0, 0, nil)))
	if err != nil {
		t.Fatal(err)
	}
	for g, v := range s.Outcome.Verdicts {
		if v == string(analyze.Slower) || v == string(analyze.Faster) {
			t.Errorf("A/A gate %s: %s", g, v)
		}
	}
	t.Logf("A/A: %s after %d runs per side", s.Outcome.Reason, s.Outcome.Runs)
}

// A series stopped in the middle (the run in flight never finished) is taken up by the
// same command: the unfinished run is excluded with its reason and run again.
func TestSeriesResumes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	ctx, cancel := context.WithCancel(context.Background())
	stopAt3 := synthetic(1.10, 0, func(seq int) error {
		if seq == 3 {
			cancel() // warmstat stopped while the third run was loading
			return context.Canceled
		}
		return nil
	})
	c := config(dir, stopAt3)
	c.Plan.MaxRuns = 4
	if _, err := Execute(ctx, c); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted series: %v", err)
	}
	st, _ := load(dir)
	last := &st.Entries[len(st.Entries)-1]
	// stopped by the user: recorded as such, not as the run's failure
	if last.Status != Interrupted || !strings.Contains(last.Reason, "run again when the series resumes") {
		t.Fatalf("the run Ctrl-C stopped: %+v", *last)
	}
	// as after a killed process: mark the stopped run as still running
	last.Status, last.Reason, last.Excluded = Running, "", ""
	st.Owed = nil
	os.MkdirAll(filepath.Join(dir, last.Dir), 0o755) // what the killed load left
	if err := st.save(dir); err != nil {
		t.Fatal(err)
	}
	c.Run = synthetic(1.10, 0, nil)
	s, err := Execute(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if s.Outcome == nil || s.Outcome.Reason == "" {
		t.Fatalf("not finished: %+v", s.Outcome)
	}
	e := s.Entries[2]
	if e.Status != Interrupted || !strings.Contains(e.Reason, "did not finish") || e.Excluded == "" {
		t.Fatalf("the unfinished run: %+v", e)
	}
	if _, err := os.Stat(filepath.Join(dir, e.Excluded)); err != nil {
		t.Fatalf("excluded run not kept: %v", err)
	}
	if s.Entries[3].Side != e.Side || !s.Entries[3].Rerun {
		t.Fatalf("the unfinished run was not run again next: %+v", s.Entries[3])
	}
	// the re-run takes the unfinished run's place and number; the series counts it once
	if s.Entries[3].Dir != e.Dir || s.Done(e.Side, Measured) != 4 || s.Done("", "") != 8 {
		t.Fatalf("the re-run is %s (the unfinished run was %s), %d runs of its side done, %d in all", s.Entries[3].Dir, e.Dir,
			s.Done(e.Side, Measured), s.Done("", ""))
	}
	if len(s.Checksums) != 4 {
		t.Fatalf("checksums %+v", s.Checksums)
	}
	// another plan in the same directory is refused
	c.Plan.MaxRuns = 6
	if _, err := Execute(context.Background(), c); !errors.Is(err, ErrPlanDiffers) || !strings.Contains(err.Error(), "max_runs: 4 then, 6 now") {
		t.Fatalf("changed plan: %v", err)
	}
	// a changed condition is named, not left to be found in two long lines
	c.Plan.MaxRuns, c.Plan.Conditions = 4, "storage.compress=true batch=1000 JDK_JAVA_OPTIONS=-Xss2m"
	if _, err := Execute(context.Background(), c); !errors.Is(err, ErrPlanDiffers) || !strings.Contains(err.Error(), "JDK_JAVA_OPTIONS=-Xss2m now)") ||
		strings.Count(err.Error(), "other arguments") != 1 {
		t.Fatalf("changed conditions: %v", err)
	}
}

// A run that fails is run again; the same run failing twice stops the series.
func TestSeriesFailures(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	s, err := Execute(context.Background(), config(dir, synthetic(1.10, 0, func(seq int) error {
		if seq == 2 {
			return errors.New("injected: the writer died")
		}
		return nil
	})))
	if err != nil || s.Entries[1].Status != Failed || s.Entries[2].Side != s.Entries[1].Side || !s.Entries[2].Rerun {
		t.Fatalf("%v %+v", err, s.Entries)
	}
	dir2 := filepath.Join(t.TempDir(), "s2")
	_, err = Execute(context.Background(), config(dir2, synthetic(1.10, 0, func(seq int) error {
		if seq >= 2 {
			return errors.New("injected: the writer died")
		}
		return nil
	})))
	if !errors.Is(err, ErrRunFailedTwice) {
		t.Fatalf("twice: %v", err)
	}
}

// A disturbed run is flagged with its reason; with RerunOutliers it is replaced (moved
// to replaced/, recorded) and run again.
func TestSeriesOutliers(t *testing.T) {
	for _, rerun := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "s")
		c := config(dir, synthetic(1.0, 5, nil)) // A/A: the series runs long; run 5 (A) is disturbed
		c.Plan.MaxRuns, c.Plan.RerunOutliers = 5, rerun
		s, err := Execute(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		e := s.Entries[4]
		switch {
		case !rerun && (e.Health == nil || !strings.Contains(e.Health.Outlier, "from the median")):
			t.Fatalf("disturbed run not flagged: %+v", e.Health)
		case rerun && (e.Status != Replaced || !strings.HasPrefix(e.Reason, "outlier: ") || !strings.HasPrefix(e.Excluded, "replaced/")):
			t.Fatalf("disturbed run not replaced: %+v", e)
		}
		for _, o := range s.Entries {
			if o.Seq != 5 && o.Health != nil && o.Health.Outlier != "" {
				t.Errorf("run %d flagged too: %s", o.Seq, o.Health.Outlier)
			}
		}
	}
}

// A second invocation on a series that is running is refused before it runs anything;
// once the first has stopped, the same command continues it.
func TestSeriesInUseIsRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	c := config(dir, nil)
	c.Plan.MaxRuns = 3
	var second error
	var secondRuns int
	first := synthetic(1.10, 0, func(seq int) error {
		if seq == 2 { // while the first invocation is loading its second run
			c2 := config(dir, func(context.Context, string, string, string, string) error { secondRuns++; return nil })
			c2.Plan.MaxRuns = 3
			_, second = Execute(context.Background(), c2)
		}
		return nil
	})
	c.Run = first
	if _, err := Execute(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(second, ErrInUse) || !strings.Contains(second.Error(), "in use by another warmstat process") || secondRuns != 0 {
		t.Fatalf("a second invocation on a running series: %v (%d runs)", second, secondRuns)
	}
	c.Run = synthetic(1.10, 0, nil)
	if _, err := Execute(context.Background(), c); err != nil {
		t.Fatalf("continued after the first stopped: %v", err)
	}
}

// A watched metric is judged and recorded at every look but not waited for: B 10 %
// slower on every upsert, its goLive as noisy as a coin (30 % per run) and no slower;
// the series stops as soon as the gate is slower, its watched goLive unresolved.
func TestSeriesDoesNotWaitForWatched(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	seq := 0
	rng := rand.New(rand.NewPCG(3, 4))
	run := func(ctx context.Context, side, dir, id, work string) error {
		seq++
		e := map[string]float64{"A": 1, "B": 1.10}[side]
		goLive := int64(2.1e9 * math.Exp(0.3*rng.NormFloat64()))
		_, err := synthrun.Write(dir, synthrun.Spec{Label: side, Seed: uint64(seq), Effect: e, Tau: 0.01,
			Mutate: func(m *runfmt.Manifest) { m.GoLive.Ns = &goLive }})
		return err
	}
	c := config(dir, run)
	c.Plan.Gates, c.Plan.Watch = []string{"Product/mean"}, []string{"*/golive"}
	s, err := Execute(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if s.Outcome == nil || s.Outcome.Reason != "resolved" || s.Outcome.Verdicts["Product/mean"] != string(analyze.Slower) || s.Outcome.Runs > 4 {
		t.Fatalf("outcome %+v after %s", s.Outcome, sides(s))
	}
	var watched *analyze.GateLook
	for i, g := range s.Outcome.Gates {
		if g.Gate == "*/golive" {
			watched = &s.Outcome.Gates[i]
		}
	}
	if watched == nil || !watched.Watched || watched.Resolved() || watched.DeltaPct == nil {
		t.Fatalf("the watched goLive at the end: %+v", watched)
	}
}

// A plan read back from its state file (an empty list omitted) is the plan the same
// flags give (an empty list): the same command continues its series.
func TestPlanEmptyListsAreNone(t *testing.T) {
	if d := (Plan{Gates: []string{"Product/mean"}}).differs(Plan{Gates: []string{"Product/mean"}, Watch: []string{}}); d != "" {
		t.Fatalf("an empty watch list differs from none: %s", d)
	}
	if d := (Plan{Watch: []string{"Product/alloc"}}).differs(Plan{}); !strings.HasPrefix(d, "watch: ") {
		t.Fatalf("a watched metric dropped: %q", d)
	}
}
