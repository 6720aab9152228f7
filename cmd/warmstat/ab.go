package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/base/staging"
	"github.com/warmstat/warmstat/embedded"
	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/loader"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/seed"
	"github.com/warmstat/warmstat/series"
	"github.com/warmstat/warmstat/workload"
)

func abCommand() *cli.Command {
	return &cli.Command{
		Name:  "ab",
		Usage: "an interleaved A/B series of spawn-mode loads that stops as soon as the answer is known",
		Description: "With no source given, the series asks its question of warmstat's default catalog (generated once into\n" +
			"warmstat's cache at the scale the measurements chose, 0.1), replayed by the embedded writer and gated on the\n" +
			"Product mean with the machine's speed set aside (Product/mean_adj), watching the Product's allocation per\n" +
			"upsert (Product/alloc: shown in the answer, not waited for): warmstat ab --a 2026.2.2 --b 2026.2.3 is the whole\n" +
			"command, into ab-A-vs-B/ unless --out says otherwise.\n\n" +
			"Loads --pristine DIR --catalog NAME with build --a and build --b in ABBA order (after --warmup runs per\n" +
			"side, kept out of the analysis) into --out SERIES/A/run-N and SERIES/B/run-N: ordinary run directories, so\n" +
			"report, compare, table and plot work on a series. A build is a release version, \"classpath:CP\",\n" +
			"\"jar:FILE\" (a runnable server jar) or \"checkout:DIR\" (an evitaDB checkout); a directory, a .jar file or\n" +
			"a value with ':' or '/' is taken for what it is. Heaps and conditions are the same on both sides.\n\n" +
			"After every pair of runs from --min-runs on, the gated metrics (--gate, default the dominant\n" +
			"collection's mean and */ingest) are analysed with a sequential interval: the false-verdict budget\n" +
			"(--alpha, 5 %) is spent across the looks up to --max-runs, so that looking repeatedly does not make a\n" +
			"verdict. The series stops when every gate is faster, slower or equivalent (inside ±--threshold), or at\n" +
			"--max-runs; a --watch metric is judged and shown the same way but not waited for. Each run's headline figures are listed, a run that stands out from its side is flagged with\n" +
			"the reason and the machine's state around it (--rerun-outliers replaces it, recorded).\n\n" +
			"SERIES/series.json holds the plan, the order, every run and look. Running the same command again\n" +
			"continues a series that stopped; a run that did not finish or failed is moved to SERIES/excluded with\n" +
			"its reason and run again. At the end: the compare, the table and SERIES/compare.svg.\n" +
			"--replay extracts the snapshot once into SERIES/workload.wsw when the series starts (checksummed at every\n" +
			"start and end, like the snapshot) and replays it in every run of both sides: no reader runs beside the writer.\n" +
			"--workload FILE replays a workload warmstat extract made instead of a snapshot (only read; no reader).\n" +
			"--pairs N runs exactly N pairs with one look at the end: each machine of a fleet runs the same, and\n" +
			"warmstat combine judges their series together. Heaps not given are chosen from the snapshot's (or the\n" +
			"workload's) record, as load chooses them.\n" +
			"With --target-mode embedded each run's writer is warmstat's embedded writer (no transport): the builds are\n" +
			"compared on the engine's write path alone.\n" +
			"--duet makes every pair a duet: both builds replay the workload at the same time, warmed behind a barrier,\n" +
			"in lock-step by batch, each writer pinned to its half of the CPUs, the halves alternating pair by pair and\n" +
			"analysed as a factor (a duet series looks first at 4 duets); the machine's noise falls on both runs alike.\n" +
			"--stop-after N ends this invocation after N more pairs; the same command continues the series.\n" +
			"Exit codes as compare: 0, 1 a failure (an interrupted series: the same command continues it), 2 usage,\n" +
			"3 refused, 4 a gate slower with --fail-on-regression; 130 / 143 a second Ctrl-C or SIGTERM: stopped at once." +
			examples("warmstat ab --a 2026.2.2 --b 2026.2.3",
				"warmstat ab --pristine /var/tmp/ws/pristine --catalog shop --a 2026.2.3 --b checkout:~/src/evitaDB --replay --writer-warm-up 1 --out series/my-branch",
				"warmstat ab --workload /var/tmp/ws/shop.wsw --a 2026.2.2 --b 2026.2.3 --pairs 5 --out series/m1",
				"warmstat ab --workload /var/tmp/ws/shop.wsw --a 2026.2.2 --b 2026.2.3 --duet --target-mode embedded --writer-warm-up 1 --out series/duet"),
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
		&cli.IntFlag{Name: "writer-warm-up", Usage: "0 to 5: in every run, loads into a throwaway catalog of the writer (published, then deleted) before the measured load: the runs time compiled code, as a production server's next publish does (recorded)"},
		&cli.BoolFlag{Name: "unpaired", Usage: "analyse the two sides as independent groups (welch-t) instead of by the series' pairs (paired-t)"},
		&cli.IntFlag{Name: "max-runs", Value: 10, Usage: "runs per side at most"},
		&cli.IntFlag{Name: "warmup", Value: 0, Usage: "whole runs per side made first and kept out of the analysis (not --writer-warm-up, which warms each run's own writer before its measured load)"},
		&cli.FloatFlag{Name: "threshold", Value: 2, Usage: "noise threshold in %"},
		&cli.FloatFlag{Name: "alpha", Value: 5, Usage: "false-verdict budget in % across all looks, per gate"},
		&cli.StringSliceFlag{Name: "gate", Usage: "COLLECTION/METRIC (repeatable; default: the dominant collection's mean and */ingest)"},
		&cli.StringSliceFlag{Name: "watch", Usage: "COLLECTION/METRIC judged at every look and shown in the answer like a gate, but not waited for: the series stops when the gates have their answers (repeatable; needs --gate)"},
		&cli.BoolFlag{Name: "rerun-outliers", Usage: "replace a run that stands out from its side (recorded), once"},
		&cli.IntFlag{Name: "batch-size", Value: workload.DefaultBatchSize, Usage: "primary keys per source fetch"},
		&cli.IntFlag{Name: "max-per-collection", Usage: "cap per collection (0 = all)"},
		&cli.BoolFlag{Name: "prefetch", Usage: "overlap the next source fetch with upserts"},
		&cli.StringFlag{Name: "target-mode", Value: "remote", Usage: "remote | embedded (with --replay: every run's writer is warmstat's embedded writer, the engine in one JVM with no transport)"},
		&cli.BoolFlag{Name: "replay", Usage: "read the snapshot once into SERIES/workload.wsw (by build A, with --reader-heap) when the series starts, and replay it in every run: only the writer runs"},
		&cli.StringFlag{Name: "duet-placement", Value: "split", Usage: "with --duet: split (each writer pinned to its half of the CPUs, told its CPU count) | shared (both writers on every CPU, placed by the kernel)"},
		&cli.BoolFlag{Name: "duet", Usage: "every pair is a duet: both builds replay the workload at once, in lock-step by batch, each writer pinned to half the CPUs, the halves alternating pair by pair (needs --replay or --workload; compared only with duet runs)"},
	), writerProfileFlags()...)
}

// abSide is one build of a series.
type abSide struct {
	src   evitaserver.Source
	label string
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
	ss, err := readSeriesSettings(cmd)
	if err != nil {
		return err
	}
	if err := gatesInSource(cmd, ss.sourceName(), ss.counts(), append(ss.gates(), ss.watch()...)); err != nil {
		return err // before the builds are identified and compiled
	}
	sides := map[string]*abSide{}
	for _, s := range []string{"a", "b"} {
		side, err := ss.side(srcs[s], cmd.String("label-"+s), strings.ToUpper(s))
		if err != nil {
			return fmt.Errorf("--%s: %w", s, err)
		}
		sides[strings.ToUpper(s)] = side
	}
	if sides["A"].label == sides["B"].label {
		sides["A"].label, sides["B"].label = "A-"+sides["A"].label, "B-"+sides["B"].label
	}
	out := cmd.String("out")
	if out == "" {
		out = defaultSeriesDir(sides["A"].label, sides["B"].label)
		fmt.Fprintf(cmd.Root().ErrWriter, "series directory: %s (--out DIR to choose; the same command continues it)\n", out)
	}
	dir, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	plan := ss.plan(sides, cmd.String("a"), cmd.String("b"))
	if cmd.IsSet("pairs") {
		if err := fixedPairs(cmd, &plan); err != nil {
			return err
		}
	}
	if plan.Duet && plan.MaxRuns < 4 {
		return usageError(cmd, "a duet series of %d duets: it is analysed with the slot as a factor (n-2 degrees of freedom) and looks first at 4 duets, two in each placement; give --max-runs (or --pairs) 4 or more", plan.MaxRuns)
	}
	if plan.Method() == analyze.Paired && plan.MaxRuns < 3 {
		fmt.Fprintf(cmd.Root().ErrWriter, "warning: a paired series of %d pairs judges at its only look on an interval of one degree of freedom, so wide it rarely resolves anything; --max-runs 3 or more\n", plan.MaxRuns)
	}
	if _, err := writerProfiler(cmd, filepath.Join(dir, "work"), nil); err != nil { // a bad profiler flag, before any run
		return err
	}
	errw := cmd.Root().ErrWriter
	ctx, stop := interruptible(ctx, errw)
	defer stop()
	sc := ss.config(dir, ss.workloadFile(dir), sides, plan, time.Now())
	sc.StopAfter = cmd.Int("stop-after")
	st, err := series.Execute(ctx, sc)
	if errors.Is(err, series.ErrPaused) {
		fmt.Fprintf(errw, "stopped after %s as asked (--stop-after): %d of the series' pairs done; the same command continues it\n",
			report.Plural(sc.StopAfter, "pair"), st.Done("A", series.Measured))
		return nil
	}
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
	if err != nil {
		return err
	}
	return finishSeries(ctx, cmd, st, dir, f)
}

// defaultSeriesDir is a series' directory when --out is not given: ab-A-vs-B, each
// label kept to the characters a file name takes everywhere.
func defaultSeriesDir(a, b string) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
				return r
			}
			return '_'
		}, s)
	}
	return "ab-" + clean(a) + "-vs-" + clean(b)
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

// seriesSettings are the flags every series of a command shares (ab, bisect), all
// checked before the first server starts: a bad one must not cost runs.
type seriesSettings struct {
	cmd        *cli.Command
	cond       conditions
	compress   bool
	targetMode string
	pristine   string // the snapshot, or "" with a workload
	catalog    string
	workload   *workload.Info // --workload, proved whole
	// snapshotCompress is --snapshot-compress: a snapshot without warmstat's metadata
	snapshotCompress *bool
	mach             evitaserver.Machine
	cpus             [2][]int // --duet: the CPU sets of slots 1 and 2 (nil: shared, unpinned)
	// defaultSource: no source was given, so the series asks its question of the
	// built-in default catalog at DefaultScale
	defaultSource bool
	// dominant is the catalog's dominant collection (analyze.Dominant), the one the
	// faithful method gates on and watches; "" when the gates were given
	dominant string
}

// The question asked with no source of its own: the built-in default catalog at the
// scale the measurements chose (docs/measuring.md, "the cheapest faithful scale"),
// generated once into warmstat's cache, replayed by the embedded writer, gated on the
// Product mean with the machine's speed set aside, and watching the Product's
// allocation per upsert (the quietest figure measured, 0.06-0.8 % per run at 0.1): shown
// in the answer, not waited for, so a change of time that allocates nothing more is
// answered as soon as its time is (a 5 % spin: at 4 pairs, where settling the
// allocation's equivalence would have taken twice as many).
const DefaultScale = 0.1

// duet: every pair of the series is a duet (--duet).
func (ss *seriesSettings) duet() bool { return ss.cmd.Bool("duet") }

func readSeriesSettings(cmd *cli.Command) (*seriesSettings, error) {
	cond, err := parseConditions(cmd)
	if err != nil {
		return nil, err // a usage error already
	}
	ss := &seriesSettings{cmd: cmd, cond: cond, compress: true}
	if err := loadLimits(cmd); err != nil {
		return nil, err
	}
	if cmd.IsSet("alpha") && cmd.Float("alpha") == 0 {
		return nil, usageError(cmd, "--alpha 0: the false-verdict budget is a percentage above 0 and below 50")
	}
	check := analyze.SequentialPlan{MinRuns: cmd.Int("min-runs"), MaxRuns: cmd.Int("max-runs"), AlphaPct: cmd.Float("alpha"),
		ThresholdPct: cmd.Float("threshold"), Gates: cmd.StringSlice("gate"), Watch: cmd.StringSlice("watch")}
	if err := check.Check(); err != nil {
		return nil, err
	}
	if len(check.Watch) > 0 && len(check.Gates) == 0 {
		return nil, usageError(cmd, "--watch shows a metric beside the gates: name the gates too (--gate)")
	}
	ss.defaultSource = cmd.String("workload") == "" && cmd.String("pristine") == "" && cmd.String("catalog") == "" && !cmd.Bool("replay")
	// the faithful method for every source: the catalog read once and replayed by the
	// engine alone (a snapshot is extracted into the series' workload when it starts);
	// --target-mode remote is the older way, a remote writer beside a reader
	mode := cmd.String("target-mode")
	if !cmd.IsSet("target-mode") {
		mode = runfmt.TargetEmbedded
	}
	switch mode {
	case runfmt.TargetRemote:
	case runfmt.TargetEmbedded:
		ss.targetMode = runfmt.TargetEmbedded
	default:
		return nil, usageError(cmd, "--target-mode %q: remote or embedded", cmd.String("target-mode"))
	}
	if cmd.Bool("duet") {
		if !ss.replay() && !ss.defaultSource {
			return nil, usageError(cmd, "--duet replays one workload in both writers at once: it needs --replay or --workload (two live loads would add two reader JVMs to the machine)")
		}
		if cmd.Bool("unpaired") {
			return nil, usageError(cmd, "--duet is analysed by its duets (paired, with the slot as a factor): --unpaired does not apply")
		}
		switch cmd.String("duet-placement") {
		case "split":
			cpus, err := evitaserver.AvailableCPUs()
			if err == nil {
				ss.cpus, err = evitaserver.SplitCPUs(cpus)
			}
			if err != nil {
				return nil, withCode(exitUsage, fmt.Errorf("--duet: %w", err))
			}
		case "shared": // both writers on every CPU: the kernel places them
		default:
			return nil, usageError(cmd, "--duet-placement %q: split or shared", cmd.String("duet-placement"))
		}
	} else if cmd.IsSet("duet-placement") {
		return nil, usageError(cmd, "--duet-placement places a duet's writers: it needs --duet")
	}
	if (ss.replay() || cmd.String("workload") != "") && (cmd.Bool("prefetch") || cmd.IsSet("batch-size")) {
		return nil, usageError(cmd, "--prefetch and --batch-size shape reading a source server; a replay reads its workload as it was extracted")
	}
	if (cmd.String("workload") != "" || ss.defaultSource) && cmd.IsSet("max-per-collection") {
		return nil, usageError(cmd, "--max-per-collection: a workload file holds what it was extracted with (warmstat extract --max-per-collection)")
	}
	if ss.defaultSource && (cmd.Bool("prefetch") || cmd.IsSet("batch-size")) {
		return nil, usageError(cmd, "--prefetch and --batch-size shape reading a source server; the default catalog is replayed from a workload")
	}
	if _, err := writerWarmUp(cmd); err != nil {
		return nil, err
	}
	if w := cmd.Int("warmup"); w < 0 || w > 10 {
		return nil, usageError(cmd, "--warmup %d: must be 0 to 10", w)
	}
	if ss.mach, err = evitaserver.ReadMachine(); err != nil {
		return nil, err
	}
	// heaps given are checked before the source is: a setting no run can have
	given := map[string]int64{}
	if cond.serverHeap != nil {
		given["writer"] = *cond.serverHeap
	}
	if cond.readerHeap != nil && cmd.String("workload") == "" && !ss.defaultSource {
		given["reader"] = *cond.readerHeap
	}
	if err := evitaserver.CheckHeapsFit(ss.mach, given); err != nil {
		return nil, err
	}
	leanRuntime()
	if cond.compress != nil {
		ss.compress = *cond.compress
	}
	if err := ss.readSource(); err != nil {
		return nil, err
	}
	if err := ss.chooseGates(); err != nil {
		return nil, err
	}
	if err := ss.chooseHeaps(); err != nil {
		return nil, err
	}
	if ss.faithful() && ss.dominant == "" {
		return nil, usageError(cmd, "%s records no collections to choose the gate from (its dominant collection's mean): name one with --gate COLLECTION/mean_adj", ss.sourceName())
	}
	heaps := map[string]int64{"writer": *ss.cond.serverHeap}
	if ss.workload == nil {
		heaps["reader"] = *ss.cond.readerHeap
	}
	if ss.duet() { // both writers at once (the reader extracts alone, before any run)
		heaps = map[string]int64{"writer A": *ss.cond.serverHeap, "writer B": *ss.cond.serverHeap}
	}
	if err := evitaserver.CheckHeapsFit(ss.mach, heaps); err != nil {
		return nil, err // a setting no run can have: not a failed run to retry
	}
	return ss, nil
}

// chooseHeaps settles the heaps not given as load does (loader.ChooseHeaps): from the
// snapshot's metadata, or the workload's record of its snapshot; given ones are checked
// against the measured need. The plan then fixes them for every run.
func (ss *seriesSettings) chooseHeaps() error {
	cmd, cond := ss.cmd, &ss.cond
	sc := loader.SpawnConfig{Pristine: ss.pristine, Catalog: ss.catalog, SnapshotCompress: ss.snapshotCompress}
	if cond.serverHeap != nil {
		sc.ServerHeap = *cond.serverHeap
	}
	if cond.readerHeap != nil {
		sc.ReaderHeap = *cond.readerHeap
	}
	var replay *workload.Header
	if ss.workload != nil {
		replay = &ss.workload.Header
	}
	// the faithful method's writer holds its catalog as production's does (its heap at
	// production's ratio to the live set): measured quieter than the rule below it
	live := ss.liveHeap(replay)
	ratio := ss.targetMode == runfmt.TargetEmbedded && cond.serverHeap == nil && live > 0 && !ss.duet()
	if ratio {
		sc.ServerHeap = max(evitaserver.HeapAtProductionRatio(live), evitaserver.NeedHeap(live))
		if sc.ServerHeap > ss.mach.LargestHeap() { // this machine cannot: the rule below
			ratio, sc.ServerHeap = false, 0
		}
	}
	if err := loader.ChooseHeaps(&sc, replay, "writer", "reader"); err != nil {
		return withCode(exitUsage, spawnHint(err))
	}
	var chosen []string
	switch {
	case ratio:
		fmt.Fprintf(cmd.Root().ErrWriter, "writer heap: --server-heap %s, production's ratio of heap to live set (2.84 × the catalog's %s live, rounded up to 256 MiB steps)\n",
			runfmt.FormatBytesExact(&sc.ServerHeap), runfmt.FormatSize(live))
	case cond.serverHeap == nil:
		chosen = append(chosen, "--server-heap "+runfmt.FormatBytesExact(&sc.ServerHeap))
	}
	if cond.readerHeap == nil && ss.workload == nil {
		chosen = append(chosen, "--reader-heap "+runfmt.FormatBytesExact(&sc.ReaderHeap))
	}
	if len(chosen) > 0 {
		fmt.Fprintf(cmd.Root().ErrWriter, "heaps chosen from %s's record (as load chooses them): %s\n", ss.sourceName(), strings.Join(chosen, ", "))
	}
	if sc.HeapNote != "" {
		fmt.Fprintf(cmd.Root().ErrWriter, "note: %s\n", sc.HeapNote)
	}
	cond.serverHeap = &sc.ServerHeap
	if ss.workload == nil {
		cond.readerHeap = &sc.ReaderHeap
	}
	return nil
}

// liveHeap is what holding the series' catalog costs, as its source records it (0 when
// it records nothing): a snapshot's live heap measured when it was seeded, else the
// estimate made for its entities; a workload's record of either.
func (ss *seriesSettings) liveHeap(replay *workload.Header) int64 {
	if replay != nil {
		return cmp.Or(deref(replay.SnapshotLiveHeapBytes), deref(replay.LiveHeapEstimateBytes))
	}
	info, err := evitaserver.ReadSnapshot(ss.pristine, ss.catalog)
	switch {
	case err != nil:
		return 0
	case info.LiveHeapBytes != nil:
		return *info.LiveHeapBytes
	case info.Size != nil:
		return info.Size.LiveHeapEstimateBytes
	}
	return 0
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// readSource reads the series' source: --pristine DIR --catalog NAME (a snapshot), or
// --workload FILE (a workload proved whole now, before any directory is made).
func (ss *seriesSettings) readSource() error {
	cmd := ss.cmd
	if ss.defaultSource {
		return ss.readDefaultSource()
	}
	if w := cmd.String("workload"); w != "" {
		for _, f := range []string{"pristine", "catalog", "reader-heap", "snapshot-compress", "replay"} {
			if cmd.IsSet(f) {
				return usageError(cmd, "--workload replaces --pristine and --catalog (a replay with no reader): --%s does not apply", f)
			}
		}
		path, err := filepath.Abs(w)
		if err != nil {
			return err
		}
		info, err := workload.Verify(path)
		if err != nil {
			return fmt.Errorf("--workload: %w", err)
		}
		ss.workload, ss.catalog = &info, info.Header.Catalog
		return nil
	}
	if cmd.String("pristine") == "" || cmd.String("catalog") == "" {
		return usageError(cmd, "%s needs its source: --pristine DIR --catalog NAME (a snapshot), or --workload FILE", cmd.Name)
	}
	var err error
	if ss.pristine, err = filepath.Abs(cmd.String("pristine")); err != nil {
		return err
	}
	ss.catalog = cmd.String("catalog")
	if ss.snapshotCompress, err = optBool(cmd, "snapshot-compress"); err != nil {
		return err
	}
	if st, err := os.Stat(filepath.Join(ss.pristine, ss.catalog)); err != nil || !st.IsDir() { // before any directory is made
		return usageError(cmd, "--pristine %s: no catalog directory %q there (a pristine snapshot is made by warmstat seed --pristine)", ss.pristine, ss.catalog)
	}
	return nil
}

// readDefaultSource is the source of a series given none: the built-in default catalog
// at DefaultScale, generated into warmstat's cache the first time, said in the first
// lines of the output with the settings that go with it.
func (ss *seriesSettings) readDefaultSource() error {
	cmd, errw := ss.cmd, ss.cmd.Root().ErrWriter
	for _, f := range []string{"reader-heap", "snapshot-compress"} {
		if cmd.IsSet(f) {
			return usageError(cmd, "--%s: with no source given the series replays the default catalog (no reader, no snapshot)", f)
		}
	}
	ctx, stop := interruptible(context.Background(), errw)
	defer stop()
	begin := time.Now()
	info, generated, err := seed.CachedDefault(ctx, DefaultScale, liveProgress(errw))
	if errors.Is(err, context.Canceled) {
		return errors.New("interrupted: the default catalog was not generated (nothing is left of it)")
	}
	if err != nil {
		return err
	}
	ss.workload, ss.catalog = &info, info.Header.Catalog
	how := "cached"
	if generated {
		how = fmt.Sprintf("generated now in %s, then cached", time.Since(begin).Round(100*time.Millisecond))
	}
	fmt.Fprintf(errw, "no source given: the question is asked of warmstat's default catalog at scale %g (%s entities; %s: %s),\n",
		DefaultScale, report.Int(info.Trailer.Entities), how, info.Path)
	if !ss.faithful() { // a duet, a remote writer or gates given: said as they are
		fmt.Fprintf(errw, "replayed in every run by the %s writer;\nyour own catalog: --workload FILE or --pristine DIR --catalog NAME (docs/ab.md)\n",
			map[bool]string{true: "embedded", false: "remote"}[ss.targetMode == runfmt.TargetEmbedded])
	}
	return nil
}

// sourceName is what the series reads, for messages: "the snapshot" or "the workload".
func (ss *seriesSettings) sourceName() string {
	if ss.workload != nil {
		return "the workload"
	}
	return "the snapshot"
}

// replay: every run replays a workload file (the series' own, or --workload); the
// embedded writer always does.
func (ss *seriesSettings) replay() bool {
	return ss.workload != nil || ss.cmd.Bool("replay") || ss.targetMode == runfmt.TargetEmbedded
}

// workloadFile is the workload the series in dir replays: --workload, or the one it
// extracts into its directory.
func (ss *seriesSettings) workloadFile(dir string) string {
	if ss.workload != nil {
		return ss.workload.Path
	}
	return filepath.Join(dir, "workload.wsw")
}

// counts are the source's collections and their entities (nil when unknown): the
// workload's header, or the snapshot's metadata.
func (ss *seriesSettings) counts() map[string]int64 {
	if ss.workload != nil {
		return ss.workload.Header.SourceCounts
	}
	info, err := evitaserver.ReadSnapshot(ss.pristine, ss.catalog)
	if err != nil || len(info.Counts) == 0 {
		return nil
	}
	counts := map[string]int64{}
	for n, c := range info.Counts {
		counts[n] = int64(c)
	}
	return counts
}

// side is src as one side of a series: identified (and, for the embedded writer,
// compiled) before any run, labelled label or else by its version, else by fallback.
func (ss *seriesSettings) side(src evitaserver.Source, label, fallback string) (*abSide, error) {
	id, err := src.Identify()
	if err != nil {
		return nil, err
	}
	if label == "" {
		label = cmp.Or(id.Version, fallback)
	}
	if ss.targetMode == runfmt.TargetEmbedded { // refused, or compiled, before any run
		if _, err := embedded.Build(src, id, func(msg string) { fmt.Fprintln(ss.cmd.Root().ErrWriter, msg) }); err != nil {
			return nil, err
		}
	}
	return &abSide{src: src, label: label}, nil
}

// plan is the series of sides B against A, each named by its spec as given.
func (ss *seriesSettings) plan(sides map[string]*abSide, specA, specB string) series.Plan {
	plan := ss.basePlan()
	for s, spec := range map[string]string{"A": specA, "B": specB} {
		id, _ := sides[s].src.Identify()
		b := series.Build{Spec: spec, Label: sides[s].label,
			Identity: fmt.Sprintf("%s@%s classpath-sha256 %.16s", cmp.Or(id.Version, "unknown"), cmp.Or(id.BuildCommit, "unknown"), id.ClasspathSHA256)}
		if s == "A" {
			plan.A = b
		} else {
			plan.B = b
		}
	}
	return plan
}

// basePlan is a series' plan without its two builds.
func (ss *seriesSettings) basePlan() series.Plan {
	cmd := ss.cmd
	var readerHeap int64
	if ss.cond.readerHeap != nil {
		readerHeap = *ss.cond.readerHeap
	}
	var wl string
	if ss.workload != nil {
		wl = ss.workload.Path
	}
	return series.Plan{Pristine: ss.pristine, Catalog: ss.catalog, Workload: wl, ServerHeap: *ss.cond.serverHeap, ReaderHeap: readerHeap,
		Conditions: fmt.Sprintf("storage.compress=%t batch=%d cap=%d prefetch=%t writer-profile=%s/%s", ss.compress, cmd.Int("batch-size"),
			cmd.Int("max-per-collection"), cmd.Bool("prefetch"), cmd.String("writer-profile"), cmd.String("writer-profile-interval")) + jvmConditions(cmd) + snapshotCondition(ss.snapshotCompress) + ss.duetCondition(),
		MinRuns: cmd.Int("min-runs"), MaxRuns: cmd.Int("max-runs"), Warmup: cmd.Int("warmup"), ThresholdPct: cmd.Float("threshold"),
		AlphaPct: cmd.Float("alpha"), Gates: ss.gates(), Watch: ss.watch(), RerunOutliers: cmd.Bool("rerun-outliers"), Replay: ss.replay(),
		TargetMode: ss.targetMode, Unpaired: cmd.Bool("unpaired"), Duet: ss.duet()}
}

// gates are --gate, or the faithful method's: the dominant collection's mean with the
// machine's speed set aside.
func (ss *seriesSettings) gates() []string {
	if ss.dominant == "" {
		return ss.cmd.StringSlice("gate")
	}
	return []string{ss.dominant + "/mean_adj"}
}

// watch are --watch, or with the faithful method's gate what an upsert of the
// dominant collection allocates.
func (ss *seriesSettings) watch() []string {
	if ss.dominant == "" {
		return ss.cmd.StringSlice("watch")
	}
	return []string{ss.dominant + "/alloc"}
}

// faithful: the series asks its question the faithful way (the embedded writer, one
// series at a time, no gate given), so it gates on the dominant collection's adjusted
// mean and watches its allocation.
func (ss *seriesSettings) faithful() bool {
	return ss.targetMode == runfmt.TargetEmbedded && !ss.duet() && len(ss.cmd.StringSlice("gate")) == 0
}

// chooseGates settles the faithful method's gates on the catalog's dominant collection
// (analyze.Dominant over the source's entity counts), and says in the first lines how
// the question will be asked.
func (ss *seriesSettings) chooseGates() error {
	if !ss.faithful() {
		return nil
	}
	counts := ss.counts()
	ss.dominant = analyze.Dominant(counts)
	if ss.dominant == "" {
		return nil // a snapshot without metadata: refused once its heaps' refusal had its say
	}
	errw := ss.cmd.Root().ErrWriter
	if ss.defaultSource { // readDefaultSource named the catalog
		fmt.Fprintf(errw, "replayed in every run by the embedded writer, gated on %s (the %s mean with the machine's speed set aside), watching %s (what a %s upsert allocates: shown, not waited for);\n"+
			"your own catalog: --workload FILE or --pristine DIR --catalog NAME (docs/ab.md)\n", ss.gates()[0], ss.dominant, ss.watch()[0], ss.dominant)
		return nil
	}
	var n int64
	for _, c := range counts {
		n += c
	}
	what, how := "the snapshot "+filepath.Join(ss.pristine, ss.catalog), "read once into the series' workload.wsw by build A, replayed in every run by the embedded writer"
	if ss.workload != nil {
		what, how = "the workload "+ss.workload.Path, "replayed in every run by the embedded writer"
	}
	fmt.Fprintf(errw, "the question is asked of %s (%s entities): %s, gated on %s (the %s mean with the machine's speed set aside), watching %s (what a %s upsert allocates: shown, not waited for);\n"+
		"the older way (a remote writer and a reader in every run, gated on %s/mean and */ingest): --target-mode remote\n",
		what, report.Int(n), how, ss.gates()[0], ss.dominant, ss.watch()[0], ss.dominant, ss.dominant)
	return nil
}

// duetCondition is a duet series' placement in its plan's conditions (a resumed series
// must place its writers as it began): how, not which CPUs — those are the machine's,
// and a fleet's machines may differ in cores. Nothing for a sequential series.
func (ss *seriesSettings) duetCondition() string {
	if !ss.duet() {
		return ""
	}
	return " duet-placement=" + ss.cmd.String("duet-placement")
}

// config is the series of plan in dir: every run a spawn-mode load of its side; with
// --replay every run replays the workload file wl, extracted by side A's build when
// the file is not there yet.
func (ss *seriesSettings) config(dir, wl string, sides map[string]*abSide, plan series.Plan, began time.Time) series.Config {
	cmd, cond, pristine := ss.cmd, ss.cond, ss.pristine
	errw, out := cmd.Root().ErrWriter, progressWriter(cmd)
	// parts is one run of side into runDir: its writer and its load; done closes what
	// it opened (the workload's reader)
	parts := func(side, runDir, id, work string) (loader.DuetPart, func(), error) {
		s := sides[side]
		m := runfmt.Manifest{RunID: id, Build: runfmt.Build{Label: s.label}, Loader: runfmt.Loader{Version: runfmt.UnknownText(version)}, Machine: ss.mach.Record()}
		cond.apply(&m)
		sc := loader.SpawnConfig{Server: s.src, Pristine: pristine, Catalog: plan.Catalog, WorkDir: work, SnapshotCompress: ss.snapshotCompress,
			ServerHeap: plan.ServerHeap, ReaderHeap: plan.ReaderHeap, Compress: ss.compress, Probe: evita.Probe,
			Embedded: plan.TargetMode == runfmt.TargetEmbedded, WriterJVMOptions: cmd.StringSlice("writer-jvm-option"), NoClassArchive: cmd.Bool("no-class-archive"),
			WarmUp: cmd.Int("writer-warm-up")}
		lc := loader.Config{Out: runDir, BatchSize: cmd.Int("batch-size"), MaxPerCollection: cmd.Int("max-per-collection"),
			Prefetch: cmd.Bool("prefetch"), Manifest: m, Warnings: errw}
		done := func() {}
		if plan.Replay { // the workload is the source: proved whole before every run, no reader
			r, sum, err := openReplay(wl)
			if err != nil {
				return loader.DuetPart{}, nil, err
			}
			done = func() { r.Close() }
			sc.Pristine, sc.Catalog, sc.ReaderHeap = "", "", 0
			lc.Replay, lc.ReplayPath, lc.ReplaySHA256 = r, wl, sum
			lc.BatchSize, lc.MaxPerCollection = 0, 0 // the file's
		}
		prof, err := writerProfiler(cmd, work, func(s string) { fmt.Fprintf(errw, "warning: %s\n", s) })
		if err != nil {
			done()
			return loader.DuetPart{}, nil, err
		}
		if prof != nil { // a fresh profiler per run: each run's profile is its own
			sc.Profiler = prof
		}
		return loader.DuetPart{Spawn: sc, Load: lc}, done, nil
	}
	c := series.Config{Dir: dir, Plan: plan,
		Checksum: func() (string, error) { return evitaserver.Checksum(filepath.Join(pristine, plan.Catalog)) },
		Compare:  analyze.CompareOptions{Quantiles: analyze.QuantilesJava},
		Run: func(ctx context.Context, side, runDir, id, work string) error {
			part, done, err := parts(side, runDir, id, work)
			if err != nil {
				return err
			}
			defer done()
			fmt.Fprintf(errw, "%s %s (%s) ...\n", time.Now().Format("15:04:05"), runDir[len(dir)+1:], sides[side].label)
			_, err = loader.Spawn(ctx, part.Spawn, part.Load)
			return faultHint(err)
		},
		RunDuet: func(ctx context.Context, runs [2]series.DuetRun) [2]error {
			var ps [2]loader.DuetPart
			var errs [2]error
			for i, r := range runs {
				p, done, err := parts(r.Side, r.Dir, r.ID, r.Work)
				if err != nil {
					errs[i] = err
					return errs
				}
				defer done()
				ps[i] = p
			}
			cpus := func(i int) string {
				if ss.cpus[i] == nil {
					return "all CPUs"
				}
				return "CPUs " + evitaserver.FormatCPUs(ss.cpus[i])
			}
			fmt.Fprintf(errw, "%s duet: %s (%s, %s) with %s (%s, %s) ...\n", time.Now().Format("15:04:05"),
				runs[0].Dir[len(dir)+1:], sides[runs[0].Side].label, cpus(0), runs[1].Dir[len(dir)+1:], sides[runs[1].Side].label, cpus(1))
			_, errs = loader.Duet(ctx, ps, ss.cpus)
			for i := range errs {
				errs[i] = faultHint(errs[i])
			}
			return errs
		},
		OnRun: func(s *series.State, e series.Entry) {
			report.SeriesRun(out, s, e, s.Remaining(began, time.Now()))
		},
		OnLook: func(s *series.State, l series.LookRecord) {
			report.SeriesLook(out, s, l)
		},
	}
	if plan.Replay {
		c.Source = "the workload " + wl
		c.Checksum = func() (string, error) { return workload.FileSHA256(wl) }
		c.Prepare = func(ctx context.Context) error {
			if _, err := os.Stat(wl); err == nil {
				return nil // extracted when the series started; its checksum proves it unchanged
			}
			// an extraction the series did not finish (it was stopped) left its temporary file
			partial := staging.Leftovers(wl)
			for _, p := range partial {
				os.Remove(p)
			}
			fmt.Fprintf(errw, "%s extracting %s/%s into %s (build %s, reader heap %s) ...\n", time.Now().Format("15:04:05"), pristine, plan.Catalog,
				wl, sides["A"].label, runfmt.FormatBytesExact(&plan.ReaderHeap))
			ec := loader.ExtractConfig{Out: wl, BatchSize: cmd.Int("batch-size"), MaxPerCollection: cmd.Int("max-per-collection")}
			ec.Progress = liveProgress(errw)
			info, err := loader.SpawnExtract(ctx, loader.SpawnConfig{Server: sides["A"].src, Pristine: pristine, Catalog: plan.Catalog, SnapshotCompress: ss.snapshotCompress,
				WorkDir: filepath.Join(dir, "work"), ReaderHeap: plan.ReaderHeap, Probe: evita.Probe}, ec)
			if err != nil {
				return fmt.Errorf("extracting the series' workload: %w", faultHint(err))
			}
			fmt.Fprintf(errw, "workload: %d entities, %s, read in %s\n", info.Trailer.Entities, runfmt.FormatSize(info.Size),
				time.Duration(info.Trailer.ExtractNs).Round(time.Millisecond))
			return nil
		}
	}
	return c
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
	a, b := filepath.Join(dir, "A"), filepath.Join(dir, "B")
	fmt.Fprintf(detail, "\n== warmstat compare %s %s (95 %% intervals of the final runs; the series' verdicts below use the sequential interval)\n", a, b)
	run(ctx, []string{"warmstat", "compare", a, b}, detail, errw)
	fmt.Fprintf(detail, "\n== warmstat table --group %s %s\n", a, b)
	run(ctx, []string{"warmstat", "table", "--group", a, b}, detail, errw)
	svg := filepath.Join(dir, "compare.svg")
	run(ctx, []string{"warmstat", "plot", "--kind", "compare", "--out", svg, a, b}, detail, errw) // it says where it wrote

	ans := report.BuildSeriesAnswer(st, dir)
	if err := report.WriteSeriesAnswer(out, ans, f); err != nil {
		return err
	}
	if cmd.Bool("fail-on-regression") && len(ans.Slower) > 0 {
		return withCode(exitRegression, fmt.Errorf("regression: %s slower", strings.Join(ans.Slower, ", ")))
	}
	return nil
}

// gatesInSnapshot refuses a gate naming a collection the snapshot does not hold, before
// any run (compare refuses it too, but only once runs exist): the collections are in
// the snapshot's metadata. A snapshot without metadata is checked by the first look.
func gatesInSource(cmd *cli.Command, what string, counts map[string]int64, gates []string) error {
	if len(counts) == 0 {
		return nil
	}
	var names []string
	for n := range counts {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, g := range gates {
		coll, _, _ := strings.Cut(g, "/")
		if coll == "*" || counts[coll] != 0 || slices.Contains(names, coll) {
			continue
		}
		hint := ""
		for _, n := range names {
			if strings.EqualFold(n, coll) {
				hint = fmt.Sprintf("; names are case-sensitive: did you mean %s/%s?", n, strings.TrimPrefix(g, coll+"/"))
			}
		}
		return usageError(cmd, "%s %q: %s has no collection %q (it has %s or *)%s", gateFlagOf(cmd, g), g, what, coll, strings.Join(names, ", "), hint)
	}
	return nil
}

// snapshotCondition is --snapshot-compress in a plan's conditions (nothing when not
// given: a seeded snapshot records its own).
func snapshotCondition(c *bool) string {
	if c == nil {
		return ""
	}
	return fmt.Sprintf(" snapshot-compress=%t", *c)
}

// jvmConditions renders the JVM settings of a series' plan; nothing when they are the
// defaults (a series started before they existed continues unchanged).
func jvmConditions(cmd *cli.Command) string {
	var out string
	if o := cmd.StringSlice("writer-jvm-option"); len(o) > 0 {
		out += " writer-jvm-options=" + strings.Join(o, ",")
	}
	// what every JVM of the series takes from this shell (a resumed series must not
	// change it unseen)
	for _, v := range evitaserver.JavaOptionsVariables {
		if o, ok := os.LookupEnv(v); ok && o != "" {
			out += " " + v + "=" + strings.ReplaceAll(o, " ", ",")
		}
	}
	if cmd.Bool("no-class-archive") {
		out += " class-archive=false"
	}
	if n := cmd.Int("writer-warm-up"); n > 0 {
		out += fmt.Sprintf(" writer-warm-up=%d", n)
	}
	return out
}

// gateFlagOf is the flag that named g: --watch when it is watched, else --gate.
func gateFlagOf(cmd *cli.Command, g string) string {
	if slices.Contains(cmd.StringSlice("watch"), g) {
		return "--watch"
	}
	return "--gate"
}
