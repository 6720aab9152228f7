package analyze

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// GateResult is one gated row's outcome. A gate is judged when its row has an
// interval; a judged gate whose verdict is slower is a regression. A gate that
// could not be judged says why; it is neither a pass nor a regression.
type GateResult struct {
	Gate       string  `json:"gate"`
	Verdict    Verdict `json:"verdict"`
	Judged     bool    `json:"judged"`
	Regression bool    `json:"regression"`
	Reason     string  `json:"reason,omitempty"`
}

// GateFailures names the gates a judgement fails on: those judged slower, and those
// not judged, each with its reason ("Product/mean (1 run(s) in A, ...)").
func GateFailures(gates []GateResult) (slower, unjudged []string) {
	for _, g := range gates {
		if g.Regression {
			slower = append(slower, g.Gate)
		}
		if !g.Judged {
			unjudged = append(unjudged, g.Gate+" ("+g.Reason+")")
		}
	}
	return slower, unjudged
}

// judgeGates evaluates each gate against the comparison's rows.
func (c *Comparison) judgeGates(gates []string) error {
	g, err := judgeGates(c.Rows, gates, c.Dominant, c.Collections, c.prefetch)
	c.Gates = g
	return err
}

// judgeGates evaluates each gate against rows (none given: the dominant collection's
// mean and */ingest, or the load wall-clock with prefetch); a gate naming no row is an
// *OptionError listing the rows there are.
func judgeGates(rows []Row, gates []string, dominant string, collections []string, prefetch bool) ([]GateResult, error) {
	if len(gates) == 0 {
		if dominant != "" {
			gates = append(gates, dominant+"/"+string(metricMean))
		}
		if !prefetch { // with prefetch ingest has no meaning; the load wall-clock stands in
			gates = append(gates, Overall+"/"+string(metricIngest))
		} else {
			gates = append(gates, Overall+"/"+string(metricLoadWall))
		}
	}
	var out []GateResult
	for _, g := range gates {
		k := slices.IndexFunc(rows, func(r Row) bool { return r.Name() == g })
		if k < 0 {
			return nil, &OptionError{Option: "Gates", Value: g, Msg: unknownGate(rows, g, dominant, collections)}
		}
		if slices.ContainsFunc(out, func(r GateResult) bool { return r.Gate == g }) {
			continue
		}
		r := rows[k]
		res := GateResult{Gate: g, Verdict: r.Verdict, Judged: r.CILowPct != nil, Reason: r.Reason}
		res.Regression = res.Judged && r.Verdict == Slower
		out = append(out, res)
	}
	return out, nil
}

func unknownGate(rows []Row, g, dominant string, collections []string) string {
	for _, r := range rows {
		if strings.EqualFold(r.Name(), g) {
			return fmt.Sprintf("no such row; names are case-sensitive: did you mean %s?", r.Name())
		}
	}
	if coll, m, _ := strings.Cut(g, "/"); (coll == Overall || slices.Contains(collections, coll)) && Metric(m).valid(coll) {
		return fmt.Sprintf("no run has this figure: %s", missingWhy(Metric(m)))
	}
	metrics, clocks := allMetricNames()
	return fmt.Sprintf("no such row; a gate is COLLECTION/METRIC with COLLECTION one of %s or * (the whole run), METRIC one of %s, "+
		"and for * also %s (e.g. %s/mean, */ingest)", strings.Join(collections, ", "), strings.Join(metrics, ", "), strings.Join(clocks, ", "), dominant)
}

// missingWhy says which runs have a metric that a comparison left out for want of figures.
func missingWhy(m Metric) string {
	switch {
	case slices.Contains(costMetrics, m), m == metricCPUAdj:
		return "per-upsert CPU and allocation come from the embedded writer (target mode embedded), in runs of this warmstat or later"
	case m == metricMachine, slices.Contains(slices.Collect(maps.Keys(adjusted)), m):
		return "the machine's speed is recorded by runs of this warmstat or later, and an adjusted figure needs at least 2 runs per side (a pair more than its interval otherwise would)"
	}
	return "no run of either group has it"
}
