package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/warmstat/warmstat/base/cachedir"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/warmstat/warmstat/analyze"
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
			fs[i] = &cli.StringSliceFlag{Name: "gate", Usage: "COLLECTION/METRIC: the one metric every series of the bisect judges (default: the dominant collection's mean)"}
		}
	}
	return fs
}

func runBisect(ctx context.Context, cmd *cli.Command) error {
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
	format := cmd.String("format")
	if format != "text" && format != "md" && format != "json" {
		return usageError(cmd, "--format %q: text, md or json", format)
	}
	if g := cmd.StringSlice("gate"); len(g) > 1 {
		return usageError(cmd, "bisect decides on one gate (--gate %s ...): name the one to bisect on", g[0])
	}
	if d := cmd.String("direction"); d != "slower" && d != "faster" {
		return usageError(cmd, "--direction %q: slower or faster", d)
	}
	faster := cmd.String("direction") == "faster"
	m, err := prepareMethod(ctx, cmd)
	if err != nil {
		return err
	}
	gate, err := bisectGate(cmd, m)
	if err != nil {
		return err
	}
	root, err := filepath.Abs(cmd.String("evita-home"))
	if err != nil {
		return err
	}
	if r, err := filepath.EvalSymlinks(root); err == nil { // one checkout, one plan, however it is reached
		root = r
	}
	dir, err := filepath.Abs(cmd.String("out"))
	if err != nil {
		return err
	}
	if err := bisectDirUsable(dir, root); err != nil {
		return usageError(cmd, "%v", err)
	}
	cache := cmd.String("build-cache")
	if cache == "" {
		cache = filepath.Join(cachedir.Root(), "builds")
	}
	if err := writable(cache); err != nil {
		return fmt.Errorf("--build-cache %s: %w", cache, err)
	}
	if _, err := writerProfiler(cmd, filepath.Join(dir, "work"), nil); err != nil {
		return err
	}
	errw, out := cmd.Root().ErrWriter, cmd.Root().Writer
	ctx, stop := interruptible(ctx, errw)
	defer stop()
	good, commits, err := bisect.Range(ctx, root, cmd.String("good"), cmd.String("bad"))
	if err != nil {
		return usageError(cmd, "%v", err)
	}
	// one bisect at a time in a directory: a second would build and run into the
	// first one's work directory (an absent directory is made as warmstat's own)
	release, err := series.LockDir(dir)
	if err != nil {
		return err
	}
	defer release()
	// every probe's plan, its two builds aside
	probePlan := m.Plan(nil, nil)
	probePlan.Gates = []string{gate}
	rendered, _ := json.Marshal(probePlan)
	plan := bisect.Plan{Root: root, Good: good.Hash, Bad: commits[len(commits)-1].Hash, BuildCommand: cmd.String("build-cmd"),
		JarPath: cmd.String("server-jar-path"), Gate: gate, Faster: faster, Series: string(rendered)}
	st, err := bisect.Open(dir, plan, good, commits, time.Now())
	if errors.Is(err, bisect.ErrPlanDiffers) {
		return usageError(cmd, "%v", err)
	}
	if err != nil {
		return err
	}
	b := &bisect.Builder{Root: root, Command: plan.BuildCommand, JarPath: plan.JarPath, Cache: cache, WorkDir: filepath.Join(dir, "work"),
		RetryFailed: cmd.Bool("rebuild-failed"),
		Progress:    func(msg string) { fmt.Fprintf(errw, "%s %s\n", time.Now().Format("15:04:05"), msg) }}
	subject := map[string]bisect.Commit{good.Hash: good}
	for _, c := range commits {
		subject[c.Hash] = c
	}
	expected := "1 series: the confirmation"
	if len(commits) > 1 {
		expected = fmt.Sprintf("about %d series: a confirmation and ⌈log₂ %d⌉ probes", bisect.ExpectedSeries(len(commits)), len(commits))
	}
	fmt.Fprintf(errw, "bisect %s..%s in %s: %s, %s, gate %s\n",
		good.Short(), commits[len(commits)-1].Short(), root, report.Plural(len(commits), "commit"), expected, gate)
	began := time.Now()
	measure := func(ctx context.Context, a, bc string) (bisect.Result, error) {
		sides := map[string]*method.Side{}
		for _, s := range []string{"A", "B"} {
			c := map[string]string{"A": a, "B": bc}[s]
			bld, err := buildOnce(ctx, st, dir, b, c)
			if err != nil {
				return bisect.Result{}, err
			}
			if bld.Failed() {
				return bisect.Result{}, &bisect.Skip{Commit: c, Reason: "its build failed: " + bld.Error + " (log " + bld.Log + ")"}
			}
			src, err := evitaserver.ParseSource("jar:" + bld.Jar)
			if err == nil {
				sides[s], err = m.Side(src, "commit:"+c, subject[c].Short(), s, say(cmd))
			}
			if err != nil {
				return bisect.Result{}, &bisect.Skip{Commit: c, Reason: "its server jar: " + err.Error()}
			}
		}
		rel := filepath.Join("probes", subject[bc].Short()+"-vs-"+subject[a].Short())
		sdir := filepath.Join(dir, rel)
		sp := m.Plan(sides["A"], sides["B"])
		sp.Gates = []string{gate}
		done := len(st.Probes)
		fmt.Fprintf(errw, "%s series %d (about %d in all%s): %s against %s, in %s\n", time.Now().Format("15:04:05"), done+1,
			max(done+1, bisect.ExpectedSeries(len(commits))), etaWords(st, len(commits)), subject[bc].Short(), subject[a].Short(), rel)
		s, err := series.Execute(ctx, seriesConfig(cmd, m, sdir, m.WorkloadFile(dir), sides, sp, began))
		if errors.Is(err, series.ErrRunFailedTwice) {
			if e, ok := lastFailed(s); ok {
				c := map[string]string{"A": a, "B": bc}[e.Side]
				return bisect.Result{}, &bisect.Skip{Commit: c, Reason: "its runs failed twice: " + e.Reason}
			}
		}
		var ref *analyze.Refusal
		if errors.As(err, &ref) {
			return bisect.Result{}, refusal(ref)
		}
		if err != nil {
			return bisect.Result{}, err
		}
		r := bisect.Result{A: a, B: bc, Verdict: analyze.Unresolved, Series: rel, Runs: s.Outcome.Runs}
		for _, g := range s.Outcome.Gates {
			if g.Gate == gate {
				r.Gate, r.Verdict = g, g.Verdict
			}
		}
		fmt.Fprintf(errw, "  %s against %s: %s %s after %s per side\n", subject[bc].Short(), subject[a].Short(), gate, report.BisectChange(r), report.Plural(r.Runs, "run"))
		return r, nil
	}
	hashes := make([]string, len(commits))
	for i, c := range commits {
		hashes[i] = c.Hash
	}
	o, err := bisect.SearchFor(ctx, good.Hash, hashes, st.Remembering(dir, measure, time.Now), faster)
	if err != nil {
		var sk *bisect.Skip
		if errors.As(err, &sk) { // an end cannot be measured: recorded, nothing to bisect
			if ferr := st.Finish(dir, o); ferr != nil {
				return ferr
			}
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
	if err := st.Finish(dir, o); err != nil {
		return err
	}
	switch format {
	case "json":
		if err := report.WriteJSON(out, st); err != nil {
			return err
		}
	default:
		report.BisectResult(out, st, o, subject, format == "md", probePlan.AlphaPct)
	}
	if o.Kind != bisect.Found {
		return withCode(exitRefused, fmt.Errorf("bisect: %s", report.BisectSummary(o, subject)))
	}
	return nil
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

// buildOnce is commit's build, recorded in the bisect's state.
func buildOnce(ctx context.Context, st *bisect.State, dir string, b *bisect.Builder, commit string) (bisect.Build, error) {
	bld, err := b.Build(ctx, commit)
	if err != nil {
		return bld, err
	}
	if _, ok := st.Builds[commit]; !ok {
		st.Builds[commit] = bld
		if err := st.Save(dir); err != nil {
			return bld, err
		}
	}
	return bld, nil
}

func lastFailed(s *series.State) (series.Entry, bool) {
	if s == nil {
		return series.Entry{}, false
	}
	for i := len(s.Entries) - 1; i >= 0; i-- {
		if e := s.Entries[i]; e.Status == series.Failed {
			return e, true
		}
	}
	return series.Entry{}, false
}

// etaWords is ", ETA 4m0s" from the series done so far ("" before the first).
func etaWords(st *bisect.State, commits int) string {
	if d, ok := st.Remaining(commits); ok {
		return ", ETA " + d.Round(time.Minute).String()
	}
	return ""
}

// bisectDirUsable refuses a bisect directory warmstat would not own: one inside the
// checkout (which is only read), or an existing directory with files and no bisect in
// it (someone else's).
func bisectDirUsable(dir, root string) error {
	if rel, err := filepath.Rel(root, dir); err == nil && filepath.IsLocal(rel) || dir == root {
		return fmt.Errorf("--out %s is inside the checkout %s, which a bisect only reads: give a directory outside it", dir, root)
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--out %s: %w", dir, err)
	}
	if len(entries) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, bisect.File)); err != nil {
		return fmt.Errorf("--out %s holds files and no %s: not a bisect warmstat started; give a new or empty directory", dir, bisect.File)
	}
	return nil
}

// writable makes dir if needed and proves a file can be written in it.
func writable(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".writable-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}
