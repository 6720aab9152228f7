package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/report"
)

// Exit codes of compare.
const (
	exitRefused    = 3
	exitRegression = 4
)

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:      "compare",
		Usage:     "did build B make publishing faster or slower than build A? (runs as the unit, honest verdicts)",
		ArgsUsage: "A B",
		Description: "A and B are each a run directory or a directory of run directories (one build, repeated runs).\n" +
			"For every metric it prints A, B (geometric means across runs), the change, a 95 % interval of the\n" +
			"change and a verdict: faster / slower only when the whole interval clears the noise threshold,\n" +
			"unresolved otherwise, insufficient with fewer than 2 runs on a side.\n\n" +
			"Intervals treat the run as the unit of replication. --method welch-t (default) is a Welch t-interval\n" +
			"on per-run log statistics: measured calibrated at 2-5 runs per build. two-stage-bootstrap (runs, then\n" +
			"samples inside runs) and cluster-bootstrap (runs only) are available for study; both are\n" +
			"anti-conservative below ~10 runs. --resamples and --seed make bootstrap output reproducible.\n\n" +
			"Refuses (exit 3, no comparison printed) when a recorded condition differs between or within groups:\n" +
			"  " + strings.Join(analyze.ContractFieldNames(), ", ") + "\n" +
			"(the build is expected to differ between A and B, and the server version with it, never within a group).\n" +
			"Exit codes: 0 compared, 1 bad input, 3 refused as incomparable, 4 regression with --fail-on-regression.",
		Flags: append(comparisonFlags(),
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text | json | md"},
			&cli.BoolFlag{Name: "fail-on-regression", Usage: "exit 4 when a gated metric is slower"},
			&cli.StringSliceFlag{Name: "gate", Usage: "COLLECTION/METRIC gated by --fail-on-regression (default: the dominant collection's mean and */ingest)"},
		),
		Action: runCompare,
	}
}

// comparisonFlags are shared by compare and plot --kind compare.
func comparisonFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "all", Usage: "every collection, not just the dominant one (Product) and the overall rows"},
		&cli.FloatFlag{Name: "threshold", Value: 2, Usage: "noise threshold in %: a verdict needs the whole interval beyond ±threshold"},
		&cli.StringFlag{Name: "method", Value: string(analyze.MethodWelchT), Usage: "welch-t | two-stage-bootstrap | cluster-bootstrap"},
		&cli.IntFlag{Name: "resamples", Value: 10000, Usage: "bootstrap resamples"},
		&cli.IntFlag{Name: "seed", Value: 1, Usage: "bootstrap seed"},
		&cli.StringSliceFlag{Name: "allow-mismatch", Usage: "compare despite this differing condition (repeatable); output is stamped NOT COMPARABLE"},
		&cli.BoolFlag{Name: "include-unverified", Usage: "use unverified runs (exit 2) instead of excluding them; the result is labelled"},
		quantilesFlag(),
	}
}

func runCompare(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Len() != 2 {
		return fmt.Errorf("compare needs two arguments: A B")
	}
	f, err := report.ParseFormat(cmd.String("format"), report.Text, report.JSON, report.Markdown)
	if err != nil {
		return err
	}
	gates := cmd.StringSlice("gate")
	for _, g := range gates {
		if _, _, ok := parseGate(g); !ok {
			return fmt.Errorf("--gate %q: want COLLECTION/METRIC, e.g. Product/mean or */ingest", g)
		}
	}
	c, view, err := buildComparison(cmd, cmd.Args().Get(0), cmd.Args().Get(1), f)
	if err != nil {
		return err
	}
	if err := report.WriteCompare(cmd.Root().Writer, c, view, f); err != nil {
		return err
	}
	if cmd.Bool("fail-on-regression") {
		if len(gates) == 0 {
			gates = []string{c.Dominant + "/mean", "*/ingest"}
		}
		var slower []string
		for _, g := range gates {
			coll, metric, _ := parseGate(g)
			for _, r := range c.Rows {
				if r.Collection == coll && string(r.Metric) == metric && r.Verdict == analyze.Slower {
					slower = append(slower, g)
				}
			}
		}
		if len(slower) > 0 {
			return withCode(exitRegression, fmt.Errorf("regression: %s slower", strings.Join(slower, ", ")))
		}
	}
	return nil
}

// buildComparison loads both groups, enforces the comparability contract (a refusal
// returns exit 3 and, for JSON, a refusal document on stdout) and compares.
func buildComparison(cmd *cli.Command, pathA, pathB string, f report.Format) (*analyze.Comparison, report.CompareView, error) {
	var none report.CompareView
	q, err := analyze.ParseQuantiles(cmd.String("quantiles"))
	if err != nil {
		return nil, none, err
	}
	method, err := analyze.ParseMethod(cmd.String("method"))
	if err != nil {
		return nil, none, err
	}
	if cmd.Float("threshold") < 0 || cmd.Int("resamples") < 100 {
		return nil, none, fmt.Errorf("--threshold must be >= 0 and --resamples >= 100")
	}
	allowed := cmd.StringSlice("allow-mismatch")
	for _, a := range allowed {
		if !slices.Contains(analyze.ContractFieldNames(), a) || a == "build" {
			return nil, none, fmt.Errorf("--allow-mismatch %q: not a contract field (one of %s; the build cannot be mixed within a group)",
				a, strings.Join(analyze.ContractFieldNames()[1:], ", "))
		}
	}
	incl := cmd.Bool("include-unverified")
	a, err := analyze.LoadGroup("A", pathA, incl)
	if err != nil {
		return nil, none, err
	}
	b, err := analyze.LoadGroup("B", pathB, incl)
	if err != nil {
		return nil, none, err
	}
	mismatches := analyze.CheckContract(a, b)
	var refused []analyze.Mismatch
	var used []string
	for _, m := range mismatches {
		if m.Field == "build" || !slices.Contains(allowed, m.Field) {
			refused = append(refused, m)
		} else if !slices.Contains(used, m.Field) {
			used = append(used, m.Field)
		}
	}
	out := cmd.Root().Writer
	if len(refused) > 0 {
		lines := []string{"refusing to compare: conditions that change the measurement differ"}
		for _, m := range refused {
			lines = append(lines, "  "+m.String())
		}
		lines = append(lines, "  (--allow-mismatch FIELD compares anyway, stamped NOT COMPARABLE; a build cannot be mixed within a group)")
		if f == report.JSON {
			j := report.CompareJSON{Schema: report.CompareSchema, Comparable: false, Mismatches: refused, AllowedMismatches: allowed,
				Rows: []analyze.Row{}, Notes: []string{}, Footnotes: []string{}}
			if err := report.WriteJSON(out, j); err != nil {
				return nil, none, err
			}
		}
		return nil, none, withCode(exitRefused, errors.New(strings.Join(lines, "\n")))
	}
	opts := analyze.CompareOptions{ThresholdPct: cmd.Float("threshold"), Method: method, Resamples: cmd.Int("resamples"),
		Seed: uint64(cmd.Int("seed")), Quantiles: q}
	c, err := analyze.Compare(a, b, opts)
	if err != nil {
		return nil, none, err
	}
	return c, report.CompareView{All: cmd.Bool("all"), Allowed: used, Mismatches: mismatches}, nil
}

func parseGate(g string) (string, string, bool) {
	coll, metric, ok := strings.Cut(g, "/")
	if !ok || coll == "" {
		return "", "", false
	}
	all := append(slices.Clone(analyze.LatencyMetrics), analyze.RunMetrics...)
	if !slices.Contains(all, analyze.Metric(metric)) {
		return "", "", false
	}
	return coll, metric, true
}
