package profile

import "github.com/warmstat/warmstat/runfmt"

// cost is a profiler's slowdown of the load wall-clock as an A/B series measured it.
type cost struct {
	pct float64
	how string
}

// measured are the A/B measurements (profiled vs not, same build, runs interleaved,
// through compare), by mode and interval. A setting not listed has no measured cost
// (null in the manifest), never an extrapolated one. The figure holds for the machine
// and catalog named; on another it is a guide, not a measurement.
var measured = map[string]cost{
	"cpu/perf_events/10ms": {2.4, "A/B 2026-11-30: 3 profiled vs 3 unprofiled loads interleaved, seeded shop scale 0.05 (19,379 entities), " +
		"evitaDB 2026.2.3, writer 8g, reader 6g, 2 shared cores, perf_events: load wall-clock +2.4 % [-12.5 %, +19.9 %] " +
		"(95 % welch-t, unresolved at 6.7 % between-run variation)"},
}

func costKey(w *runfmt.WriterProfile) string {
	return w.Mode + "/" + w.Engine + "/" + runfmt.FormatInterval(w.Interval, w.IntervalUnit)
}

// measuredCost is the measured cost of w's setting, if it was measured. The engine is
// part of the setting: a CPU timer costs what perf events do not.
func measuredCost(w *runfmt.WriterProfile) (cost, bool) {
	c, ok := measured[costKey(w)]
	return c, ok
}
