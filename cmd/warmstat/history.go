package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/bisect"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/history"
	"github.com/warmstat/warmstat/method"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/series"
)

func historyCommand() *cli.Command {
	return &cli.Command{
		Name:        "history",
		Usage:       "publishing time across a branch's builds: a line per set of conditions, its change points found, confirmed, bisected, and published as a page",
		ArgsUsage:   "HISTORY",
		Description: help("history"),
		Flags: localFlags(append([]cli.Flag{
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text | md | json"},
			&cli.FloatFlag{Name: "cp-alpha", Value: 0.5, Usage: "the significance a change point needs, in % (the permutation test's p-value)"},
			&cli.BoolFlag{Name: "confirm", Usage: "run an ab series between the builds on either side of each change point of --metric not confirmed yet"},
			&cli.BoolFlag{Name: "bisect", Usage: "run warmstat bisect over the commits between the builds on either side of each change point of --metric (needs --evita-home)"},
			&cli.StringFlag{Name: "metric", Value: history.FigureProductMean, Usage: "the metric whose change points --confirm and --bisect follow: " + history.MetricNames()},
			&cli.StringFlag{Name: "evita-home", Usage: "the evitaDB checkout the builds come from (git; only read): each line in its topological order (branches kept together, not interleaved by date); needed by --bisect"},
			&cli.StringFlag{Name: "build-cmd", Value: bisect.DefaultBuildCommand, Usage: "with --bisect: builds a commit's server, run with sh -c in its clone"},
			&cli.StringFlag{Name: "server-jar-path", Value: "evita_server/target/evita-server.jar", Usage: "with --bisect: the server jar --build-cmd leaves, relative to the checkout"},
			&cli.StringFlag{Name: "build-cache", Usage: "with --bisect: the builds by commit (default: builds in warmstat's cache)"},
		}, historySeriesFlags()...)),
		Action:   action(runHistory),
		Commands: []*cli.Command{historyAddCommand(), historyPublishCommand()},
	}
}

func historyAddCommand() *cli.Command {
	return &cli.Command{
		Name:        "add",
		Usage:       "add runs (or every run of series) to a history, each under its build",
		ArgsUsage:   "HISTORY RUN|SERIES...",
		Description: help("history-add"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "evita-home", Usage: "the evitaDB checkout the builds come from (git; only read)"},
			&cli.StringFlag{Name: "rev", Usage: "the commit (or tag) the runs were built from, when their build does not record it"},
			&cli.IntFlag{Name: "order", Usage: "the builds' place in the branch, without a checkout (runs of one build)"},
			&cli.StringFlag{Name: "ref", Usage: "how a series names the build (a version, jar:FILE, checkout:DIR), when the run does not say"},
		},
		Action: action(runHistoryAdd),
	}
}

func historyPublishCommand() *cli.Command {
	return &cli.Command{
		Name:        "publish",
		Usage:       "the history as a self-contained HTML page (inline SVG; opens from file:// and on GitHub Pages)",
		ArgsUsage:   "HISTORY",
		Description: help("history-publish"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "the site directory (required)"},
			&cli.FloatFlag{Name: "cp-alpha", Value: 0.5, Usage: "the significance a change point needs, in %"},
			&cli.StringFlag{Name: "evita-home", Usage: "the checkout the builds come from: each line in its topological order, branches kept together"},
		},
		Action: action(runHistoryPublish),
	}
}

// localFlags keeps a command's flags its own: history's series flags are not its
// subcommands' (add and publish would list them as options that do nothing).
func localFlags(fs []cli.Flag) []cli.Flag {
	for _, f := range fs {
		switch v := f.(type) {
		case *cli.StringFlag:
			v.Local = true
		case *cli.BoolFlag:
			v.Local = true
		case *cli.IntFlag:
			v.Local = true
		case *cli.FloatFlag:
			v.Local = true
		case *cli.StringSliceFlag:
			v.Local = true
		}
	}
	return fs
}

// checkHistoryFlags refuses a change point significance outside (0, 50) % and an
// --evita-home that is not a git checkout, before anything is read.
func checkHistoryFlags(ctx context.Context, cmd *cli.Command) error {
	if a := cmd.Float("cp-alpha"); !(a > 0 && a < 50) {
		return usageError(cmd, "--cp-alpha %v: a change point's significance is a percentage above 0 and below 50", a)
	}
	return checkHome(ctx, cmd)
}

// checkHome refuses an --evita-home that is not a git checkout, before anything is read.
func checkHome(ctx context.Context, cmd *cli.Command) error {
	if home := cmd.String("evita-home"); home != "" {
		if err := bisect.CheckCheckout(ctx, home); err != nil {
			return usageError(cmd, "--evita-home: %s", strings.TrimPrefix(err.Error(), "bisect: "))
		}
	}
	return nil
}

// historySeriesFlags are ab's series flags, for --confirm and --bisect.
func historySeriesFlags() []cli.Flag {
	return slices.DeleteFunc(seriesFlags(), func(f cli.Flag) bool { return slices.Contains(f.Names(), "format") })
}

func runHistoryAdd(ctx context.Context, cmd *cli.Command) error {
	args := cmd.Args().Slice()
	if len(args) < 2 {
		return usageError(cmd, "give the history and at least one run or series: warmstat history add HISTORY RUN|SERIES...")
	}
	where := history.Placement{Repo: cmd.String("evita-home"), Rev: cmd.String("rev"), Ref: cmd.String("ref")}
	if cmd.IsSet("order") {
		o := cmd.Int("order")
		if o < 0 {
			return usageError(cmd, "--order %d: a place in a branch is 0 or more", o)
		}
		where.Order = &o
	}
	if where.Repo == "" && where.Order == nil {
		return usageError(cmd, "--evita-home (the checkout the builds come from) or --order (their place in the branch) is needed to place the runs")
	}
	if where.Repo != "" && where.Order != nil {
		return usageError(cmd, "--evita-home places the runs by their commit's place in the checkout, --order by hand: give one")
	}
	if err := checkHome(ctx, cmd); err != nil {
		return err
	}
	added, err := history.AddRuns(ctx, args[0], args[1:], where, time.Now())
	var many *history.ManyBuildsError
	if errors.As(err, &many) {
		return usageError(cmd, "the runs are of %d builds (%s): --rev and --order place one build; add each build's runs on their own",
			len(many.Builds), strings.Join(many.Builds, ", "))
	}
	if err != nil {
		return historyErr(err)
	}
	report.HistoryAdded(cmd.Root().Writer, args[0], added)
	return nil
}

// historyErr is a history that cannot be read or added to as a command exits with it:
// a run held twice is refused (3), a damaged or missing file is input that cannot be
// used (1).
func historyErr(err error) error {
	var held *history.HeldTwiceError
	if errors.As(err, &held) {
		return withCode(exitRefused, err)
	}
	return withCode(exitFailed, err)
}

// analyseHistory reads and analyses every line of the history the command names, in
// the checkout's topological order when --evita-home gives one.
func analyseHistory(ctx context.Context, cmd *cli.Command) (*history.Store, []history.Analysis, error) {
	o := analyze.ChangePointOptions{AlphaPct: cmd.Float("cp-alpha")}
	st, lines, err := history.AnalyseAll(ctx, cmd.Args().First(), cmd.String("evita-home"), o)
	if err != nil {
		return nil, nil, historyErr(err)
	}
	return st, lines, nil
}

func runHistory(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Len() != 1 {
		return usageError(cmd, "give the history: warmstat history HISTORY (or history add, history publish)")
	}
	f, err := report.ParseFormat(cmd.String("format"), report.Text, report.Markdown, report.JSON)
	if err != nil {
		return usageError(cmd, "--format: %v", err)
	}
	if !history.IsMetric(cmd.String("metric")) {
		return usageError(cmd, "--metric %q: one of %s", cmd.String("metric"), history.MetricNames())
	}
	if cmd.Bool("bisect") && cmd.String("evita-home") == "" {
		return usageError(cmd, "--bisect builds the commits between two builds: it needs --evita-home (their checkout)")
	}
	if err := checkHistoryFlags(ctx, cmd); err != nil {
		return err
	}
	st, lines, err := analyseHistory(ctx, cmd)
	if err != nil {
		return err
	}
	if cmd.Bool("confirm") || cmd.Bool("bisect") {
		if err := followChangePoints(ctx, cmd, st, lines); err != nil {
			return err
		}
		if _, lines, err = analyseHistory(ctx, cmd); err != nil {
			return err
		}
	}
	return report.WriteHistory(cmd.Root().Writer, report.BuildHistory(cmd.Args().First(), lines), f)
}

// followChangePoints confirms (an ab series) and bisects (warmstat bisect) each change
// point of --metric not yet confirmed or bisected: history decides which and records
// what they found; the series and bisections are run by warmstat itself (selfRunner).
func followChangePoints(ctx context.Context, cmd *cli.Command, st *history.Store, lines []history.Analysis) error {
	o := history.FollowOptions{Metric: cmd.String("metric"), Confirm: cmd.Bool("confirm"), Bisect: cmd.Bool("bisect"),
		Repo: cmd.String("evita-home"), Log: cmd.Root().ErrWriter}
	err := history.Follow(ctx, st, lines, o, history.Runner{Confirm: confirmer(cmd), Bisect: bisecter(cmd)})
	if errors.Is(err, history.ErrNoRef) {
		return withCode(exitFailed, fmt.Errorf("%w: add their runs with --ref", err))
	}
	return err
}

// confirmer runs a change point's confirmation: the series ab would run between the
// builds on either side of it, asked with the history's series flags and judged on the
// change point's gate; everything it shows goes to standard error.
func confirmer(cmd *cli.Command) func(ctx context.Context, req history.ConfirmRequest) (*series.State, error) {
	return func(ctx context.Context, req history.ConfirmRequest) (*series.State, error) {
		errw := cmd.Root().ErrWriter
		fmt.Fprintf(errw, "history: confirming the change point between %s and %s (%s %% in the history): a series of %s against %s gated on %s, in %s\n",
			req.Before.Short(), req.After.Short(), report.SignedPct(req.Change.DeltaPct), req.After.Ref, req.Before.Ref, req.Gate, req.Dir)
		m, err := prepareMethodWith(ctx, cmd, func(o *method.Options) { o.Gates, o.Watch = []string{req.Gate}, nil })
		if err != nil {
			return nil, err
		}
		report.MethodLines(cmd.Root().ErrWriter, m)
		sides := map[string]*method.Side{}
		for _, s := range []string{"A", "B"} {
			b := map[string]history.Build{"A": req.Before, "B": req.After}[s]
			src, err := evitaserver.ParseSource(b.Ref)
			if err == nil {
				sides[s], err = m.Side(src, b.Ref, b.Short(), s, say(cmd))
			}
			if err != nil {
				return nil, fmt.Errorf("build %s (%s): %w", b.Short(), b.Ref, err)
			}
		}
		st, err := runSeries(ctx, cmd, m, sides, req.Dir, 0)
		if err != nil {
			return nil, err
		}
		if err := report.SeriesDetail(errw, st, req.Dir); err != nil {
			fmt.Fprintf(errw, "warmstat: %v\n", err)
		}
		return st, report.WriteSeriesAnswer(errw, report.BuildSeriesAnswer(st, req.Dir), report.Text)
	}
}

// bisecter runs a change point's bisect over the commits between the builds on either
// side of it, with the history's series and build flags; its result goes to standard
// error, and a bisect that named no culprit is a state, not an error.
func bisecter(cmd *cli.Command) func(ctx context.Context, req history.BisectRequest) (*bisect.State, error) {
	return func(ctx context.Context, req history.BisectRequest) (*bisect.State, error) {
		errw := cmd.Root().ErrWriter
		fmt.Fprintf(errw, "history: bisecting the commits between %s and %s, gated on %s, in %s\n", req.Before.Short(), req.After.Short(), req.Gate, req.Dir)
		m, err := prepareMethodWith(ctx, cmd, func(o *method.Options) { o.Gates, o.Watch = []string{req.Gate}, nil })
		if err != nil {
			return nil, err
		}
		where := bisectRange{home: cmd.String("evita-home"), good: req.Good, bad: req.Bad, dir: req.Dir, faster: req.Faster}
		b, err := bisectOf(ctx, cmd, req.Gate, where)
		if err != nil {
			return nil, err
		}
		o, st, err := runBisection(ctx, cmd, m, b)
		var sk *bisect.Skip
		if err != nil && !errors.As(err, &sk) {
			return nil, err
		}
		if o != nil {
			report.BisectResult(errw, st, o, b.Subjects(), false, m.Plan(nil, nil).AlphaPct)
		}
		return bisect.Read(req.Dir)
	}
}

func runHistoryPublish(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Len() != 1 {
		return usageError(cmd, "give the history: warmstat history publish HISTORY --out SITE")
	}
	if cmd.String("out") == "" {
		return usageError(cmd, "--out SITE: the directory to publish the page into")
	}
	if err := checkHistoryFlags(ctx, cmd); err != nil {
		return err
	}
	_, lines, err := analyseHistory(ctx, cmd)
	if err != nil {
		return err
	}
	h := report.BuildHistory(cmd.Args().First(), lines)
	page, err := report.PublishHistory(cmd.String("out"), h, time.Now())
	if err != nil {
		return withCode(exitFailed, err)
	}
	report.HistoryPublished(cmd.Root().Writer, cmd.Args().First(), page, h)
	return nil
}
