package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/series"
)

func combineCommand() *cli.Command {
	return &cli.Command{
		Name:      "combine",
		Usage:     "one verdict from a fleet: the fixed-size series of one plan run on several machines (warmstat ab --pairs N), combined",
		ArgsUsage: "SERIES SERIES...",
		Description: "Each SERIES is a series directory from one machine, made by warmstat ab --pairs N with the same plan on\n" +
			"every machine: the same builds (their jars' digests, read from the runs), workload, heaps and conditions;\n" +
			"the machines themselves may differ (CPU, cores, memory). Inside a pair both builds ran on one machine side by\n" +
			"side, so every pair measures the same change whatever its machine's speed: the pairs stay inside their\n" +
			"machine, each machine keeps its own noise, and the fleet's change is the mean over all pairs with a\n" +
			"Satterthwaite t-interval. Each machine's own change and interval are shown; whether the change itself\n" +
			"differs between the machines is tested apart (each machine with its own noise) and stated with its p,\n" +
			"never hidden in a wider interval. Verdicts, thresholds and gates as compare.\n\n" +
			"Refuses (exit 3) series of different plans (naming the field, the side and the series), a run found in\n" +
			"two series (a copied series is not another machine), and a series its own comparison refuses; a series\n" +
			"that is unfinished, unpaired or sequential (ab without --pairs stops at its own looks, which would bias the\n" +
			"combined figure) is an input error (exit 1).\n" +
			"Exit codes: 0 combined, 1 bad input, 2 usage error, 3 refused (or a gate not judged with --require-verdict),\n" +
			"4 a gate slower with --fail-on-regression.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Usage: "every collection, not just the dominant one (Product) and the overall rows"},
			&cli.FloatFlag{Name: "threshold", Usage: "noise threshold in % (default: the series' own --threshold)"},
			&cli.StringSliceFlag{Name: "gate", Usage: "COLLECTION/METRIC to judge (repeatable; default: the series' gates)"},
			&cli.BoolFlag{Name: "fail-on-regression", Usage: "exit 4 when a gated metric is slower"},
			&cli.BoolFlag{Name: "require-verdict", Usage: "exit 3 when a gate could not be judged"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text | json | md"},
			&cli.StringFlag{Name: "plot", Usage: "also draw each gate's machines and the combined change into this file (.svg, .png or .pdf)"},
			quantilesFlag(),
		},
		Action: runCombine,
	}
}

func runCombine(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Len() < 2 {
		return usageError(cmd, "combine needs the series of at least 2 machines (got %d)", cmd.Args().Len())
	}
	f, err := report.ParseFormat(cmd.String("format"), report.Text, report.JSON, report.Markdown)
	if err != nil {
		return usageError(cmd, "--format: %v", err)
	}
	q, err := analyze.ParseQuantiles(cmd.String("quantiles"))
	if err != nil {
		return usageError(cmd, "--quantiles: %v", err)
	}
	if p := cmd.String("plot"); p != "" {
		if _, err := report.PlotFormat(p); err != nil {
			return usageError(cmd, "--plot: %v", err)
		}
	}
	fleet, plans, err := readFleet(cmd.Args().Slice())
	if err != nil {
		return err
	}
	plan := plans[0]
	opts := analyze.CompareOptions{ThresholdPct: plan.ThresholdPct, Quantiles: q, Gate: true, Gates: plan.Gates}
	if cmd.IsSet("threshold") {
		opts.ThresholdPct = cmd.Float("threshold")
	}
	if cmd.IsSet("gate") {
		opts.Gates = cmd.StringSlice("gate")
	}
	c, err := analyze.CombineFleet(fleet, opts)
	var ref *analyze.FleetRefusal
	if errors.As(err, &ref) {
		if f == report.JSON {
			if werr := report.WriteJSON(cmd.Root().Writer, report.CombineRefusalJSON(ref, opts)); werr != nil {
				return werr
			}
		}
		return withCode(exitRefused, errors.New(strings.Join(report.CombineRefusalLines(ref), "\n")))
	}
	if err != nil {
		return err
	}
	// what the runs record agrees (above); what only the plans say must agree too
	for i := range plans[1:] {
		if d := planDiffers(plans[0], plans[i+1]); d != "" {
			return withCode(exitRefused, fmt.Errorf("refusing to combine: %s and %s were run with different plans: %s", fleet[0].Name, fleet[i+1].Name, d))
		}
	}
	if err := report.WriteCombine(cmd.Root().Writer, c, report.CompareView{All: cmd.Bool("all"), MoreHint: "with --all"}, f); err != nil {
		return err
	}
	if file := cmd.String("plot"); file != "" {
		p, err := report.CombinePlot(c)
		if err == nil {
			err = report.SaveAs(p, report.PlotSize{W: 900, H: 150 + 40*len(c.Gates)*(len(c.Machines)+1)}, file)
		}
		if err != nil {
			return fmt.Errorf("--plot %s: %w", file, err)
		}
		fmt.Fprintf(cmd.Root().ErrWriter, "plot: %s\n", file)
	}
	var slower, unjudged []string
	for _, g := range c.Gates {
		if g.Regression {
			slower = append(slower, g.Gate)
		}
		if !g.Judged {
			unjudged = append(unjudged, g.Gate+" ("+g.Reason+")")
		}
	}
	switch {
	case len(slower) > 0 && cmd.Bool("fail-on-regression"):
		return withCode(exitRegression, fmt.Errorf("regression: %s slower across the fleet", strings.Join(slower, ", ")))
	case len(unjudged) > 0 && cmd.Bool("require-verdict"):
		return withCode(exitRefused, fmt.Errorf("gates not judged: %s", strings.Join(unjudged, "; ")))
	case len(unjudged) > 0:
		fmt.Fprintf(cmd.Root().ErrWriter, "warmstat: note: gates not judged: %s (--require-verdict makes that fail)\n", strings.Join(unjudged, "; "))
	}
	return nil
}

// readFleet reads every series, each finished, fixed-size and paired, and its plan.
func readFleet(dirs []string) ([]analyze.FleetSeries, []series.Plan, error) {
	var out []analyze.FleetSeries
	var plans []series.Plan
	for _, dir := range dirs {
		st, err := series.Read(dir)
		if err != nil {
			return nil, nil, err
		}
		if st == nil {
			return nil, nil, fmt.Errorf("%s: no %s: not a series directory (warmstat ab --pairs N --out DIR makes one)", dir, series.File)
		}
		p := st.Plan
		switch {
		case p.Pairs == 0:
			return nil, nil, fmt.Errorf("%s: a sequential series (it stops at its own looks, which would bias a combined figure): a fleet's series are fixed-size, warmstat ab --pairs N", dir)
		case st.Outcome == nil || st.Outcome.Reason != "fixed-size":
			done := len(st.Pairs(dir))
			why := "unfinished"
			if st.Outcome != nil {
				why = st.Outcome.Reason + ": " + st.Outcome.Detail
			}
			return nil, nil, fmt.Errorf("%s: %s, %d of %d pairs: run its warmstat ab command again to finish it", dir, why, done, p.Pairs)
		}
		plans = append(plans, p)
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

// planDiffers names the first plan field that differs between two machines' series,
// "" when none does. Where each machine keeps its snapshot, and how its builds were
// typed, may differ; what the builds are, the heaps and the conditions the runs
// record are compared before, run by run (analyze.CombineFleet).
func planDiffers(p, q series.Plan) string {
	p.Pristine, q.Pristine, p.Workload, q.Workload = "", "", "", ""
	p.A.Spec, p.B.Spec, q.A.Spec, q.B.Spec = "", "", "", ""
	a, b := reflect.ValueOf(p), reflect.ValueOf(q)
	for i := range a.NumField() {
		if !reflect.DeepEqual(a.Field(i).Interface(), b.Field(i).Interface()) {
			return fmt.Sprintf("%s %v against %v", a.Type().Field(i).Tag.Get("json"), a.Field(i).Interface(), b.Field(i).Interface())
		}
	}
	return ""
}
