package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/runfmt"
)

const quantilesHelp = `percentile and mean definition: "java" (default) = the Java harness's: sorted sample at ` +
	`0-based index min(n-1, floor(p*n/100)), no interpolation, mean truncated to whole ns - an imported harness ` +
	`run reproduces its printed figures exactly; "linear" = interpolated (type 7, numpy default), exact mean`

func quantilesFlag() cli.Flag {
	return &cli.StringFlag{Name: "quantiles", Value: string(analyze.QuantilesJava), Usage: quantilesHelp}
}

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:        "report",
		Usage:       "latency statistics and clocks of one run: load, upsert, source read, ingest, goLive apart",
		ArgsUsage:   "RUN",
		Description: help("report"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text | json | md"},
			quantilesFlag(),
			&cli.StringFlag{Name: "transport", Usage: "EMBEDDED_RUN (a run or a group of runs, load --target-mode embedded, of the same workload and build): † marks the collections whose remote latency is mostly the transport, as measured, not by the 1,000 µs rule"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usageError(cmd, "report needs exactly one RUN directory (got %d arguments)", cmd.Args().Len())
			}
			f, err := report.ParseFormat(cmd.String("format"), report.Text, report.JSON, report.Markdown)
			if err != nil {
				return usageError(cmd, "--format: %v", err)
			}
			q, err := analyze.ParseQuantiles(cmd.String("quantiles"))
			if err != nil {
				return usageError(cmd, "--quantiles: %v", err)
			}
			run, err := runfmt.Open(cmd.Args().First())
			if err != nil {
				return err
			}
			s, err := analyze.Summarize(run, q)
			if err != nil {
				return err
			}
			var o report.RunOptions
			if p := cmd.String("transport"); p != "" {
				if o, err = transportOptions(run, p, q); err != nil {
					return err
				}
			}
			return report.WriteRunWith(cmd.Root().Writer, s, f, o)
		},
	}
}

// transportOptions measures the transport's share of each collection of a remote run
// (report.TransportOptions), its errors naming the flag and the embedded runs.
func transportOptions(run *runfmt.Run, embeddedPath string, q analyze.Quantiles) (report.RunOptions, error) {
	o, err := report.TransportOptions(run, embeddedPath, q)
	var pair *report.TransportPairError
	switch {
	case errors.As(err, &pair):
		return o, fmt.Errorf("--transport %s: %w", embeddedPath, pair.Err)
	case errors.Is(err, report.ErrNotEmbedded):
		return o, fmt.Errorf("--transport: the runs in %s are not all embedded (load --target-mode embedded)", embeddedPath)
	case err != nil:
		return o, fmt.Errorf("--transport: %w", err)
	}
	return o, nil
}
