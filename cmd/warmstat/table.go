package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/report"
)

func tableCommand() *cli.Command {
	return &cli.Command{
		Name:      "table",
		Usage:     "the reference table for docs and PRs: one row per run (or per group with --group)",
		ArgsUsage: "RUN_OR_GROUP...",
		Description: "Every cell is a figure the run recorded; what a run did not record is an empty cell (—).\n" +
			"A failed goLive shows \"failed @ T\" with its error in a footnote and no TOTAL. Unverified runs carry a\n" +
			"footnote mark; failed runs (exit 1) are refused unless --include-failed, then marked. Conditions equal\n" +
			"across rows go into the caption; conditions that differ get their own column.\n" +
			"Columns: " + report.ColumnHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "md", Usage: "md | text | csv | json"},
			&cli.StringFlag{Name: "columns", Usage: "comma-separated columns (default " + strings.Join(report.DefaultColumns, ",") + ")"},
			&cli.BoolFlag{Name: "group", Usage: "one row per argument (a directory of runs of one build): mean ± 95 % interval"},
			&cli.BoolFlag{Name: "include-failed", Usage: "show failed runs (exit 1), marked"},
			quantilesFlag(),
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() == 0 {
				return fmt.Errorf("table needs at least one RUN or GROUP directory")
			}
			f, err := report.ParseFormat(cmd.String("format"), report.Markdown, report.Text, report.CSV, report.JSON)
			if err != nil {
				return err
			}
			q, err := analyze.ParseQuantiles(cmd.String("quantiles"))
			if err != nil {
				return err
			}
			var keys []string
			if c := cmd.String("columns"); c != "" {
				keys = strings.Split(c, ",")
			}
			var entries []report.TableEntry
			for _, arg := range cmd.Args().Slice() {
				runs, err := openRuns(arg, cmd.Bool("include-failed"), q)
				if err != nil {
					return err
				}
				if cmd.Bool("group") {
					entries = append(entries, report.TableEntry{Label: arg, Runs: runs})
					continue
				}
				for _, r := range runs {
					entries = append(entries, report.TableEntry{Label: r.Run.Dir, Runs: []*analyze.RunSummary{r}})
				}
			}
			t, err := report.BuildTable(entries, keys, cmd.Bool("group"))
			if err != nil {
				return err
			}
			return report.WriteTable(cmd.Root().Writer, t, f)
		},
	}
}

// openRuns opens and summarizes a run directory or every run inside path.
func openRuns(path string, includeFailed bool, q analyze.Quantiles) ([]*analyze.RunSummary, error) {
	runs, err := openRunDirs(path, includeFailed)
	if err != nil {
		return nil, err
	}
	var out []*analyze.RunSummary
	for _, run := range runs {
		s, err := analyze.Summarize(run, q)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}
