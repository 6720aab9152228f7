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
	"github.com/warmstat/warmstat/base/cachedir"
	"github.com/warmstat/warmstat/bisect"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/method"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/series"
)

func bisectCommand() *cli.Command {
	return &cli.Command{
		Name:  "bisect",
		Usage: "which commit of an evitaDB checkout made publishing slower: series of probes against good, halving the commits",
		Description: "Lists the first-parent commits of --good..--bad in the checkout --evita-home, confirms the regression with a\n" +
			"series of good against bad (as warmstat ab runs one), then halves the commits between: a series of each probe\n" +
			"against good moves the bad end (slower) or the good end (equivalent); a probe that stays unresolved is put\n" +
			"against the bad end too, or reported as undecidable, never guessed. A probe slower than good and clearly\n" +
			"faster than bad splits the regression: each part is found. Each commit is built once (--build-cmd, in a clone\n" +
			"of its own: the checkout is never touched), its server jar (--server-jar-path) cached by commit in\n" +
			"--build-cache; a commit that fails to build or whose server does not start is skipped. Every probe's series\n" +
			"is an ordinary series directory (DIR/probes/B-vs-A), so compare, table, plot and profile --diff work on it.\n" +
			"DIR/bisect.json holds the plan, the commits, every build and probe: the same command continues.\n" +
			"Exit codes: 0 a culprit found, 3 no regression confirmed, undecidable or a culprit hidden among unbuildable\n" +
			"commits, 1 a failure (an interrupted bisect: the same command continues it), 2 usage; 130 / 143 a second\n" +
			"Ctrl-C or SIGTERM: stopped at once, the build and every JVM it started ended with it." +
			examples("warmstat bisect --evita-home ~/src/evitaDB --good v2026.2.2 --bad v2026.2.3 --out bisect/2026.2.3 --pristine /var/tmp/ws/pristine --catalog shop --replay"),
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
	gate, err := bisectGate(cmd, m)
	if err != nil {
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
	sayMethod(cmd, m) // once the bisect is its to run
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

// bisectOf is the bisect of where, built as the build flags say: its checkout,
// directory, commits and builder, all checked before anything is built.
func bisectOf(ctx context.Context, cmd *cli.Command, gate string, where bisectRange) (method.Bisection, error) {
	b := method.Bisection{Gate: gate, Faster: where.faster, Hint: faultHint}
	root, err := filepath.Abs(where.home)
	if err != nil {
		return b, err
	}
	if r, err := filepath.EvalSymlinks(root); err == nil { // one checkout, one plan, however it is reached
		root = r
	}
	b.Root = root
	if b.Dir, err = filepath.Abs(where.dir); err != nil {
		return b, err
	}
	if err := bisect.DirUsable(b.Dir, root); err != nil {
		return b, usageError(cmd, "--out %v", err)
	}
	cache := cmd.String("build-cache")
	if cache == "" {
		cache = filepath.Join(cachedir.Root(), "builds")
	}
	if err := bisect.Writable(cache); err != nil {
		return b, fmt.Errorf("--build-cache %s: %w", cache, err)
	}
	if b.Good, b.Commits, err = bisect.Range(ctx, root, where.good, where.bad); err != nil {
		return b, usageError(cmd, "%v", err)
	}
	errw := cmd.Root().ErrWriter
	b.Builder = &bisect.Builder{Root: root, Command: cmd.String("build-cmd"), JarPath: cmd.String("server-jar-path"), Cache: cache,
		WorkDir: filepath.Join(b.Dir, "work"), RetryFailed: cmd.Bool("rebuild-failed"),
		Progress: func(msg string) { fmt.Fprintf(errw, "%s %s\n", time.Now().Format("15:04:05"), msg) }}
	out := progressWriter(cmd)
	b.Hooks = func(c *series.Config, began time.Time) {
		c.OnRun = func(s *series.State, e series.Entry) { report.SeriesRun(out, s, e, s.Remaining(began, time.Now())) }
		c.OnLook = func(s *series.State, l series.LookRecord) { report.SeriesLook(out, s, l) }
	}
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

// bisectGate is --gate, or the method's gate (the dominant collection's adjusted mean),
// or with the older way the dominant collection's (analyze.Dominant) mean.
func bisectGate(cmd *cli.Command, m *method.Method) (string, error) {
	if g := cmd.StringSlice("gate"); len(g) == 1 {
		return g[0], nil // checked against the source by prepareMethod
	}
	if m.Faithful {
		return m.Gates()[0], nil
	}
	dom := analyze.Dominant(m.Source.Counts())
	if dom == "" {
		return "", usageError(cmd, "--gate: %s records no collections to choose the default gate from; name one (--gate COLLECTION/mean)", m.Source.Name())
	}
	return dom + "/mean", nil
}
