package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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
			"4 a gate slower with --fail-on-regression." +
			examples("warmstat combine series/m1 series/m2 series/m3",
				"warmstat combine --format md series/m1 series/m2 series/m3"),
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Usage: "every collection, not just the dominant one (Product) and the overall rows"},
			&cli.FloatFlag{Name: "threshold", Usage: "noise threshold in %", DefaultText: "the series' own --threshold"},
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
		// a plot that cannot be written is said before the verdict, not after it
		if fi, err := os.Stat(filepath.Dir(p)); err != nil || !fi.IsDir() {
			return usageError(cmd, "--plot %s: its directory %s does not exist", p, filepath.Dir(p))
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
	if !errors.As(err, &ref) && err != nil {
		return err
	}
	// what the runs record agrees (CombineFleet); what only the plans say must agree too
	if ms := planMismatches(fleet, plans); len(ms) > 0 {
		if ref == nil {
			ref = &analyze.FleetRefusal{}
		}
		ref.Mismatches = append(ref.Mismatches, ms...)
	}
	if ref != nil {
		if f == report.JSON {
			if werr := report.WriteJSON(cmd.Root().Writer, report.CombineRefusalJSON(ref, opts)); werr != nil {
				return werr
			}
		}
		return withCode(exitRefused, errors.New(strings.Join(report.CombineRefusalLines(ref), "\n")))
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
	return gatesOutcome(cmd, c.Gates, " across the fleet")
}

// readFleet reads every series, each finished, fixed-size and paired, and its plan.
func readFleet(dirs []string) ([]analyze.FleetSeries, []series.Plan, error) {
	var out []analyze.FleetSeries
	var plans []series.Plan
	seen := map[string]string{}
	for _, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, nil, err
		}
		if first, ok := seen[abs]; ok {
			return nil, nil, withCode(exitUsage, fmt.Errorf("%s is given twice (as %s and %s): each machine's series once", abs, first, dir))
		}
		seen[abs] = dir
		if st, err := os.Stat(dir); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", dir, errors.Unwrap(err))
		} else if !st.IsDir() {
			return nil, nil, fmt.Errorf("%s: not a directory: give the series' directory (the --out of its warmstat ab)", dir)
		}
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

// planMismatches are the plan settings that differ between the machines' series, each
// with the series that carry each value. Where each machine keeps its snapshot or its
// workload file, and how its builds were typed, may differ; what the builds are, the
// heaps and the conditions the runs record are compared run by run (CombineFleet);
// --min-runs and --max-runs are --pairs in a fixed-size series.
func planMismatches(fleet []analyze.FleetSeries, plans []series.Plan) []analyze.FleetMismatch {
	skip := map[string]bool{"pristine": true, "workload": true, "min_runs": true, "max_runs": true}
	var out []analyze.FleetMismatch
	typ := reflect.TypeOf(series.Plan{})
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
