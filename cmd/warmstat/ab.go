package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/method"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/series"
	"github.com/warmstat/warmstat/workload"
)

func abCommand() *cli.Command {
	return &cli.Command{
		Name:        "ab",
		Usage:       "an interleaved A/B series of spawn-mode loads that stops as soon as the answer is known",
		Description: help("ab"),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "a", Usage: "build A (the baseline): a server", Required: true},
			&cli.StringFlag{Name: "b", Usage: "build B: a server", Required: true},
			&cli.StringFlag{Name: "label-a", Usage: "build label of A's runs (default: its version)"},
			&cli.StringFlag{Name: "label-b", Usage: "build label of B's runs (default: its version)"},
			&cli.StringFlag{Name: "out", Usage: "series directory (new, or a series to continue; default: ab-A-vs-B in the current directory)"},
			&cli.BoolFlag{Name: "fail-on-regression", Usage: "exit 4 when a gate is slower"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "the answer: text | md | json (with md or json only the answer goes to stdout; the runs, looks, compare and table to stderr)"},
			&cli.IntFlag{Name: "pairs", Usage: "a fixed-size series of exactly N pairs (2 to 100), no early stop: each machine of a fleet runs the same, and warmstat combine judges them together"},
			&cli.IntFlag{Name: "stop-after", Usage: "run at most N more pairs (duets) in this invocation, then stop with the series unfinished (exit 0); the same command continues it: a series in sittings, or interleaved with another"},
		}, seriesFlags()...),
		Action: action(runAB),
	}
}

// seriesFlags are the flags of the series a command runs (ab, bisect): the source,
// heaps, conditions and the sequential plan.
func seriesFlags() []cli.Flag {
	return append(append(conditionFlags("writer heap of both builds, e.g. 8g (default: chosen from the snapshot's or the workload's record, as load chooses it)", "reader heap (default: chosen from the snapshot's record; none with --workload)"),
		&cli.StringFlag{Name: "pristine", Usage: "parent directory of the pristine <catalog>/ snapshot (or --workload)"},
		&cli.StringFlag{Name: "catalog", Usage: "the snapshot's catalog"},
		&cli.StringFlag{Name: "snapshot-compress", Usage: "a snapshot warmstat seed did not make (no <catalog>.snapshot.json, e.g. a production export): its storage.compress, true | false, which the reader must open it with; the heaps must then be given"},
		&cli.StringFlag{Name: "workload", Usage: "replay this workload file (warmstat extract) in every run instead of a snapshot: no reader, nothing extracted; the file is only read (checksummed at every start and end)"},
		&cli.IntFlag{Name: "min-runs", Value: 2, Usage: "runs per side before the first look (a paired series looks first at 3 pairs)"},
		&cli.StringSliceFlag{Name: "writer-jvm-option", Usage: "a JVM option for every run's writer, both sides (repeatable; recorded)"},
		&cli.BoolFlag{Name: "no-class-archive", Usage: "boot the JVMs without the releases' class-data archives (AppCDS)"},
		&cli.StringFlag{Name: "catalog-line", Usage: "2026.1: give both sides the catalog written for evitaDB 2026.1, as a comparison across the lines does by itself (recorded)"},
		&cli.IntFlag{Name: "writer-warm-up", Usage: "0 to 5: in every run, loads into a throwaway catalog of the writer (published, then deleted) before the measured load: the runs time compiled code, as a production server's next publish does (recorded)"},
		&cli.BoolFlag{Name: "unpaired", Usage: "analyse the two sides as independent groups (welch-t) instead of by the series' pairs (paired-t)"},
		&cli.IntFlag{Name: "max-runs", Value: 10, Usage: "runs per side at most"},
		&cli.IntFlag{Name: "warmup", Value: 0, Usage: "whole runs per side made first and kept out of the analysis (not --writer-warm-up, which warms each run's own writer before its measured load)"},
		&cli.FloatFlag{Name: "threshold", Value: 2, Usage: "noise threshold in %"},
		&cli.FloatFlag{Name: "alpha", Value: 5, Usage: "false-verdict budget in % across all looks, per gate"},
		&cli.StringSliceFlag{Name: "gate", Usage: "COLLECTION/METRIC (repeatable; default: the dominant collection's mean_adj, watching its alloc; with --target-mode remote or --duet its mean and */ingest)"},
		&cli.StringSliceFlag{Name: "watch", Usage: "COLLECTION/METRIC judged at every look and shown in the answer like a gate, but not waited for: the series stops when the gates have their answers (repeatable; needs --gate)"},
		&cli.BoolFlag{Name: "rerun-outliers", Usage: "replace a run that stands out from its side (recorded), once"},
		&cli.IntFlag{Name: "batch-size", Value: workload.DefaultBatchSize, Usage: "primary keys per source fetch"},
		&cli.IntFlag{Name: "max-per-collection", Usage: "cap per collection (0 = all)"},
		&cli.BoolFlag{Name: "prefetch", Usage: "overlap the next source fetch with upserts"},
		&cli.StringFlag{Name: "target-mode", Value: "embedded", Usage: "embedded (every run's writer is warmstat's embedded writer, the engine in one JVM with no transport, replaying the catalog read once) | remote (the older way: a remote writer, a reader in every run unless --replay)"},
		&cli.BoolFlag{Name: "replay", Usage: "with --target-mode remote: read the snapshot once into SERIES/workload.wsw (by build A, with --reader-heap) when the series starts, and replay it in every run (the embedded writer always does)"},
		&cli.StringFlag{Name: "duet-placement", Value: "split", Usage: "with --duet: split (each writer pinned to its half of the CPUs, told its CPU count) | shared (both writers on every CPU, placed by the kernel)"},
		&cli.BoolFlag{Name: "duet", Usage: "every pair is a duet: both builds replay the workload at once, in lock-step by batch, each writer pinned to half the CPUs, the halves alternating pair by pair (needs --replay or --workload; compared only with duet runs)"},
	), writerProfileFlags()...)
}

func runAB(ctx context.Context, cmd *cli.Command) error {
	f, err := report.ParseFormat(cmd.String("format"), report.Text, report.Markdown, report.JSON)
	if err != nil {
		return usageError(cmd, "--format: %v", err)
	}
	if n := cmd.Int("stop-after"); n < 0 || cmd.IsSet("stop-after") && n == 0 {
		return usageError(cmd, "--stop-after %d: a number of pairs, 1 or more", n)
	}
	srcs := map[string]evitaserver.Source{} // named builds are checked before anything is prepared
	for _, s := range []string{"a", "b"} {
		src, err := evitaserver.ParseSource(cmd.String(s))
		if err != nil {
			return fmt.Errorf("--%s: %w", s, err)
		}
		srcs[s] = src
	}
	m, err := prepareMethod(ctx, cmd)
	if err != nil {
		return err
	}
	report.MethodLines(cmd.Root().ErrWriter, m)
	sides := map[string]*method.Side{}
	for _, s := range []string{"a", "b"} {
		side, err := m.Side(srcs[s], cmd.String(s), cmd.String("label-"+s), strings.ToUpper(s), say(cmd))
		if err != nil {
			return fmt.Errorf("--%s: %w", s, err)
		}
		sides[strings.ToUpper(s)] = side
	}
	if sides["A"].Label == sides["B"].Label {
		sides["A"].Label, sides["B"].Label = "A-"+sides["A"].Label, "B-"+sides["B"].Label
	}
	report.CatalogLine(cmd.Root().ErrWriter, m, sides["A"], sides["B"])
	out := cmd.String("out")
	if out == "" {
		out = method.DefaultDir(sides["A"].Label, sides["B"].Label)
		fmt.Fprintf(cmd.Root().ErrWriter, "series directory: %s (--out DIR to choose; the same command continues it)\n", out)
	}
	dir, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	st, err := runSeries(ctx, cmd, m, sides, dir, cmd.Int("stop-after"))
	if errors.Is(err, series.ErrPaused) {
		fmt.Fprintf(cmd.Root().ErrWriter, "stopped after %s as asked (--stop-after): %d of the series' pairs done; the same command continues it\n",
			report.Plural(cmd.Int("stop-after"), "pair"), st.Done("A", series.Measured))
		return nil
	}
	if err != nil {
		return err
	}
	return finishSeries(ctx, cmd, st, dir, f)
}

// runSeries runs (or continues) the method's series of sides B against A in dir, at
// most stopAfter more pairs when positive (series.ErrPaused then).
func runSeries(ctx context.Context, cmd *cli.Command, m *method.Method, sides map[string]*method.Side, dir string, stopAfter int) (*series.State, error) {
	plan, err := abPlan(cmd, m, sides)
	if err != nil {
		return nil, err
	}
	ctx, stop := interruptible(ctx, cmd.Root().ErrWriter)
	defer stop()
	sc := seriesConfig(cmd, m, dir, m.WorkloadFile(dir), sides, plan, time.Now())
	sc.StopAfter = stopAfter
	st, err := series.Execute(ctx, sc)
	if errors.Is(err, series.ErrPaused) {
		return st, err
	}
	if was, _ := series.Read(dir); errors.Is(err, series.ErrPlanDiffers) && was != nil && was.Plan.TargetMode != runfmt.TargetEmbedded && !cmd.IsSet("target-mode") {
		return st, usageError(cmd, "%v; it was started the older way (a remote writer), the default before every source was asked with the embedded writer: add --target-mode remote to continue it", err)
	}
	return st, seriesError(cmd, ctx, err)
}

// abPlan is the series of sides B against A, a fixed-size one with --pairs.
func abPlan(cmd *cli.Command, m *method.Method, sides map[string]*method.Side) (series.Plan, error) {
	plan := m.Plan(sides["A"], sides["B"])
	if cmd.IsSet("pairs") {
		if err := fixedPairs(cmd, &plan); err != nil {
			return plan, err
		}
	}
	if plan.Duet && plan.MaxRuns < 4 {
		return plan, usageError(cmd, "a duet series of %d duets: it is analysed with the slot as a factor (n-2 degrees of freedom) and looks first at 4 duets, two in each placement; give --max-runs (or --pairs) 4 or more", plan.MaxRuns)
	}
	if plan.Method() == analyze.Paired && plan.MaxRuns < 3 {
		fmt.Fprintf(cmd.Root().ErrWriter, "warning: a paired series of %d pairs judges at its only look on an interval of one degree of freedom, so wide it rarely resolves anything; --max-runs 3 or more\n", plan.MaxRuns)
	}
	return plan, nil
}

// seriesError is a series' error as a command returns it: a plan that differs is a
// usage error, an interrupt says how to go on, a refusal has its exit code.
func seriesError(cmd *cli.Command, ctx context.Context, err error) error {
	if errors.Is(err, series.ErrPlanDiffers) {
		return usageError(cmd, "%v", err)
	}
	if err != nil && ctx.Err() != nil {
		return errors.New("interrupted: the series stopped; the same command continues it")
	}
	var ref *analyze.Refusal
	if errors.As(err, &ref) {
		return refusal(ref)
	}
	return err
}

// fixedPairs makes plan a fixed-size series of --pairs pairs: paired, one look at the
// end. The flags that shape a sequential series are refused beside it.
func fixedPairs(cmd *cli.Command, plan *series.Plan) error {
	n := cmd.Int("pairs")
	if n < 2 || n > 100 {
		return usageError(cmd, "--pairs %d: a fixed-size series has 2 to 100 pairs", n)
	}
	for _, f := range []string{"min-runs", "max-runs", "unpaired"} {
		if cmd.IsSet(f) {
			return usageError(cmd, "--pairs %d is a fixed-size paired series: --%s does not apply", n, f)
		}
	}
	plan.Pairs, plan.MinRuns, plan.MaxRuns = n, n, n
	return nil
}

// progressWriter is where a series' runs, looks and details go: stdout with --format
// text, stderr otherwise, so that stdout holds the answer alone, a document in the
// format asked for.
func progressWriter(cmd *cli.Command) io.Writer {
	if f := cmd.String("format"); f != "" && f != string(report.Text) {
		return cmd.Root().ErrWriter
	}
	return cmd.Root().Writer
}

// finishSeries prints the series' runs with their health, the full compare, the table
// and the plot, then the answer (in the --format asked for) and maps the outcome to the
// exit code. With md or json only the answer goes to stdout; the rest to stderr.
func finishSeries(ctx context.Context, cmd *cli.Command, st *series.State, dir string, f report.Format) error {
	out, errw, detail := cmd.Root().Writer, cmd.Root().ErrWriter, progressWriter(cmd)
	// the order a reader follows: the runs and their health, the full comparison, the
	// table, and last the answer with what to do next
	report.SeriesRuns(detail, st)
	if err := report.SeriesDetail(detail, st, dir); err != nil {
		fmt.Fprintf(errw, "warmstat: %v\n", err) // the answer below still stands: it is the series' own
	}

	ans := report.BuildSeriesAnswer(st, dir)
	if err := report.WriteSeriesAnswer(out, ans, f); err != nil {
		return err
	}
	if cmd.Bool("fail-on-regression") && len(ans.Slower) > 0 {
		return withCode(exitRegression, fmt.Errorf("regression: %s slower", strings.Join(ans.Slower, ", ")))
	}
	return nil
}

// gateFlagOf is the flag that named g: --watch when it is watched, else --gate.
func gateFlagOf(cmd *cli.Command, g string) string {
	if slices.Contains(cmd.StringSlice("watch"), g) {
		return "--watch"
	}
	return "--gate"
}
