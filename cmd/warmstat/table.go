package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/report"
)

func tableCommand() *cli.Command {
	return &cli.Command{
		Name:        "table",
		Usage:       "the reference table for docs and PRs: one row per run (or per group with --group)",
		ArgsUsage:   "RUN_OR_GROUP...",
		Description: help("table"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "md", Usage: "md | text | csv | json"},
			&cli.StringFlag{Name: "columns", Usage: "comma-separated columns (default " + strings.Join(report.DefaultColumns, ",") + ")"},
			&cli.BoolFlag{Name: "group", Usage: "one row per argument (a directory of runs of one build): geometric mean [95 % interval]"},
			&cli.BoolFlag{Name: "include-failed", Usage: "show failed runs (exit 1), marked"},
			quantilesFlag(),
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() == 0 {
				return usageError(cmd, "table needs at least one RUN or GROUP directory")
			}
			f, err := report.ParseFormat(cmd.String("format"), report.Markdown, report.Text, report.CSV, report.JSON)
			if err != nil {
				return usageError(cmd, "--format: %v", err)
			}
			q, err := analyze.ParseQuantiles(cmd.String("quantiles"))
			if err != nil {
				return usageError(cmd, "--quantiles: %v", err)
			}
			var keys []string
			if c := cmd.String("columns"); c != "" {
				keys = strings.Split(c, ",")
			}
			groups, err := openGroups(cmd)
			if err != nil {
				return err
			}
			entries, err := report.TableEntries(cmd.Args().Slice(), groups, q, cmd.Bool("group"))
			if err != nil {
				return err
			}
			t, err := report.BuildTable(entries, keys)
			if err != nil {
				return usageError(cmd, "--columns: %v", err)
			}
			return report.WriteTable(cmd.Root().Writer, t, f)
		},
	}
}

// openGroups loads every argument to be shown (analyze.LoadShown), in argument order,
// naming the flag that shows a failed run.
func openGroups(cmd *cli.Command) ([]*analyze.Group, error) {
	groups, err := analyze.LoadShown(cmd.Args().Slice(), cmd.Bool("include-failed"))
	var failed *analyze.FailedRunError
	if errors.As(err, &failed) {
		return nil, fmt.Errorf("%v; --include-failed shows it, marked", failed)
	}
	return groups, err
}
