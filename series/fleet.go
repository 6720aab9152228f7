package series

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/warmstat/warmstat/analyze"
)

// FleetOptions are how a fleet's series are combined; what is not given is taken from
// the series' own plan.
type FleetOptions struct {
	ThresholdPct *float64 // nil: the plans' own threshold
	Gates        []string // nil: the plans' own gates
	Quantiles    analyze.Quantiles
}

// FleetProblem is why a directory cannot stand for a machine in a fleet.
type FleetProblem int

const (
	NotADirectory FleetProblem = iota + 1 // a file where a series directory was expected
	NotASeries                            // a directory without series.json
	Sequential                            // a series that stopped at its own looks
	Unfinished                            // a fixed-size series that has not run all its pairs
)

// FleetSeriesError is a directory that is not a finished fixed-size series. Problem
// tells a caller which, so that it can say how such a series is made.
type FleetSeriesError struct {
	Dir     string
	Problem FleetProblem
	msg     string
}

func (e *FleetSeriesError) Error() string { return e.Dir + ": " + e.msg }

// TwiceError is a series given twice: one machine would count as two.
type TwiceError struct{ Abs, First, Again string }

func (e *TwiceError) Error() string {
	return fmt.Sprintf("%s is given twice (as %s and %s): each machine's series once", e.Abs, e.First, e.Again)
}

// CombineFleet reads the series of several machines (dirs: each a finished, fixed-size
// series) and combines them (analyze.CombineFleet). Series whose runs or plans differ
// in anything but the machine are refused with an *analyze.FleetRefusal. It returns
// the comparison options used, the plans' own unless o overrides them: a refusal is
// reported with them too.
func CombineFleet(dirs []string, o FleetOptions) (*analyze.Fleet, analyze.CompareOptions, error) {
	fleet, plans, err := readFleet(dirs)
	if err != nil {
		return nil, analyze.CompareOptions{}, err
	}
	opts := analyze.CompareOptions{ThresholdPct: plans[0].ThresholdPct, Quantiles: o.Quantiles, Gate: true, Gates: plans[0].Gates}
	if o.ThresholdPct != nil {
		opts.ThresholdPct = *o.ThresholdPct
	}
	if o.Gates != nil {
		opts.Gates = o.Gates
	}
	c, err := analyze.CombineFleet(fleet, opts)
	var ref *analyze.FleetRefusal
	if !errors.As(err, &ref) && err != nil {
		return nil, opts, err
	}
	// what the runs record agrees (analyze.CombineFleet); what only the plans say must agree too
	if ms := planMismatches(fleet, plans); len(ms) > 0 {
		if ref == nil {
			ref = &analyze.FleetRefusal{}
		}
		ref.Mismatches = append(ref.Mismatches, ms...)
	}
	if ref != nil {
		return nil, opts, ref
	}
	return c, opts, nil
}

// readFleet reads every series, each finished, fixed-size and paired, and its plan.
func readFleet(dirs []string) ([]analyze.FleetSeries, []Plan, error) {
	var out []analyze.FleetSeries
	var plans []Plan
	seen := map[string]string{}
	for _, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, nil, err
		}
		if first, ok := seen[abs]; ok {
			return nil, nil, &TwiceError{Abs: abs, First: first, Again: dir}
		}
		seen[abs] = dir
		st, err := readFleetSeries(dir)
		if err != nil {
			return nil, nil, err
		}
		plans = append(plans, st.Plan)
		a, err := analyze.LoadGroup("A", filepath.Join(dir, "A"), analyze.LoadOptions{})
		if err != nil {
			return nil, nil, err
		}
		b, err := analyze.LoadGroup("B", filepath.Join(dir, "B"), analyze.LoadOptions{})
		if err != nil {
			return nil, nil, err
		}
		out = append(out, analyze.FleetSeries{Name: dir, A: a, B: b, Pairs: st.Pairs(dir)})
	}
	return out, plans, nil
}

// readFleetSeries reads the series in dir, refusing one that cannot stand for its
// machine: a sequential series stopped at its own looks, which would bias a combined
// figure; an unfinished one has not run its plan.
func readFleetSeries(dir string) (*State, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, errors.Unwrap(err))
	} else if !st.IsDir() {
		return nil, &FleetSeriesError{dir, NotADirectory, "not a directory: give the series' directory"}
	}
	st, err := Read(dir)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, &FleetSeriesError{dir, NotASeries, "no " + File + ": not a series directory"}
	}
	p := st.Plan
	switch {
	case p.Pairs == 0:
		return nil, &FleetSeriesError{dir, Sequential, "a sequential series (it stops at its own looks, which would bias a combined figure): a fleet's series are fixed-size"}
	case st.Outcome == nil || st.Outcome.Reason != "fixed-size":
		why := "unfinished"
		if st.Outcome != nil {
			why = st.Outcome.Reason + ": " + st.Outcome.Detail
		}
		return nil, &FleetSeriesError{dir, Unfinished, fmt.Sprintf("%s, %d of %d pairs: run its warmstat ab command again to finish it", why, len(st.Pairs(dir)), p.Pairs)}
	}
	return st, nil
}

// planMismatches are the plan settings that differ between the machines' series, each
// with the series that carry each value. Where each machine keeps its snapshot or its
// workload file, and how its builds were typed, may differ; what the builds are, the
// heaps and the conditions the runs record are compared run by run
// (analyze.CombineFleet); the minimum and maximum runs are the pairs in a fixed-size
// series.
func planMismatches(fleet []analyze.FleetSeries, plans []Plan) []analyze.FleetMismatch {
	skip := map[string]bool{"pristine": true, "workload": true, "min_runs": true, "max_runs": true}
	var out []analyze.FleetMismatch
	typ := reflect.TypeOf(Plan{})
	for i := range typ.NumField() {
		name := strings.Split(typ.Field(i).Tag.Get("json"), ",")[0]
		if skip[name] {
			continue
		}
		var vals []analyze.SeriesSetting
		for k, p := range plans {
			p.A.Spec, p.B.Spec = "", ""
			v := fmt.Sprint(reflect.ValueOf(p).Field(i).Interface())
			j := slices.IndexFunc(vals, func(s analyze.SeriesSetting) bool { return s.Value == v })
			if j < 0 {
				vals = append(vals, analyze.SeriesSetting{Value: v})
				j = len(vals) - 1
			}
			vals[j].Series = append(vals[j].Series, fleet[k].Name)
		}
		if len(vals) > 1 {
			out = append(out, analyze.FleetMismatch{Field: name, Values: vals})
		}
	}
	return out
}
