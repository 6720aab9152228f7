package runfmt

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Profilers (WriterProfile.Profiler).
const (
	ProfilerAsync = "async-profiler" // async-profiler, loaded into the writer as a JVM agent
	ProfilerJFR   = "jfr"            // the JDK's own Flight Recorder
)

// Profiled phases (ProfilePhase.Name): the load and goLive are different code paths,
// so each has a profile of its own.
const (
	PhaseLoad   = "load"
	PhaseGoLive = "golive"
)

// Interval units (WriterProfile.IntervalUnit).
const (
	UnitNanoseconds = "ns"    // a time interval (cpu, wall) or a threshold (lock)
	UnitBytes       = "bytes" // an allocation sampling interval
)

// WriterProfile records that a profiler ran on the writer JVM, and what it produced.
// A profiler is a condition: it costs the writer time, so a profiled run is compared
// only with runs profiled the same way.
type WriterProfile struct {
	Profiler string `json:"profiler"` // ProfilerAsync or ProfilerJFR
	Version  string `json:"version"`  // the profiler's version (for jfr: the JVM's)
	// Mode is what was asked for: cpu, alloc, wall, lock or jfr.
	Mode string `json:"mode"`
	// Event is the event actually sampled, as the recording states it: "cpu",
	// "jdk.ExecutionSample", ...; Engine is how (for cpu: perf_events, or the timer
	// async-profiler fell back to where perf events are not permitted). "" = not read.
	Event        string `json:"event"`
	Engine       string `json:"engine,omitempty"`
	Interval     int64  `json:"interval"`
	IntervalUnit string `json:"interval_unit"`
	// Phases are the profiled windows, each covering exactly one clock (the load
	// wall-clock, goLive).
	Phases []ProfilePhase `json:"phases"`
	Cost   ProfileCost    `json:"cost"`
	// Error says why a profile is missing or incomplete ("" = complete).
	Error string `json:"error,omitempty"`
}

// ProfilePhase is one profiled window and its files (relative to the run directory).
type ProfilePhase struct {
	Name    string `json:"name"`
	Samples int64  `json:"samples"`
	// Value is the profile's total in ValueUnit (sampled CPU or wall time in ns,
	// allocated bytes, time blocked on locks in ns).
	Value      int64  `json:"value"`
	ValueUnit  string `json:"value_unit"`
	Recording  string `json:"recording"`  // the raw recording (JFR format: JDK Mission Control opens it)
	FlameGraph string `json:"flamegraph"` // interactive flame graph (HTML)
	Pprof      string `json:"pprof"`      // pprof protobuf (go tool pprof)
	Collapsed  string `json:"collapsed"`  // folded stacks, one line per stack
}

// ProfileCost is what profiling cost. ControlNs is measured in every run: the time
// spent starting and stopping the profiler at the windows' edges, outside every clock.
// The slowdown of the load itself cannot be measured within one run, and a manifest
// states only what its run measured: LoadWallPct and Measured are read from manifests
// of earlier warmstat versions (which copied one machine's A/B result into every
// profiled run) and never written; the profiler's measured cost is in docs/profile.md.
type ProfileCost struct {
	ControlNs   int64    `json:"control_ns"`
	LoadWallPct *float64 `json:"load_wall_pct"`
	Measured    string   `json:"measured,omitempty"`
}

// Files are the phase's files, in a fixed order.
func (p ProfilePhase) Files() []string {
	return []string{p.Recording, p.FlameGraph, p.Pprof, p.Collapsed}
}

// Phase returns the named phase, or nil.
func (w *WriterProfile) Phase(name string) *ProfilePhase {
	for i := range w.Phases {
		if w.Phases[i].Name == name {
			return &w.Phases[i]
		}
	}
	return nil
}

// Describe is the profile as a condition: profiler, mode, engine and interval
// ("async-profiler cpu (perf_events) every 10ms"); "none" for nil.
func (w *WriterProfile) Describe() string {
	if w == nil {
		return "none"
	}
	s := w.Profiler + " " + w.Mode
	if w.Engine != "" && w.Engine != w.Mode {
		s += " (" + w.Engine + ")"
	}
	return s + " every " + FormatInterval(w.Interval, w.IntervalUnit)
}

// FormatInterval prints a sampling interval in its unit (10ms, 512KiB).
func FormatInterval(v int64, unit string) string {
	if unit == UnitBytes {
		switch {
		case v%(1<<20) == 0:
			return fmt.Sprintf("%dMiB", v>>20)
		case v%(1<<10) == 0:
			return fmt.Sprintf("%dKiB", v>>10)
		}
		return fmt.Sprintf("%dB", v)
	}
	switch {
	case v%1e6 == 0:
		return fmt.Sprintf("%dms", v/1e6)
	case v%1e3 == 0:
		return fmt.Sprintf("%dus", v/1e3)
	}
	return fmt.Sprintf("%dns", v)
}

var profileModes = map[string][]string{
	ProfilerAsync: {"cpu", "alloc", "wall", "lock"},
	ProfilerJFR:   {"jfr"},
}

func (w *WriterProfile) validate() error {
	const f = "writer_profile"
	modes, ok := profileModes[w.Profiler]
	if !ok {
		return ferr(f+".profiler", "%q is neither %q nor %q", w.Profiler, ProfilerAsync, ProfilerJFR)
	}
	if !slices.Contains(modes, w.Mode) {
		return ferr(f+".mode", "%q is not a mode of %s (%s)", w.Mode, w.Profiler, strings.Join(modes, ", "))
	}
	if w.Interval <= 0 {
		return ferr(f+".interval", "must be positive, got %d", w.Interval)
	}
	if w.IntervalUnit != UnitNanoseconds && w.IntervalUnit != UnitBytes {
		return ferr(f+".interval_unit", "%q is neither %q nor %q", w.IntervalUnit, UnitNanoseconds, UnitBytes)
	}
	if w.Cost.ControlNs < 0 {
		return ferr(f+".cost.control_ns", "negative")
	}
	seen := map[string]bool{}
	for i, p := range w.Phases {
		pf := fmt.Sprintf("%s.phases[%d]", f, i)
		if p.Name != PhaseLoad && p.Name != PhaseGoLive {
			return ferr(pf+".name", "%q is neither %q nor %q", p.Name, PhaseLoad, PhaseGoLive)
		}
		if seen[p.Name] {
			return ferr(pf+".name", "phase %q listed twice", p.Name)
		}
		seen[p.Name] = true
		if p.Samples < 0 || p.Value < 0 {
			return ferr(pf, "negative samples or value in phase %q", p.Name)
		}
		for k, file := range map[string]string{"recording": p.Recording, "flamegraph": p.FlameGraph, "pprof": p.Pprof, "collapsed": p.Collapsed} {
			if file == "" {
				continue
			}
			if path.IsAbs(file) || strings.HasPrefix(path.Clean(file), "..") || path.Clean(file) != file {
				return ferr(pf+"."+k, "%q is not a clean path inside the run directory", file)
			}
		}
	}
	if len(w.Phases) == 0 && w.Error == "" {
		return ferr(f+".phases", "empty, and no error says why")
	}
	return nil
}
