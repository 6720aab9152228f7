package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/report"
	"gonum.org/v1/plot"
)

func plotCommand() *cli.Command {
	return &cli.Command{
		Name:        "plot",
		Usage:       "pictures of latency: distribution (cdf), latency over the load (timeline), change with intervals (compare)",
		ArgsUsage:   "RUN_OR_GROUP... (compare: A B)",
		Description: help("plot"),
		Flags: append(comparisonFlags(),
			&cli.StringFlag{Name: "out", Required: true, Usage: "output file: .svg, .png or .pdf"},
			&cli.StringFlag{Name: "kind", Value: "cdf", Usage: "cdf | timeline | compare"},
			&cli.StringFlag{Name: "collection", Usage: "collection to plot (default: the dominant one, Product if present, else the one with the most entities; * = all collections)"},
			&cli.IntFlag{Name: "block", Usage: "timeline: upserts per block (default 0: ~200 blocks per run)"},
			&cli.IntFlag{Name: "width", Value: 960, Usage: "width in pixels"},
			&cli.IntFlag{Name: "height", Value: 600, Usage: "height in pixels"},
			&cli.BoolFlag{Name: "include-failed", Usage: "plot failed runs (exit 1) too"},
		),
		Action: runPlot,
	}
}

func runPlot(ctx context.Context, cmd *cli.Command) error {
	size := report.PlotSize{W: cmd.Int("width"), H: cmd.Int("height")}
	if err := size.Check(); err != nil {
		return usageError(cmd, "--width/--height: %v", err)
	}
	out := cmd.String("out")
	if _, err := report.PlotFormat(out); err != nil {
		return usageError(cmd, "--out: %v", err)
	}
	if cmd.Int("block") < 0 {
		return usageError(cmd, "--block %d: upserts per block must be positive (0 = about 200 blocks)", cmd.Int("block"))
	}
	q, err := analyze.ParseQuantiles(cmd.String("quantiles"))
	if err != nil {
		return usageError(cmd, "--quantiles: %v", err)
	}
	var p *plot.Plot
	w := cmd.Root().Writer
	switch kind := cmd.String("kind"); kind {
	case "compare":
		if cmd.Args().Len() != 2 {
			return usageError(cmd, "plot --kind compare needs two arguments, A and B (got %d)", cmd.Args().Len())
		}
		c, err := buildComparison(cmd, cmd.Args().Get(0), cmd.Args().Get(1), report.Text)
		if err != nil {
			return err
		}
		if p, err = report.ComparisonPlot(w, c, cmd.Bool("all")); err != nil {
			return err
		}
	case "cdf", "timeline":
		// the comparison's flags mean nothing to a picture of runs: refused, not ignored
		for _, f := range []string{"all", "threshold", "method", "resamples", "seed", "allow-mismatch", "include-unverified"} {
			if cmd.IsSet(f) {
				return usageError(cmd, "--%s applies to --kind compare, not %s", f, kind)
			}
		}
		if cmd.Args().Len() == 0 {
			return usageError(cmd, "plot needs at least one RUN or GROUP directory")
		}
		groups, err := openGroups(cmd)
		if err != nil {
			return err
		}
		if p, err = report.RunsPlot(w, kind == "timeline", groups, cmd.String("collection"), q, cmd.Int("block")); err != nil {
			return err
		}
	default:
		return usageError(cmd, "--kind %q: use cdf, timeline or compare", kind)
	}
	if err := report.SaveAs(p, size, out); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s (%dx%d)\n", out, size.W, size.H)
	return nil
}
