package series

import (
	"testing"
	"time"

	"github.com/warmstat/warmstat/analyze"
)

func f64(v float64) *float64 { return &v }

// A run that failed or was stopped is run again: the ETA counts it as not done (3 done
// of a plan of 2 × 2 runs, one failed: 1 left, not 0); its time counts all the same.
func TestRemainingCountsOnlyFinishedRuns(t *testing.T) {
	start := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	end := start.Add(20 * time.Second)
	st := &State{Plan: Plan{MaxRuns: 2}}
	for i, status := range []string{Done, Done, Failed, Done} {
		st.Entries = append(st.Entries, Entry{Seq: i + 1, Side: []string{"A", "B", "B", "A"}[i], Kind: Measured, Status: status, Started: &start, Ended: &end})
	}
	eta := st.Remaining(start, end)
	if eta.Left != 1 || eta.Fixed || eta.Likely != 0 || eta.PerRun != 20*time.Second {
		t.Fatalf("%+v", eta)
	}
	if st.MachineTime() != 80*time.Second {
		t.Errorf("machine time %s, want 1m20s (the failed run's too)", st.MachineTime())
	}
}

// A fixed-size series (--pairs N) stops at no look: its runs left are certain.
func TestRemainingOfAFixedSizeSeries(t *testing.T) {
	start := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	end := start.Add(20 * time.Second)
	st := &State{Plan: Plan{Pairs: 3, MinRuns: 3, MaxRuns: 3}}
	for i, side := range []string{"A", "B", "B", "A"} {
		st.Entries = append(st.Entries, Entry{Seq: i + 1, Side: side, Kind: Measured, Status: Done, Started: &start, Ended: &end})
	}
	if eta := st.Remaining(start, end); !eta.Fixed || eta.Left != 2 || eta.PerRun != 20*time.Second {
		t.Fatalf("%+v", eta)
	}
}

// The last look's projection makes the likely ETA, counted from the look and capped by
// the plan; before any run is timed a run is the time since the start.
func TestRemainingFollowsTheLastLook(t *testing.T) {
	start := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	end := start.Add(30 * time.Second)
	st := &State{Plan: Plan{MaxRuns: 10}}
	for i, side := range []string{"A", "B", "B", "A"} {
		st.Entries = append(st.Entries, Entry{Seq: i + 1, Side: side, Kind: Measured, Status: Done, Started: &start, Ended: &end})
	}
	two := 2
	st.Looks = []LookRecord{{Runs: 2, Look: &analyze.Look{Gates: []analyze.GateLook{{Gate: "Product/mean", MoreRuns: &two}}}}}
	if eta := st.Remaining(start, end); eta.Left != 16 || eta.Likely != 4 {
		t.Fatalf("%+v: want 16 left at most, 4 likely (2 more per side after the look at 2)", eta)
	}
	fresh := &State{Plan: Plan{MaxRuns: 2}}
	if eta := fresh.Remaining(start, start.Add(time.Minute)); eta.PerRun != time.Minute || eta.Left != 4 {
		t.Fatalf("untimed: %+v", eta)
	}
}

// MeanRun averages the timed runs, and the time outside load and goLive over the runs
// whose load is known; Totals keeps a side's finished measured figures only.
func TestMeanRunAndTotals(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	at := func(s int) *time.Time { v := t0.Add(time.Duration(s) * time.Second); return &v }
	st := &State{Entries: []Entry{
		{Side: "A", Kind: Measured, Status: Done, Started: at(0), Ended: at(100), Health: &analyze.RunHealth{LoadS: f64(60), GoLiveS: f64(10), TotalS: f64(70)}},
		{Side: "B", Kind: Measured, Status: Done, Started: at(100), Ended: at(180), Health: &analyze.RunHealth{LoadS: f64(50), TotalS: f64(50)}},
		{Side: "A", Kind: Warmup, Status: Done, Started: at(180), Ended: at(240), Health: &analyze.RunHealth{TotalS: f64(40)}},
		{Side: "A", Kind: Measured, Status: Failed, Started: at(240), Ended: at(300)},
		{Side: "B", Kind: Measured, Status: Running, Started: at(300)},
	}}
	per, outside := st.MeanRun()
	if per != 75*time.Second || outside != 30*time.Second {
		t.Errorf("MeanRun = %s, %s; want 1m15s (4 timed runs), 30s (30 s and 30 s outside)", per, outside)
	}
	if a := st.Totals("A"); len(a) != 1 || a[0] != 70 {
		t.Errorf("Totals(A) = %v, want [70] (no warm-up, no failed run)", a)
	}
}

// Another build in a series' directory is named as people name builds, not as a Go
// struct prints.
func TestPlanDiffersNamesTheBuild(t *testing.T) {
	then := Plan{A: Build{Spec: "2026.2.2", Label: "2026.2.2", Identity: "2026.2.2@a32cf68"}}
	now := then
	now.A = Build{Spec: "2026.2.3", Label: "A-2026.2.3", Identity: "2026.2.3@86e556a"}
	if got := then.differs(now); got != "a: 2026.2.2 (label 2026.2.2, 2026.2.2@a32cf68) then, 2026.2.3 (label A-2026.2.3, 2026.2.3@86e556a) now" {
		t.Errorf("%q", got)
	}
}
