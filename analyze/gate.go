package analyze

import (
	"fmt"
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
	var metrics []string
	for _, m := range latencyMetrics {
		metrics = append(metrics, string(m))
	}
	var clocks []string
	for _, m := range clockMetrics {
		clocks = append(clocks, string(m))
	}
	return fmt.Sprintf("no such row; a gate is COLLECTION/METRIC with COLLECTION one of %s or * (the whole run), METRIC one of %s, "+
		"and for * also %s (e.g. %s/mean, */ingest)", strings.Join(collections, ", "), strings.Join(metrics, ", "), strings.Join(clocks, ", "), dominant)
}
