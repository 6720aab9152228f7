package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/series"
)

func combineCommand() *cli.Command {
	return &cli.Command{
		Name:        "combine",
		Usage:       "one verdict from a fleet: the fixed-size series of one plan run on several machines (warmstat ab --pairs N), combined",
		ArgsUsage:   "SERIES SERIES...",
		Description: help("combine"),
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
	o := series.FleetOptions{}
	if o.Quantiles, err = analyze.ParseQuantiles(cmd.String("quantiles")); err != nil {
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
	if cmd.IsSet("threshold") {
		t := cmd.Float("threshold")
		o.ThresholdPct = &t
	}
	if cmd.IsSet("gate") {
		o.Gates = cmd.StringSlice("gate")
	}
	c, opts, err := series.CombineFleet(cmd.Args().Slice(), o)
	if err != nil {
		return combineError(cmd, f, err, opts)
	}
	if err := report.WriteCombine(cmd.Root().Writer, c, report.CompareView{All: cmd.Bool("all"), MoreHint: "with --all"}, f); err != nil {
		return err
	}
	if file := cmd.String("plot"); file != "" {
		p, err := report.CombinePlot(c)
		if err == nil {
			err = report.SaveAs(p, report.CombinePlotSize(c), file)
		}
		if err != nil {
			return fmt.Errorf("--plot %s: %w", file, err)
		}
		fmt.Fprintf(cmd.Root().ErrWriter, "plot: %s\n", file)
	}
	return gatesOutcome(cmd, c.Gates, " across the fleet")
}

// fleetHints say how the series a fleet needs is made (the package names no flags).
var fleetHints = map[series.FleetProblem]string{
	series.NotADirectory: " (the --out of its warmstat ab)",
	series.NotASeries:    " (warmstat ab --pairs N --out DIR makes one)",
	series.Sequential:    ", warmstat ab --pairs N",
}

// combineError maps what series.CombineFleet refused to exit codes: a refusal exits 3
// (in JSON also a document on stdout), a series given twice is a usage error, a
// directory that is no finished fixed-size series bad input.
func combineError(cmd *cli.Command, f report.Format, err error, opts analyze.CompareOptions) error {
	var ref *analyze.FleetRefusal
	var twice *series.TwiceError
	var bad *series.FleetSeriesError
	switch {
	case errors.As(err, &ref):
		if f == report.JSON {
			if werr := report.WriteJSON(cmd.Root().Writer, report.CombineRefusalJSON(ref, opts)); werr != nil {
				return werr
			}
		}
		return withCode(exitRefused, errors.New(strings.Join(report.CombineRefusalLines(ref), "\n")))
	case errors.As(err, &twice):
		return withCode(exitUsage, err)
	case errors.As(err, &bad):
		return fmt.Errorf("%w%s", err, fleetHints[bad.Problem])
	}
	return err
}
