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

	"github.com/warmstat/warmstat/bisect"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/method"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/series"
)

func bisectCommand() *cli.Command {
	return &cli.Command{
		Name:        "bisect",
		Usage:       "which commit of an evitaDB checkout made publishing slower: series of probes against good, halving the commits",
		Description: help("bisect"),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "evita-home", Usage: "the evitaDB checkout (git; only read)", Required: true},
			&cli.StringFlag{Name: "good", Usage: "a commit (or any revision) publishing at the old speed", Required: true},
			&cli.StringFlag{Name: "bad", Usage: "a later commit publishing slower (good must be its ancestor)", Required: true},
			&cli.StringFlag{Name: "out", Usage: "bisect directory (new, or a bisect to continue)", Required: true},
			&cli.StringFlag{Name: "build-cmd", Value: bisect.DefaultBuildCommand, Usage: "builds a commit's server, run with sh -c in its clone"},
			&cli.StringFlag{Name: "server-jar-path", Value: evitaserver.CheckoutJar, Usage: "the server jar --build-cmd leaves, relative to the checkout"},
			&cli.StringFlag{Name: "build-cache", Usage: "the builds by commit (default: builds in warmstat's cache, $WARMSTAT_CACHE or ~/.cache/warmstat)"},
			&cli.BoolFlag{Name: "rebuild-failed", Usage: "build again a commit whose build failed before (its failure is cached otherwise)"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "the result: text | md | json"},
			&cli.StringFlag{Name: "direction", Value: "slower", Usage: "slower: the commit that made publishing slower; faster: the one that made it faster (a speed-up to name)"},
		}, bisectSeriesFlags()...),
		Action: action(runBisect),
	}
}

// bisectSeriesFlags are ab's series flags with --gate as a bisect reads it: one
// metric, every probe's series judged on it alone.
func bisectSeriesFlags() []cli.Flag {
	fs := seriesFlags()
	for i, f := range fs {
		if slices.Contains(f.Names(), "gate") {
			fs[i] = &cli.StringSliceFlag{Name: "gate", Usage: "COLLECTION/METRIC: the one metric every series of the bisect judges (default: the dominant collection's mean_adj; with --target-mode remote its mean)"}
		}
	}
	return fs
}

func runBisect(ctx context.Context, cmd *cli.Command) error {
	if err := bisectFlagsUsable(cmd); err != nil {
		return err
	}
	m, err := prepareMethod(ctx, cmd)
	if err != nil {
		return err
	}
	gate, err := m.BisectGate(cmd.StringSlice("gate"))
	if errors.Is(err, method.ErrNoDominant) {
		return usageError(cmd, "--gate: %v; name one (--gate COLLECTION/mean)", err)
	} else if err != nil {
		return err
	}
	where := bisectRange{home: cmd.String("evita-home"), good: cmd.String("good"), bad: cmd.String("bad"), dir: cmd.String("out"),
		faster: cmd.String("direction") == "faster"}
	b, err := bisectOf(ctx, cmd, gate, where)
	if err != nil {
		return err
	}
	o, st, err := runBisection(ctx, cmd, m, b)
	out, format := cmd.Root().Writer, cmd.String("format")
	if err != nil {
		return bisectStopped(ctx, out, format, st, o, err)
	}
	if format == "json" {
		if err := report.WriteJSON(out, st); err != nil {
			return err
		}
	} else {
		report.BisectResult(out, st, o, b.Subjects(), format == "md", m.Plan(nil, nil).AlphaPct)
	}
	if o.Kind != bisect.Found {
		return withCode(exitRefused, fmt.Errorf("bisect: %s", report.BisectSummary(o, b.Subjects())))
	}
	return nil
}

// runBisection runs the bisect b with the method m, in its directory, locked: one
// bisect at a time in a directory, or a second would build and run into the first
// one's work directory.
func runBisection(ctx context.Context, cmd *cli.Command, m *method.Method, b method.Bisection) (*bisect.Outcome, *bisect.State, error) {
	errw := cmd.Root().ErrWriter
	ctx, stop := interruptible(ctx, errw)
	defer stop()
	release, err := series.LockDir(b.Dir)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	st, err := bisect.Open(b.Dir, m.BisectPlan(b), b.Good, b.Commits, time.Now())
	if errors.Is(err, bisect.ErrPlanDiffers) {
		return nil, nil, usageError(cmd, "%v", err)
	}
	if err != nil {
		return nil, nil, err
	}
	report.MethodLines(cmd.Root().ErrWriter, m) // once the bisect is its to run
	expected := "1 series: the confirmation"
	if n := len(b.Commits); n > 1 {
		expected = fmt.Sprintf("about %d series: a confirmation and ⌈log₂ %d⌉ probes", bisect.ExpectedSeries(n), n)
	}
	fmt.Fprintf(errw, "bisect %s..%s in %s: %s, %s, gate %s\n",
		b.Good.Short(), b.Commits[len(b.Commits)-1].Short(), b.Root, report.Plural(len(b.Commits), "commit"), expected, b.Gate)
	o, err := m.Bisect(ctx, b, st)
	return o, st, err
}

// bisectFlagsUsable refuses bisect flags no bisect can run with.
func bisectFlagsUsable(cmd *cli.Command) error {
	if cmd.Args().Len() > 0 {
		return usageError(cmd, "unexpected argument %q: bisect takes flags only", cmd.Args().First())
	}
	if strings.TrimSpace(cmd.String("build-cmd")) == "" {
		return usageError(cmd, "--build-cmd is empty: give the command that builds a commit's server jar")
	}
	if jp := cmd.String("server-jar-path"); !filepath.IsLocal(jp) {
		return usageError(cmd, "--server-jar-path %q: a path inside the checkout, relative to its top", jp)
	}
	if cmd.String("out") == "" {
		return usageError(cmd, "--out is empty: give the bisect's directory")
	}
	if format := cmd.String("format"); format != "text" && format != "md" && format != "json" {
		return usageError(cmd, "--format %q: text, md or json", format)
	}
	if g := cmd.StringSlice("gate"); len(g) > 1 {
		return usageError(cmd, "bisect decides on one gate (--gate %s ...): name the one to bisect on", g[0])
	}
	if d := cmd.String("direction"); d != "slower" && d != "faster" {
		return usageError(cmd, "--direction %q: slower or faster", d)
	}
	return nil
}

// bisectRange is what a bisect searches: the commits good..bad of the checkout home
// (for the commit that made publishing faster, or slower), into dir.
type bisectRange struct {
	home, good, bad, dir string
	faster               bool
}

// bisectOf is the bisect of where, built as the build flags say, checked by method
// before anything is built, and shown as it goes.
func bisectOf(ctx context.Context, cmd *cli.Command, gate string, where bisectRange) (method.Bisection, error) {
	errw := cmd.Root().ErrWriter
	builder := bisect.Builder{Command: cmd.String("build-cmd"), JarPath: cmd.String("server-jar-path"), Cache: cmd.String("build-cache"),
		RetryFailed: cmd.Bool("rebuild-failed"), Progress: func(msg string) { fmt.Fprintf(errw, "%s %s\n", time.Now().Format("15:04:05"), msg) }}
	b, err := method.NewBisection(ctx, where.home, where.good, where.bad, where.dir, gate, where.faster, builder)
	var de *method.DirError
	var re *method.RangeError
	switch {
	case errors.As(err, &de):
		return b, usageError(cmd, "--out %v", err)
	case errors.As(err, &re):
		return b, usageError(cmd, "%v", err)
	case err != nil:
		return b, err
	}
	b.Hint = faultHint
	b.Hooks = seriesShown(cmd)
	b.OnProbe = func(r bisect.Result, a, bc bisect.Commit) {
		fmt.Fprintf(errw, "  %s against %s: %s %s after %s per side\n", bc.Short(), a.Short(), gate, report.BisectChange(r), report.Plural(r.Runs, "run"))
	}
	return b, nil
}

// bisectStopped is a bisect that stopped before its answer: an end that cannot be
// measured (recorded: nothing to bisect), an interrupt, or a failure; the same command
// continues the last two.
func bisectStopped(ctx context.Context, out io.Writer, format string, st *bisect.State, o *bisect.Outcome, err error) error {
	var sk *bisect.Skip
	if errors.As(err, &sk) {
		if format == "json" {
			report.WriteJSON(out, st)
		}
		if o.Kind != bisect.Unmeasurable { // the reference of a later probe: the bisect cannot go on
			return fmt.Errorf("%v: the bisect stopped", sk)
		}
		return fmt.Errorf("%s: nothing to bisect", o.Detail)
	}
	if ctx.Err() != nil {
		return errors.New("interrupted: the bisect stopped; the same command continues it")
	}
	return fmt.Errorf("%w (the bisect stopped; the same command continues it)", err)
}
