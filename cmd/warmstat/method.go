package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/loader"
	"github.com/warmstat/warmstat/method"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/series"
)

// prepareMethod settles how a series command (ab, bisect) asks its question: its
// flags checked into method.Options and the method prepared; the command says it
// (sayMethod) once its own checks have passed.
// Everything is checked before the first server starts: a bad setting must not cost runs.
func prepareMethod(ctx context.Context, cmd *cli.Command) (*method.Method, error) {
	return prepareMethodWith(ctx, cmd, nil)
}

// prepareMethodWith is prepareMethod with the options changed by set before they are
// used (a history's follow-up names the gate its change point is judged on).
func prepareMethodWith(ctx context.Context, cmd *cli.Command, set func(*method.Options)) (*method.Method, error) {
	o, err := seriesOptions(cmd)
	if err != nil {
		return nil, err
	}
	if set != nil {
		set(&o)
	}
	errw := cmd.Root().ErrWriter
	ictx, stop := interruptible(ctx, errw) // generating the default catalog is long work
	defer stop()
	m, err := method.Prepare(ictx, o)
	switch {
	case errors.Is(err, context.Canceled):
		return nil, errors.New("interrupted: the default catalog was not generated (nothing is left of it)")
	case errors.Is(err, method.ErrNoSnapshot):
		return nil, usageError(cmd, "%v", err)
	case errors.Is(err, method.ErrNoDominant):
		return nil, usageError(cmd, "%v: name the gate (--gate COLLECTION/mean_adj)", err)
	}
	var he *method.HeapsError
	var we *method.WorkloadError
	switch {
	case errors.As(err, &he):
		return nil, withCode(exitUsage, spawnHint(he.Err))
	case errors.As(err, &we):
		return nil, fmt.Errorf("--workload: %w (a workload file is made by warmstat extract or warmstat seed --workload; a snapshot is given with --pristine DIR --catalog NAME)", we.Err)
	case err != nil:
		return nil, err
	}
	var ge *method.GateError // before the builds are identified and compiled
	if err := m.CheckGates(); errors.As(err, &ge) {
		return nil, usageError(cmd, "%s %q: %v", gateFlagOf(cmd, ge.Gate), ge.Gate, err)
	}
	return m, nil
}

// seriesOptions reads the series flags every series command shares, refusing the
// combinations no series can run.
func seriesOptions(cmd *cli.Command) (method.Options, error) {
	cond, err := parseConditions(cmd)
	if err != nil {
		return method.Options{}, err // a usage error already
	}
	if err := seriesFlagsUsable(cmd); err != nil {
		return method.Options{}, err
	}
	remote := cmd.String("target-mode") == runfmt.TargetRemote
	o := method.Options{Pristine: cmd.String("pristine"), Catalog: cmd.String("catalog"), Workload: cmd.String("workload"),
		Remote: remote, Replay: cmd.Bool("replay"), Duet: cmd.Bool("duet"), Split: cmd.String("duet-placement") == "split",
		Gates: cmd.StringSlice("gate"), Watch: cmd.StringSlice("watch"),
		ServerHeap: cond.serverHeap, ReaderHeap: cond.readerHeap, Compress: cond.compress, Cache: cond.cache, Record: cond.record,
		BatchSize: cmd.Int("batch-size"), MaxPerCollection: cmd.Int("max-per-collection"), Prefetch: cmd.Bool("prefetch"),
		WriterJVMOptions: cmd.StringSlice("writer-jvm-option"), NoClassArchive: cmd.Bool("no-class-archive"), WriterWarmUp: cmd.Int("writer-warm-up"),
		ProfileCondition: cmd.String("writer-profile") + "/" + cmd.String("writer-profile-interval"),
		MinRuns:          cmd.Int("min-runs"), MaxRuns: cmd.Int("max-runs"), Warmup: cmd.Int("warmup"), ThresholdPct: cmd.Float("threshold"),
		AlphaPct: cmd.Float("alpha"), Unpaired: cmd.Bool("unpaired"), RerunOutliers: cmd.Bool("rerun-outliers"),
		Version: version, Log: cmd.Root().ErrWriter, Progress: liveProgress(cmd.Root().ErrWriter)}
	if o.SnapshotCompress, err = optBool(cmd, "snapshot-compress"); err != nil {
		return o, err
	}
	if o.CatalogLine, err = catalogLine(cmd); err != nil {
		return o, err
	}
	if _, err := writerProfiler(cmd, "", nil); err != nil { // a bad profiler flag, before any run
		return o, err
	}
	if cmd.String("writer-profile") != "" {
		o.Profiler = func(work string) (loader.Profiler, error) {
			return writerProfiler(cmd, work, func(s string) { fmt.Fprintf(cmd.Root().ErrWriter, "warning: %s\n", s) })
		}
	}
	leanRuntime()
	return o, nil
}

// seriesFlagsUsable refuses the series flags no series can run together.
func seriesFlagsUsable(cmd *cli.Command) error {
	if err := loadLimits(cmd); err != nil {
		return err
	}
	if cmd.IsSet("alpha") && cmd.Float("alpha") == 0 {
		return usageError(cmd, "--alpha 0: the false-verdict budget is a percentage above 0 and below 50")
	}
	check := analyze.SequentialPlan{MinRuns: cmd.Int("min-runs"), MaxRuns: cmd.Int("max-runs"), AlphaPct: cmd.Float("alpha"),
		ThresholdPct: cmd.Float("threshold"), Gates: cmd.StringSlice("gate"), Watch: cmd.StringSlice("watch")}
	if err := check.Check(); err != nil {
		return err
	}
	if len(check.Watch) > 0 && len(check.Gates) == 0 {
		return usageError(cmd, "--watch shows a metric beside the gates: name the gates too (--gate)")
	}
	if err := sourceFlagsUsable(cmd); err != nil {
		return err
	}
	if _, err := writerWarmUp(cmd); err != nil {
		return err
	}
	if w := cmd.Int("warmup"); w < 0 || w > 10 {
		return usageError(cmd, "--warmup %d: must be 0 to 10", w)
	}
	return nil
}

// sourceFlagsUsable refuses a source, target mode or duet the series cannot have.
func sourceFlagsUsable(cmd *cli.Command) error {
	wl, pristine := cmd.String("workload"), cmd.String("pristine") != "" || cmd.String("catalog") != ""
	noSource := wl == "" && !pristine && !cmd.Bool("replay")
	if mode := cmd.String("target-mode"); mode != runfmt.TargetRemote && mode != runfmt.TargetEmbedded {
		return usageError(cmd, "--target-mode %q: remote or embedded", mode)
	}
	remote := cmd.String("target-mode") == runfmt.TargetRemote
	replay := wl != "" || cmd.Bool("replay") || !remote
	if wl != "" {
		for _, f := range []string{"pristine", "catalog", "reader-heap", "snapshot-compress", "replay"} {
			if cmd.IsSet(f) {
				return usageError(cmd, "--workload replaces --pristine and --catalog (a replay with no reader): --%s does not apply", f)
			}
		}
	} else if pristine && (cmd.String("pristine") == "" || cmd.String("catalog") == "") {
		return usageError(cmd, "%s needs its source whole: --pristine DIR --catalog NAME (a snapshot), or --workload FILE, or neither (warmstat's default catalog)", cmd.Name)
	}
	if noSource {
		for _, f := range []string{"reader-heap", "snapshot-compress"} {
			if cmd.IsSet(f) {
				return usageError(cmd, "--%s: with no source given the series replays the default catalog (no reader, no snapshot)", f)
			}
		}
	}
	if err := duetFlagsUsable(cmd, replay || noSource); err != nil {
		return err
	}
	if replay && (cmd.Bool("prefetch") || cmd.IsSet("batch-size")) {
		return usageError(cmd, "--prefetch and --batch-size shape reading a source server; a replay reads its workload as it was extracted")
	}
	if (wl != "" || noSource) && cmd.IsSet("max-per-collection") {
		return usageError(cmd, "--max-per-collection: a workload file holds what it was extracted with (warmstat extract --max-per-collection)")
	}
	return nil
}

// duetFlagsUsable refuses a duet the series cannot have.
func duetFlagsUsable(cmd *cli.Command, replay bool) error {
	if !cmd.Bool("duet") {
		if cmd.IsSet("duet-placement") {
			return usageError(cmd, "--duet-placement places a duet's writers: it needs --duet")
		}
		return nil
	}
	if !replay {
		return usageError(cmd, "--duet replays one workload in both writers at once: it needs --replay or --workload (two live loads would add two reader JVMs to the machine)")
	}
	if cmd.Bool("unpaired") {
		return usageError(cmd, "--duet is analysed by its duets (paired, with the slot as a factor): --unpaired does not apply")
	}
	if p := cmd.String("duet-placement"); p != "split" && p != "shared" {
		return usageError(cmd, "--duet-placement %q: split or shared", p)
	}
	return nil
}

// say is where a package's word on its work goes: the command's standard error.
func say(cmd *cli.Command) func(string) {
	return func(msg string) { fmt.Fprintln(cmd.Root().ErrWriter, msg) }
}

// seriesConfig is the method's series in dir replaying wl (when it replays), shown as
// it goes.
func seriesConfig(cmd *cli.Command, m *method.Method, dir, wl string, sides map[string]*method.Side, plan series.Plan, began time.Time) series.Config {
	c := m.Config(dir, wl, sides, plan, faultHint)
	seriesShown(cmd)(&c, began)
	return c
}

// seriesShown shows a series as it goes: each run with its health and the time left,
// each look.
func seriesShown(cmd *cli.Command) func(c *series.Config, began time.Time) {
	out := progressWriter(cmd)
	return func(c *series.Config, began time.Time) {
		c.OnRun = func(s *series.State, e series.Entry) { report.SeriesRun(out, s, e, s.Remaining(began, time.Now())) }
		c.OnLook = func(s *series.State, l series.LookRecord) { report.SeriesLook(out, s, l) }
	}
}

// catalogLine is --catalog-line (ab, bisect, history, load), checked: "" or 2026.1.
func catalogLine(cmd *cli.Command) (string, error) {
	l := cmd.String("catalog-line")
	if !slices.Contains(runfmt.CatalogLines, l) {
		return "", usageError(cmd, "--catalog-line %q: 2026.1 is the line warmstat writes a catalog for", l)
	}
	return l, nil
}
