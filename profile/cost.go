package profile

import "github.com/warmstat/warmstat/runfmt"

// cost is a profiler's slowdown of the load wall-clock as an A/B series measured it.
type cost struct {
	pct float64
	how string
}

// measured are the A/B measurements (profiled vs not, same build, through compare),
// by mode and interval. A setting not listed has no measured cost (null in the
// manifest), never an extrapolated one.
var measured = map[string]cost{}

func costKey(mode string, interval int64) string {
	return mode + "/" + runfmt.FormatInterval(interval, map[bool]string{true: runfmt.UnitBytes, false: runfmt.UnitNanoseconds}[mode == "alloc"])
}

func measuredCost(w *runfmt.WriterProfile) (cost, bool) {
	c, ok := measured[costKey(w.Mode, w.Interval)]
	return c, ok
}
