package analyze

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/warmstat/warmstat/base/numfmt"
	"github.com/warmstat/warmstat/runfmt"
)

// RunHealth is one run's headline figures and whether it stands out from the other
// runs of its group.
type RunHealth struct {
	Dir        string   `json:"dir"`
	Collection string   `json:"collection"`        // the dominant collection of the group
	MeanUs     *float64 `json:"mean_us"`           // its mean upsert latency
	LoadS      *float64 `json:"load_s"`            // load wall-clock
	GoLiveS    *float64 `json:"golive_s"`          // nil unless goLive completed
	TotalS     *float64 `json:"total_s"`           // nil unless goLive completed
	Outlier    string   `json:"outlier,omitempty"` // why it stands out, "" when it does not
	// Factor names, for an outlier, the recorded variance factor (runfmt.VarianceFactors)
	// furthest from its side's median: what else was different about that run.
	Factor string `json:"factor,omitempty"`
	// Factors are the run's variance factors as figures (see factorValues), nil when it
	// recorded none.
	Factors map[string]float64 `json:"factors,omitempty"`
}

// Outlier rule: a figure whose distance from its group's median is more than
// outlierZ robust standard deviations (1.4826 × the median absolute deviation) and
// more than outlierMinPct of the median. The median and MAD are not moved by the
// outlier itself, as a mean and SD would be; the minimum keeps runs that agree to a
// fraction of a percent from being flagged over nothing. Needs 3 runs.
const (
	outlierZ      = 3.5
	outlierMinPct = 10.0
)

// Health gives every run of g its headline figures and flags the runs that stand out
// from the others (see the outlier rule above): a disturbed run is shown, never
// silently dropped.
func Health(g *Group, q Quantiles) ([]RunHealth, error) {
	sums := make([]*RunSummary, len(g.Runs))
	for i, r := range g.Runs {
		s, err := Summarize(r, q)
		if err != nil {
			return nil, err
		}
		sums[i] = s
	}
	dominant := dominantOfRuns(sums)
	out := make([]RunHealth, len(sums))
	for i, s := range sums {
		h := RunHealth{Dir: s.Run.Dir, Collection: dominant}
		for _, c := range s.Collections {
			if c.Name == dominant {
				v := c.Stats.MeanNs / 1e3
				h.MeanUs = &v
			}
		}
		load := float64(s.Run.Manifest.Timings.LoadWallNs) / 1e9
		h.LoadS = &load
		if s.TotalNs != nil {
			gl, tot := float64(*s.Run.Manifest.GoLive.Ns)/1e9, float64(*s.TotalNs)/1e9
			h.GoLiveS, h.TotalS = &gl, &tot
		}
		out[i] = h
	}
	for _, f := range []struct {
		name string
		get  func(RunHealth) *float64
		unit string
	}{
		{dominant + " mean upsert", func(h RunHealth) *float64 { return h.MeanUs }, "µs"},
		{"load wall-clock", func(h RunHealth) *float64 { return h.LoadS }, "s"},
		{"goLive", func(h RunHealth) *float64 { return h.GoLiveS }, "s"},
		{"TOTAL", func(h RunHealth) *float64 { return h.TotalS }, "s"},
	} {
		var vals []float64
		for _, h := range out {
			if v := f.get(h); v != nil {
				vals = append(vals, *v)
			}
		}
		if len(vals) < 3 {
			continue
		}
		med, sd := robust(vals)
		for i := range out {
			v := f.get(out[i])
			if v == nil || out[i].Outlier != "" || med <= 0 {
				continue
			}
			pct := 100 * (*v - med) / med
			if math.Abs(pct) <= outlierMinPct || (sd > 0 && math.Abs(*v-med)/sd <= outlierZ) {
				continue
			}
			z := "all the other runs agree exactly"
			if sd > 0 {
				z = fmt.Sprintf("%.1f robust SDs", math.Abs(*v-med)/sd)
			}
			out[i].Outlier = fmt.Sprintf("%s %s %s is %+.0f %% from the median %s %s of its side (%s)", f.name, readable(*v), f.unit, pct, readable(med), f.unit, z)
		}
	}
	explain(g, out)
	return out, nil
}

// factorValues are a run's variance factors as comparable figures (shares of the load
// window, rates per second of it); absent ones are left out.
func factorValues(m *runfmt.Manifest) map[string]float64 {
	f, wall := m.Factors, float64(m.Timings.LoadWallNs)
	out := map[string]float64{}
	if f == nil || wall <= 0 {
		return out
	}
	for g, ns := range f.WriterCPUNs {
		out["writer "+g+" CPU (cores)"] = float64(ns) / wall
	}
	rate := func(name string, v *int64) {
		if v != nil {
			out[name] = float64(*v) / wall * 1e9
		}
	}
	rate("writer major faults per s", f.WriterMajorFaults)
	rate("writer minor faults per s", f.WriterMinorFaults)
	rate("writer involuntary switches per s", f.WriterInvoluntarySwitches)
	rate("JIT compilations per s", f.JITCompiles)
	if f.JITCompileNs != nil {
		out["JIT compiling (share of the window)"] = float64(*f.JITCompileNs) / wall
	}
	if f.ReaderCPUNs != nil {
		out["reader CPU (cores)"] = float64(*f.ReaderCPUNs) / wall
	}
	if f.StealNs != nil && f.MachineCPUNs != nil && *f.MachineCPUNs > 0 {
		out["CPU steal (share)"] = float64(*f.StealNs) / float64(*f.MachineCPUNs)
	}
	if f.GCPauseNs != nil {
		out["GC pauses (share of the window)"] = float64(*f.GCPauseNs) / wall
	}
	for g, ns := range f.WriterWaitNs {
		out["writer "+g+" waiting for a CPU (share)"] = float64(ns) / wall
	}
	// the machine's speed: the canary's time for the same work, higher on a slower
	// machine (the factor that most often explains a run standing out on a VM)
	if x, why := machineOf(m); why == "" {
		out["machine: canary µs"] = x / 1e3
	}
	return out
}

// explain gives every outlier the recorded factor that deviates most from the other
// runs of its side: by robust SDs where the side's factor varies, else by its relative
// distance from the median.
func explain(g *Group, out []RunHealth) {
	vals := make([]map[string]float64, len(g.Runs))
	for i, r := range g.Runs {
		vals[i] = factorValues(r.Manifest)
	}
	for i := range out {
		if len(vals[i]) > 0 {
			out[i].Factors = vals[i]
		}
		if out[i].Outlier == "" || len(vals[i]) == 0 {
			continue
		}
		best, score := "", 0.0
		for _, name := range slices.Sorted(maps.Keys(vals[i])) {
			var side []float64
			for k, v := range vals {
				if x, ok := v[name]; ok && k != i {
					side = append(side, x)
				}
			}
			if len(side) < 2 {
				continue
			}
			med, sd := robust(side)
			x := vals[i][name]
			z := 0.0
			if sd > 0 {
				z = math.Abs(x-med) / sd
			} else if med != 0 {
				z = math.Abs(x-med) / math.Abs(med) * 10 // no spread on the side: 10 % off counts as 1 SD
			}
			if z > score {
				best, score = fmt.Sprintf("%s %s against %s on its side (%.1f robust SDs)", name, readable(x), readable(med), z), z
			}
		}
		if score >= 2 {
			out[i].Factor = best
		}
	}
}

// robust is the median of v and its robust standard deviation (1.4826 × the median
// absolute deviation: the SD of normal data, unmoved by a few outliers).
func robust(v []float64) (med, sd float64) {
	med = median(v)
	dev := make([]float64, len(v))
	for i, x := range v {
		dev[i] = math.Abs(x - med)
	}
	return med, 1.4826 * median(dev)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// readable is a figure for people: whole and grouped from 1,000 on (31,210), else four
// significant digits (0.5651), never an exponent a reader must decode.
func readable(v float64) string {
	if math.Abs(v) < 1000 {
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	out := numfmt.Group(strconv.FormatFloat(math.Round(math.Abs(v)), 'f', 0, 64))
	if v < 0 {
		return "-" + out
	}
	return out
}
