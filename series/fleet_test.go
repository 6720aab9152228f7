package series

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/internal/synthrun"
)

// A fleet's directories that cannot stand for a machine are refused before any run is
// read, each with its problem named so the command can say how such a series is made.
func TestFleetRefusesWhatIsNoFinishedSeries(t *testing.T) {
	tmp := t.TempDir()
	series := func(name string, plan Plan, out *Outcome) string {
		dir := filepath.Join(tmp, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		st := &State{Schema: Schema, Plan: plan, Outcome: out}
		if err := st.save(dir); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	seq := series("seq", Plan{MaxRuns: 10}, &Outcome{Reason: "resolved"})
	unfinished := series("unfinished", Plan{Pairs: 5}, nil)
	failed := series("failed", Plan{Pairs: 5}, &Outcome{Reason: "failed", Detail: "the writer died"})
	empty := filepath.Join(tmp, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir  string
		want FleetProblem
		msg  string
	}{
		{seq, Sequential, "a sequential series"},
		{unfinished, Unfinished, "unfinished, 0 of 5 pairs: run its warmstat ab command again to finish it"},
		{failed, Unfinished, "failed: the writer died, 0 of 5 pairs"},
		{empty, NotASeries, "no series.json: not a series directory"},
		{filepath.Join(seq, File), NotADirectory, "not a directory"},
	} {
		_, _, err := CombineFleet([]string{c.dir, seq}, FleetOptions{})
		var fe *FleetSeriesError
		if !errors.As(err, &fe) || fe.Problem != c.want || fe.Dir != c.dir || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want problem %d %q", c.dir, err, c.want, c.msg)
		}
	}
	done := series("done", Plan{Pairs: 1}, &Outcome{Reason: "fixed-size"})
	for _, side := range []string{"A", "B"} {
		if _, err := synthrun.Write(filepath.Join(done, side, "run-1"), synthrun.Spec{Label: side, Seed: 1, Effect: 1, Tau: 0.01}); err != nil {
			t.Fatal(err)
		}
	}
	_, _, err := CombineFleet([]string{done, done + "/"}, FleetOptions{})
	var twice *TwiceError
	if !errors.As(err, &twice) || twice.First != done || twice.Again != done+"/" {
		t.Errorf("a series given twice: %v", err)
	}
}

// The plans' settings that must agree are compared value by value, naming the series
// behind each value; where each machine keeps its files, and the runs' bounds a
// fixed-size series does not use, may differ.
func TestPlanMismatches(t *testing.T) {
	fleet := []analyze.FleetSeries{{Name: "m1"}, {Name: "m2"}, {Name: "m3"}}
	plans := []Plan{
		{Pairs: 5, Pristine: "/a", MaxRuns: 5, ThresholdPct: 2},
		{Pairs: 6, Pristine: "/b", MaxRuns: 6, ThresholdPct: 2},
		{Pairs: 5, Pristine: "/c", MaxRuns: 7, ThresholdPct: 2},
	}
	got := planMismatches(fleet, plans)
	if len(got) != 1 || got[0].Field != "pairs" || len(got[0].Values) != 2 ||
		got[0].Values[0].Value != "5" || strings.Join(got[0].Values[0].Series, ",") != "m1,m3" ||
		got[0].Values[1].Value != "6" || strings.Join(got[0].Values[1].Series, ",") != "m2" {
		t.Errorf("mismatches: %+v", got)
	}
}
