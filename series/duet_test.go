package series

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/internal/synthrun"
	"github.com/warmstat/warmstat/runfmt"
)

// duets is a synthetic RunDuet: both runs of a duet share the machine's state of that
// moment (a random walk of walk per duet), each has 0.3 % noise of its own, a run in
// slot 2 is slot× slower, B effect× slower. fail, if set, may fail a run (by the
// duet's call number and side) before it is written.
func duets(effect, slot, walk float64, fail func(call int, side string) error) func(ctx context.Context, runs [2]DuetRun) [2]error {
	rng := rand.New(rand.NewPCG(7, 7))
	machine, call := 1.0, 0
	return func(ctx context.Context, runs [2]DuetRun) [2]error {
		call++
		machine *= math.Exp(walk * rng.NormFloat64())
		var errs [2]error
		for i, r := range runs {
			if fail != nil {
				if errs[i] = fail(call, r.Side); errs[i] != nil {
					continue
				}
			}
			e := machine
			if r.Side == "B" {
				e *= effect
			}
			if i == 1 {
				e *= slot
			}
			partner := runs[1-i].ID
			_, errs[i] = synthrun.Write(r.Dir, synthrun.Spec{Label: r.Side, Seed: uint64(100*call + i), Effect: e, Tau: 0.003,
				Mutate: func(m *runfmt.Manifest) {
					m.RunID = r.ID
					m.Duet = &runfmt.Duet{Partner: partner, PartnerBuild: runs[1-i].Side, Slot: i + 1, CPUs: []string{"0", "1"}[i], CPUsAllowed: []string{"0", "1"}[i]}
				}})
		}
		return errs
	}
}

func duetConfig(dir string, run func(ctx context.Context, runs [2]DuetRun) [2]error) Config {
	c := config(dir, nil)
	c.Plan.Duet, c.RunDuet = true, run
	c.Run = func(context.Context, string, string, string, string) error {
		return errors.New("a duet series runs no run alone")
	}
	return c
}

// A duet series: every step is one duet, the slot-1 run first, partners naming each
// other, A in slot 1 in odd duets; the first look is at 4 duets; a 10 % slowdown is
// found through a machine that wanders 3 % per duet and a slot that costs 5 %, which
// the analysis names and sets aside; the machine time counts each duet once.
func TestDuetSeries(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	s, err := Execute(context.Background(), duetConfig(dir, duets(1.10, 1.05, 0.03, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if s.Outcome == nil || s.Outcome.Reason != "resolved" || s.Outcome.Verdicts["Product/mean"] != string(analyze.Slower) {
		t.Fatalf("outcome %+v", s.Outcome)
	}
	if len(s.Looks) == 0 || s.Looks[0].Runs != 4 {
		t.Fatalf("the first look was at %+v duets, not 4", s.Looks)
	}
	for i := 0; i+1 < len(s.Entries); i += 2 {
		e, p := s.Entries[i], s.Entries[i+1]
		k := i/2 + 1
		first := "A"
		if k%2 == 0 {
			first = "B"
		}
		if e.Slot != 1 || p.Slot != 2 || e.Side != first || p.Side == first || e.Partner != p.Seq || p.Partner != e.Seq ||
			e.Dir != filepath.Join(e.Side, "run-"+string(rune('0'+k))) {
			t.Fatalf("duet %d: %+v / %+v", k, e, p)
		}
	}
	g := s.Looks[len(s.Looks)-1].Look.Gates[0]
	if g.SlotPct == nil || *g.SlotPct < 3.5 || *g.SlotPct > 6.5 {
		t.Fatalf("the slot's effect (5 %%) at %s: %v", g.Gate, fmtPtr(g.SlotPct))
	}
	var sum time.Duration
	for _, e := range s.Entries {
		w, _ := e.Wall()
		sum += w
	}
	if mt := s.MachineTime(); mt > sum/2+time.Millisecond {
		t.Fatalf("machine time %s counts a duet's two runs twice (their walls add to %s)", mt, sum)
	}
	// between identical builds, with the slot's 5 % and the machine's wander, no verdict
	// of a change
	aa, err := Execute(context.Background(), duetConfig(filepath.Join(t.TempDir(), "aa"), duets(1.0, 1.05, 0.03, nil)))
	if err != nil {
		t.Fatal(err)
	}
	for gate, v := range aa.Outcome.Verdicts {
		if v == string(analyze.Slower) || v == string(analyze.Faster) {
			t.Errorf("A/A duet series, gate %s: %s", gate, v)
		}
	}
}

// A duet counts only whole: when one run fails both are moved to excluded/ (the
// partner with the reason) and the duet runs again with its slots; the same duet
// failing twice stops the series; --stop-after pauses it and the same call goes on.
func TestDuetSeriesFailuresAndSittings(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	c := duetConfig(dir, duets(1.10, 1.0, 0.01, func(call int, side string) error {
		if call == 2 && side == "A" {
			return errors.New("injected: the writer died")
		}
		return nil
	}))
	c.Plan.MaxRuns = 4
	c.StopAfter = 2
	s, err := Execute(context.Background(), c)
	if !errors.Is(err, ErrPaused) || s.Done("A", Measured) != 2 || s.Done("B", Measured) != 2 {
		t.Fatalf("paused after 2 duets: %v, %d/%d done", err, s.Done("A", Measured), s.Done("B", Measured))
	}
	failed := s.Entries[2:4]
	for _, e := range failed {
		if e.Status != Failed {
			t.Fatalf("a failed duet's run: %+v", e)
		}
		if _, err := os.Stat(filepath.Join(dir, e.Excluded)); e.Side == "B" && (e.Excluded == "" || err != nil) {
			t.Fatalf("the partner's finished run was not moved to excluded/: %+v %v", e, err)
		}
	}
	if !strings.Contains(failed[0].Reason+failed[1].Reason, "its duet partner failed: A run A/run-2: injected") {
		t.Fatalf("reasons: %q / %q", failed[0].Reason, failed[1].Reason)
	}
	again := s.Entries[4:6]
	if again[0].Side != failed[0].Side || again[0].Slot != 1 || !again[0].Rerun || again[0].Dir != failed[0].Dir {
		t.Fatalf("the duet run again: %+v (the failed one %+v)", again[0], failed[0])
	}
	c.StopAfter = 0
	s, err = Execute(context.Background(), c)
	if err != nil || s.Outcome == nil || s.Done("A", Measured) != 4 {
		t.Fatalf("continued: %v %+v", err, s.Outcome)
	}
	// twice in a row: stopped
	c2 := duetConfig(filepath.Join(t.TempDir(), "s2"), duets(1.10, 1.0, 0.01, func(call int, side string) error {
		if call >= 2 && side == "B" {
			return errors.New("injected: the writer died")
		}
		return nil
	}))
	if _, err := Execute(context.Background(), c2); !errors.Is(err, ErrRunFailedTwice) {
		t.Fatalf("twice: %v", err)
	}
}

func fmtPtr(p *float64) string {
	if p == nil {
		return "none"
	}
	return strconv.FormatFloat(*p, 'f', 2, 64)
}

// A duet series whose process died mid-duet (both runs still "running" in
// series.json) is taken up by the same call: both runs are marked interrupted and
// moved out, and the duet runs again whole, in its slots.
func TestDuetSeriesResumesAfterAKill(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	c := duetConfig(dir, duets(1.10, 1.0, 0.01, nil))
	c.Plan.MaxRuns, c.StopAfter = 4, 1
	if _, err := Execute(context.Background(), c); !errors.Is(err, ErrPaused) {
		t.Fatal(err)
	}
	st, _ := load(dir)
	now := time.Now()
	for i, side := range []string{"B", "A"} { // duet 2: B in slot 1
		e := Entry{Seq: len(st.Entries) + 1, Side: side, Kind: Measured, Dir: filepath.Join(side, "run-2"), Status: Running, Started: &now, Slot: i + 1}
		e.Partner = e.Seq + 1 - 2*i
		st.Entries = append(st.Entries, e)
		os.MkdirAll(filepath.Join(dir, e.Dir), 0o755) // what the killed loads left
	}
	if err := st.save(dir); err != nil {
		t.Fatal(err)
	}
	c.StopAfter = 0
	s, err := Execute(context.Background(), c)
	if err != nil || s.Outcome == nil {
		t.Fatalf("resumed: %v %+v", err, s.Outcome)
	}
	for _, e := range s.Entries[2:4] {
		if e.Status != Interrupted || e.Excluded == "" || !strings.Contains(e.Reason, "did not finish") {
			t.Fatalf("a killed duet's run: %+v", e)
		}
	}
	if e := s.Entries[4]; e.Side != "B" || e.Slot != 1 || !e.Rerun || e.Dir != filepath.Join("B", "run-2") || len(s.Owed) != 0 {
		t.Fatalf("the killed duet run again: %+v (owed %v)", e, s.Owed)
	}
}
