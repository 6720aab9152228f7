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

// judgeGates evaluates each gate against the rows; a gate naming no row is an
// *OptionError listing the rows there are.
func (c *Comparison) judgeGates(gates []string) error {
	if len(gates) == 0 {
		if c.Dominant != "" {
			gates = append(gates, c.Dominant+"/"+string(metricMean))
		}
		if !c.prefetch { // with prefetch ingest has no meaning; the load wall-clock stands in
			gates = append(gates, Overall+"/"+string(metricIngest))
		} else {
			gates = append(gates, Overall+"/"+string(metricLoadWall))
		}
	}
	for _, g := range gates {
		k := slices.IndexFunc(c.Rows, func(r Row) bool { return r.Name() == g })
		if k < 0 {
			return &OptionError{Option: "Gates", Value: g, Msg: c.unknownGate(g)}
		}
		if slices.ContainsFunc(c.Gates, func(r GateResult) bool { return r.Gate == g }) {
			continue
		}
		r := c.Rows[k]
		res := GateResult{Gate: g, Verdict: r.Verdict, Judged: r.CILowPct != nil, Reason: r.Reason}
		res.Regression = res.Judged && r.Verdict == Slower
		c.Gates = append(c.Gates, res)
	}
	return nil
}

func (c *Comparison) unknownGate(g string) string {
	for _, r := range c.Rows {
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
		"and for * also %s (e.g. %s/mean, */ingest)", strings.Join(c.Collections, ", "), strings.Join(metrics, ", "), strings.Join(clocks, ", "), c.Dominant)
}
