package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/series"
)

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:        "compare",
		Usage:       "did build B make publishing faster or slower than build A? (runs as the unit, honest verdicts)",
		ArgsUsage:   "A B",
		Description: help("compare"),
		Flags: append(comparisonFlags(),
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text | json | md"},
			&cli.BoolFlag{Name: "fail-on-regression", Usage: "exit 4 when a gated metric is slower"},
			&cli.StringSliceFlag{Name: "gate", Usage: "COLLECTION/METRIC to judge (repeatable; default: the dominant collection's mean and */ingest)"},
			&cli.BoolFlag{Name: "require-verdict", Usage: "exit 3 when a gate could not be judged (no interval: too few runs)"},
		),
		Action: runCompare,
	}
}

// comparisonFlags are shared by compare and plot --kind compare.
func comparisonFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "all", Usage: "every collection, not just the dominant one (Product) and the overall rows"},
		&cli.FloatFlag{Name: "threshold", Value: 2, Usage: "noise threshold in % (0 up to, not including, 100): a verdict needs the whole interval beyond ±threshold"},
		&cli.StringFlag{Name: "method", Value: "welch-t", Usage: "welch-t | paired-t (a series' sides: its recorded pairs, their default; other groups: runs paired by start time) | two-stage-bootstrap | cluster-bootstrap"},
		&cli.IntFlag{Name: "resamples", Value: 10000, Usage: "bootstrap resamples (100 to 1,000,000)"},
		&cli.IntFlag{Name: "seed", Value: 1, Usage: "bootstrap seed"},
		&cli.StringSliceFlag{Name: "allow-mismatch", Usage: "compare despite this differing condition (repeatable); output is stamped NOT COMPARABLE"},
		&cli.BoolFlag{Name: "include-unverified", Usage: "use unverified runs (exit 2) instead of excluding them; the result is labelled"},
		quantilesFlag(),
	}
}

func runCompare(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Len() != 2 {
		return usageError(cmd, "compare needs two arguments, A and B (got %d)", cmd.Args().Len())
	}
	f, err := report.ParseFormat(cmd.String("format"), report.Text, report.JSON, report.Markdown)
	if err != nil {
		return usageError(cmd, "--format: %v", err)
	}
	groups, opts, err := loadComparison(cmd, cmd.Args().Get(0), cmd.Args().Get(1), f)
	if err != nil {
		return err
	}
	out := cmd.Root().Writer
	// one build, remote against embedded: the transport, measured
	if analyze.MeasuresTransport(groups[0], groups[1], opts) {
		if cmd.IsSet("gate") || cmd.Bool("fail-on-regression") || cmd.Bool("require-verdict") {
			return usageError(cmd, "A and B are one build in two target modes: that measures the transport, not a build (no gates)")
		}
		t, err := analyze.Transport(groups[0], groups[1], opts)
		if err != nil {
			return report.Refused(cmd.Root().Writer, f, err, opts, groups)
		}
		return report.WriteTransport(out, t, f)
	}
	c, err := analyze.Compare(groups[0], groups[1], opts)
	if err != nil {
		return report.Refused(cmd.Root().Writer, f, err, opts, groups)
	}
	if err := report.WriteCompare(out, c, report.CompareView{All: cmd.Bool("all"), MoreHint: "with --all"}, f); err != nil {
		return err
	}
	return gatesOutcome(cmd, c.Gates, "")
}

// gatesOutcome is the exit of a judgement's gates (compare, combine): 4 for a gate
// slower with --fail-on-regression, 3 for a gate not judged with --require-verdict; an
// unjudged gate is noted on stderr otherwise. where says what was judged ("" or
// " across the fleet").
func gatesOutcome(cmd *cli.Command, gates []analyze.GateResult, where string) error {
	slower, unjudged := analyze.GateFailures(gates)
	switch {
	case len(slower) > 0 && cmd.Bool("fail-on-regression"):
		return withCode(exitRegression, fmt.Errorf("regression: %s slower%s", strings.Join(slower, ", "), where))
	case len(unjudged) > 0 && cmd.Bool("require-verdict"):
		return withCode(exitRefused, fmt.Errorf("gates not judged: %s", strings.Join(unjudged, "; ")))
	case len(unjudged) > 0:
		fmt.Fprintf(cmd.Root().ErrWriter, "warmstat: note: gates not judged: %s (--require-verdict makes that fail)\n", strings.Join(unjudged, "; "))
	}
	return nil
}

// buildComparison loads both groups and compares them. A refusal prints, for JSON, a
// refusal document on stdout and returns the *analyze.Refusal (exit 3).
func buildComparison(cmd *cli.Command, pathA, pathB string, f report.Format) (*analyze.Comparison, error) {
	groups, opts, err := loadComparison(cmd, pathA, pathB, f)
	if err != nil {
		return nil, err
	}
	c, err := analyze.Compare(groups[0], groups[1], opts)
	if err != nil {
		return nil, report.Refused(cmd.Root().Writer, f, err, opts, groups)
	}
	return c, nil
}

// loadComparison reads the options and loads both groups.
func loadComparison(cmd *cli.Command, pathA, pathB string, f report.Format) ([]*analyze.Group, analyze.CompareOptions, error) {
	q, err := analyze.ParseQuantiles(cmd.String("quantiles"))
	if err != nil {
		return nil, analyze.CompareOptions{}, usageError(cmd, "--quantiles: %v", err)
	}
	method, err := analyze.ParseMethod(cmd.String("method"))
	if err != nil {
		return nil, analyze.CompareOptions{}, usageError(cmd, "--method: %v", err)
	}
	gate := cmd.Bool("fail-on-regression") || cmd.Bool("require-verdict") || cmd.IsSet("gate")
	opts := analyze.CompareOptions{ThresholdPct: cmd.Float("threshold"), Method: method, Resamples: cmd.Int("resamples"),
		Seed: uint64(cmd.Int("seed")), Quantiles: q, AllowMismatch: cmd.StringSlice("allow-mismatch"), Gate: gate, Gates: cmd.StringSlice("gate")}
	if opts.Resamples == 0 { // to analyze, 0 means its default; a user who typed 0 meant 0
		return nil, opts, usageError(cmd, "--resamples 0: bootstrap resamples must be from 100 to 1,000,000")
	}
	load := analyze.LoadOptions{IncludeUnverified: cmd.Bool("include-unverified")}
	groups, err := series.LoadSides(pathA, pathB, load, &opts, cmd.IsSet("method"))
	for _, g := range groups { // a run left out as unverified: the flag that uses it
		if g == nil {
			continue
		}
		for k, e := range g.Excluded {
			if strings.HasPrefix(e.Reason, "unverified") {
				g.Excluded[k].Reason += " (--include-unverified uses it)"
			}
		}
	}
	// a series' sides are judged by the pairs it ran, unless --method says otherwise
	var unpaired *series.UnpairedError
	if errors.As(err, &unpaired) {
		return nil, opts, usageError(cmd, "--method %s: %v", analyze.Paired, unpaired.Err)
	}
	if err != nil {
		return nil, opts, report.Refused(cmd.Root().Writer, f, err, opts, groups)
	}
	return groups, opts, nil
}
