package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/runfmt"
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
			"--group: one row per argument; time cells are the geometric mean across its runs with the 95 %\n" +
			"interval [low, high] on the log scale, the same figures compare computes for that group.\n" +
			"--format csv: one number per cell, units in the header, a group's interval ends in columns of their own.\n" +
			"Columns: " + report.ColumnHelp + "\n" +
			"Exit codes: 0 ok, 1 bad input or a failed run, 2 usage error, 3 a run counted twice (within or across arguments)." +
			examples("warmstat table --group runs/v2026.2.2 runs/v2026.2.3"),
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
			groups, err := openGroups(cmd, cmd.Bool("include-failed"))
			if err != nil {
				return err
			}
			var entries []report.TableEntry
			for i, arg := range cmd.Args().Slice() {
				g := groups[i]
				var runs []*analyze.RunSummary
				for _, run := range g.Runs {
					s, err := analyze.Summarize(run, q)
					if err != nil {
						return err
					}
					runs = append(runs, s)
				}
				if cmd.Bool("group") {
					entries = append(entries, report.TableEntry{Label: arg, Runs: runs, Group: true, Excluded: g.Excluded})
					continue
				}
				for _, r := range runs {
					entries = append(entries, report.TableEntry{Label: r.Run.Dir, Runs: []*analyze.RunSummary{r}})
				}
				// what the directory held that is no run: under the table, on no run's row
				entries = append(entries, report.TableEntry{Label: arg, Excluded: g.Excluded})
			}
			t, err := report.BuildTable(entries, keys)
			if err != nil {
				return usageError(cmd, "--columns: %v", err)
			}
			return report.WriteTable(cmd.Root().Writer, t, f)
		},
	}
}

// openGroup opens a run directory or a directory of runs for a table or plot: every
// run, unverified ones marked by the presentation, failed ones (exit 1) only when
// asked for. A run counted twice is a refusal.
func openGroup(path string, includeFailed bool) (*analyze.Group, error) {
	g, err := analyze.LoadGroup(path, path, analyze.LoadOptions{IncludeUnverified: true, IncludeFailed: true})
	if err != nil {
		return nil, err
	}
	for _, r := range g.Runs {
		if m := r.Manifest; m.ExitCode == 1 && !includeFailed {
			return nil, fmt.Errorf("%s failed (verification %s, outcome %s, exit 1): refused; --include-failed shows it, marked",
				r.Dir, m.Verification.Status, m.Outcome.Status)
		}
	}
	return g, nil
}

// openGroups opens every argument, in argument order; a run given twice across them is
// a refusal (exit 3).
func openGroups(cmd *cli.Command, includeFailed bool) ([]*analyze.Group, error) {
	var groups []*analyze.Group
	for _, arg := range cmd.Args().Slice() {
		g, err := openGroup(arg, includeFailed)
		if err != nil {
			return nil, err
		}
		groups = append(groups, g)
	}
	if err := analyze.RefuseDuplicates(groups...); err != nil {
		return nil, err
	}
	return groups, nil
}

// runsOf opens every argument's runs, in argument order.
func runsOf(cmd *cli.Command, includeFailed bool) ([]*runfmt.Run, []analyze.RunNote, error) {
	groups, err := openGroups(cmd, includeFailed)
	if err != nil {
		return nil, nil, err
	}
	var runs []*runfmt.Run
	var left []analyze.RunNote
	for _, g := range groups {
		runs = append(runs, g.Runs...)
		left = append(left, g.Excluded...)
	}
	return runs, left, nil
}
