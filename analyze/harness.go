package analyze

import (
	"fmt"

	"github.com/warmstat/warmstat/runfmt"
)

// CheckHarnessRun is CheckHarnessFigures on the run directory at dir, summarised with
// the harness's own (java) quantiles.
func CheckHarnessRun(rep *runfmt.HarnessReport, dir string) error {
	run, err := runfmt.Open(dir)
	if err != nil {
		return err
	}
	s, err := Summarize(run, QuantilesJava)
	if err != nil {
		return err
	}
	return CheckHarnessFigures(rep, s)
}

// CheckHarnessFigures recomputes, from an imported run's CSV, every latency figure the
// Java harness printed (overall mean/median/p95/p99/min/max, per-collection
// mean/median/p99) and fails on the first that differs. Equal figures prove the CSV
// belongs to the report and that our definitions match the harness's.
func CheckHarnessFigures(rep *runfmt.HarnessReport, s *RunSummary) error {
	if s.Quantiles != QuantilesJava {
		return fmt.Errorf("harness figures can only be checked with java quantiles")
	}
	check := func(where, what string, printed int64, ns float64) error {
		if printed < 0 {
			return nil
		}
		if got := javaTenths(int64(ns), 1000); got != printed {
			return fmt.Errorf("%s: %s %s %s µs printed by the harness, but the CSV gives %s µs (CSV from another run?)",
				rep.File, where, what, tenths(printed), tenths(got))
		}
		return nil
	}
	o := rep.Overall
	for _, c := range []struct {
		what string
		p    int64
		v    float64
	}{{"mean", o.Mean, s.Overall.MeanNs}, {"median", o.Median, s.Overall.MedianNs}, {"p95", o.P95, s.Overall.P95Ns},
		{"p99", o.P99, s.Overall.P99Ns}, {"min", o.Min, float64(s.Overall.MinNs)}, {"max", o.Max, float64(s.Overall.MaxNs)}} {
		if err := check("overall", c.what, c.p, c.v); err != nil {
			return err
		}
	}
	byName := map[string]CollectionSummary{}
	for _, c := range s.Collections {
		byName[c.Name] = c
	}
	for _, hc := range rep.Collections {
		c := byName[hc.Name]
		for _, x := range []struct {
			what string
			p    int64
			v    float64
		}{{"mean", hc.Latency.Mean, c.MeanNs}, {"median", hc.Latency.Median, c.MedianNs}, {"p99", hc.Latency.P99, c.P99Ns}} {
			if err := check(hc.Name, x.what, x.p, x.v); err != nil {
				return err
			}
		}
	}
	return nil
}

func tenths(t int64) string { return fmt.Sprintf("%d.%d", t/10, t%10) }
