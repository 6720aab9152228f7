package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/runfmt"
	"gonum.org/v1/plot"
)

func plotCommand() *cli.Command {
	return &cli.Command{
		Name:      "plot",
		Usage:     "pictures of latency: distribution (cdf), latency over the load (timeline), change with intervals (compare)",
		ArgsUsage: "RUN_OR_GROUP... (compare: A B)",
		Description: "--kind cdf: per-run CDF of one collection's upsert latency on a log axis, p50/p95/p99 marked.\n" +
			"--kind timeline: median and p99 of consecutive blocks of upserts against position in the load.\n" +
			"--kind compare: every metric's change B vs A with its 95 % interval and the noise-threshold band\n" +
			"(same contract and refusals as warmstat compare). The file extension picks SVG, PNG or PDF.",
		Flags: append(comparisonFlags(),
			&cli.StringFlag{Name: "out", Required: true, Usage: "output file: .svg, .png or .pdf"},
			&cli.StringFlag{Name: "kind", Value: "cdf", Usage: "cdf | timeline | compare"},
			&cli.StringFlag{Name: "collection", Usage: "collection to plot (default Product if present, else all collections: *)"},
			&cli.IntFlag{Name: "block", Usage: "timeline: upserts per block (default: ~200 blocks per run)"},
			&cli.IntFlag{Name: "width", Value: 960, Usage: "width in pixels"},
			&cli.IntFlag{Name: "height", Value: 600, Usage: "height in pixels"},
			&cli.BoolFlag{Name: "include-failed", Usage: "plot failed runs (exit 1) too"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			size := report.PlotSize{W: cmd.Int("width"), H: cmd.Int("height")}
			if size.W < 200 || size.H < 150 {
				return fmt.Errorf("--width/--height too small (min 200x150)")
			}
			out := cmd.String("out")
			var p *plot.Plot
			var err error
			switch cmd.String("kind") {
			case "compare":
				if cmd.Args().Len() != 2 {
					return fmt.Errorf("plot --kind compare needs two arguments: A B")
				}
				c, _, err := buildComparison(cmd, cmd.Args().Get(0), cmd.Args().Get(1), report.Text)
				if err != nil {
					return err
				}
				if p, err = report.ComparePlot(c, cmd.Bool("all")); err != nil {
					return err
				}
			case "cdf", "timeline":
				var runs []*runfmt.Run
				for _, arg := range cmd.Args().Slice() {
					rs, err := openRunDirs(arg, cmd.Bool("include-failed"))
					if err != nil {
						return err
					}
					runs = append(runs, rs...)
				}
				if len(runs) == 0 {
					return fmt.Errorf("plot needs at least one RUN or GROUP directory")
				}
				coll := cmd.String("collection")
				if coll == "" {
					coll = analyze.Overall
					for _, c := range runs[0].Manifest.Collections {
						if c.Name == "Product" {
							coll = "Product"
						}
					}
				}
				if cmd.String("kind") == "cdf" {
					p, err = report.CDFPlot(runs, coll)
				} else {
					p, err = report.TimelinePlot(runs, coll, cmd.Int("block"))
				}
				if err != nil {
					return err
				}
			default:
				return fmt.Errorf("unknown --kind %q (use cdf, timeline or compare)", cmd.String("kind"))
			}
			if err := report.SaveAs(p, size, out); err != nil {
				return err
			}
			fmt.Fprintf(cmd.Root().Writer, "wrote %s (%dx%d)\n", out, size.W, size.H)
			return nil
		},
	}
}

// openRunDirs opens a run directory, or every run directory inside path; failed runs
// (exit 1) are refused unless includeFailed.
func openRunDirs(path string, includeFailed bool) ([]*runfmt.Run, error) {
	dirs, _, err := runfmt.RunDirs(path)
	if err != nil {
		return nil, err
	}
	var out []*runfmt.Run
	for _, d := range dirs {
		run, err := runfmt.Open(d)
		if err != nil {
			return nil, err
		}
		if run.Manifest.ExitCode == 1 && !includeFailed {
			return nil, fmt.Errorf("%s failed (verification %s, outcome %s, exit 1): refused; --include-failed shows it",
				d, run.Manifest.Verification.Status, run.Manifest.Outcome.Status)
		}
		out = append(out, run)
	}
	return out, nil
}
