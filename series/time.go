package series

import (
	"time"
)

// The series' machine-time bookkeeping: how long its runs took, what of it was not the
// measured load and goLive, and what is left. Counted over every invocation of a
// resumed series alike, from the times series.json records.

// Wall is how long a run took from its start to its end (false if it has not both).
func (e Entry) Wall() (time.Duration, bool) {
	if e.Started == nil || e.Ended == nil {
		return 0, false
	}
	return e.Ended.Sub(*e.Started), true
}

// Outside is how much of a run's wall time was not its measured load and goLive (boots,
// copies, warm-up loads, verification, teardown); false when the run is untimed or its
// load is unknown.
func (e Entry) Outside() (time.Duration, bool) {
	took, ok := e.Wall()
	if !ok || e.Health == nil || e.Health.LoadS == nil {
		return 0, false
	}
	inside := time.Duration(*e.Health.LoadS * 1e9)
	if e.Health.GoLiveS != nil {
		inside += time.Duration(*e.Health.GoLiveS * 1e9)
	}
	return max(0, took-inside), true
}

// MeanRun is the mean wall time of the series' timed runs, and the mean time outside
// their load and goLive (over the runs whose load is known); zeros before any run is timed.
func (s *State) MeanRun() (per, outside time.Duration) {
	n, m := 0, 0
	for _, e := range s.Entries {
		took, ok := e.Wall()
		if !ok {
			continue
		}
		n++
		per += took
		if o, ok := e.Outside(); ok {
			outside += o
			m++
		}
	}
	if n == 0 {
		return 0, 0
	}
	if m > 0 {
		outside /= time.Duration(m)
	}
	return per / time.Duration(n), outside
}

// MachineTime is the machine time the series' runs took so far.
func (s *State) MachineTime() time.Duration {
	var d time.Duration
	for _, e := range s.Entries {
		if e.Partner != 0 && e.Partner < e.Seq {
			continue // a duet's second run took the same time as its first
		}
		if took, ok := e.Wall(); ok {
			d += took
		}
	}
	return d
}

// ETA is what is left of a series: certain for a fixed size, else at most the plan's
// maximum, and likely fewer when the last look said how many more runs would resolve
// every gate.
type ETA struct {
	Fixed  bool          // a fixed-size series (--pairs): no early stop
	Left   int           // runs left at most (all of them, for a fixed size)
	Likely int           // runs the last look expects, when fewer than Left; 0 when it said nothing
	PerRun time.Duration // the mean run's wall time (the time since began per run before any is timed)
}

// Remaining is the series' ETA: began is when this invocation started, the estimate of
// a run's time until one is timed.
func (s *State) Remaining(began, now time.Time) ETA {
	done := s.Done("", "") // a run that failed or was stopped is run again: not done
	per, _ := s.MeanRun()
	if per == 0 {
		per = now.Sub(began) / time.Duration(max(1, done))
	}
	if s.Plan.Duet { // a duet's two runs take one wall time
		per /= 2
	}
	e := ETA{PerRun: per, Left: max(0, 2*(s.Plan.MaxRuns+s.Plan.Warmup)-done), Fixed: s.Plan.Pairs > 0}
	if e.Fixed {
		return e
	}
	if n := len(s.Looks); n > 0 && s.Looks[n-1].Look != nil {
		most := 0
		for _, g := range s.Looks[n-1].Look.Gates {
			if g.MoreRuns != nil && !g.Watched { // a watched metric is not waited for
				most = max(most, *g.MoreRuns)
			}
		}
		// the projection counts from the look: runs done since it are part of it, and
		// the plan's maximum caps it
		if rem := min(e.Left, 2*(s.Plan.Warmup+s.Looks[n-1].Runs+most)-done); most > 0 && rem > 0 && rem < e.Left {
			e.Likely = rem
		}
	}
	return e
}

// Totals are the TOTAL (load + goLive) seconds of a side's finished measured runs, in
// the order they ran; runs without a positive figure are left out.
func (s *State) Totals(side string) []float64 {
	var out []float64
	for _, e := range s.Entries {
		if e.Side != side || e.Kind != Measured || e.Status != Done || e.Health == nil || e.Health.TotalS == nil || *e.Health.TotalS <= 0 {
			continue
		}
		out = append(out, *e.Health.TotalS)
	}
	return out
}
