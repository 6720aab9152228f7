package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/embedded"
	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/loader"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/series"
	"github.com/warmstat/warmstat/workload"
)

func abCommand() *cli.Command {
	return &cli.Command{
		Name:  "ab",
		Usage: "an interleaved A/B series of spawn-mode loads that stops as soon as the answer is known",
		Description: "Loads --pristine DIR --catalog NAME with build --a and build --b in ABBA order (after --warmup runs per\n" +
			"side, kept out of the analysis) into --out SERIES/A/run-N and SERIES/B/run-N: ordinary run directories, so\n" +
			"report, compare, table and plot work on a series. A build is a release version, \"classpath:CP\",\n" +
			"\"jar:FILE\" (a runnable server jar) or \"checkout:DIR\" (an evitaDB checkout); a directory, a .jar file or\n" +
			"a value with ':' or '/' is taken for what it is. Heaps and conditions are the same on both sides.\n\n" +
			"After every pair of runs from --min-runs on, the gated metrics (--gate, default the dominant\n" +
			"collection's mean and */ingest) are analysed with a sequential interval: the false-verdict budget\n" +
			"(--alpha, 5 %) is spent across the looks up to --max-runs, so that looking repeatedly does not make a\n" +
			"verdict. The series stops when every gate is faster, slower or equivalent (inside ±--threshold), or at\n" +
			"--max-runs. Each run's headline figures are listed, a run that stands out from its side is flagged with\n" +
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
			"Exit codes as compare: 0, 1 a failure, 2 usage, 3 refused, 4 a gate slower with --fail-on-regression." +
			examples("warmstat ab --pristine /var/tmp/ws/pristine --catalog shop --a 2026.2.3 --b checkout:~/src/evitaDB --replay --writer-warm-up 1 --out series/my-branch",
				"warmstat ab --workload /var/tmp/ws/shop.wsw --a 2026.2.2 --b 2026.2.3 --pairs 5 --out series/m1"),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "a", Usage: "build A (the baseline): a server", Required: true},
			&cli.StringFlag{Name: "b", Usage: "build B: a server", Required: true},
			&cli.StringFlag{Name: "label-a", Usage: "build label of A's runs (default: its version)"},
			&cli.StringFlag{Name: "label-b", Usage: "build label of B's runs (default: its version)"},
			&cli.StringFlag{Name: "out", Usage: "series directory (new, or a series to continue)", Required: true},
			&cli.BoolFlag{Name: "fail-on-regression", Usage: "exit 4 when a gate is slower"},
			&cli.IntFlag{Name: "pairs", Usage: "a fixed-size series of exactly N pairs (2 to 100), no early stop: each machine of a fleet runs the same, and warmstat combine judges them together"},
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
		&cli.BoolFlag{Name: "rerun-outliers", Usage: "replace a run that stands out from its side (recorded), once"},
		&cli.IntFlag{Name: "batch-size", Value: 1000, Usage: "primary keys per source fetch"},
		&cli.IntFlag{Name: "max-per-collection", Usage: "cap per collection (0 = all)"},
		&cli.BoolFlag{Name: "prefetch", Usage: "overlap the next source fetch with upserts"},
		&cli.StringFlag{Name: "target-mode", Value: "remote", Usage: "remote | embedded (with --replay: every run's writer is warmstat's embedded writer, the engine in one JVM with no transport)"},
		&cli.BoolFlag{Name: "replay", Usage: "read the snapshot once into SERIES/workload.wsw (by build A, with --reader-heap) when the series starts, and replay it in every run: only the writer runs"},
	), writerProfileFlags()...)
}

// abSide is one build of a series.
type abSide struct {
	src   evitaserver.Source
	label string
}

func runAB(ctx context.Context, cmd *cli.Command) error {
	ss, err := readSeriesSettings(cmd)
	if err != nil {
		return err
	}
	sides := map[string]*abSide{}
	for _, s := range []string{"a", "b"} {
		src, err := evitaserver.ParseSource(cmd.String(s))
		if err != nil {
			return fmt.Errorf("--%s: %w", s, err)
		}
		side, err := ss.side(src, cmd.String("label-"+s), strings.ToUpper(s))
		if err != nil {
			return fmt.Errorf("--%s: %w", s, err)
		}
		sides[strings.ToUpper(s)] = side
	}
	if sides["A"].label == sides["B"].label {
		sides["A"].label, sides["B"].label = "A-"+sides["A"].label, "B-"+sides["B"].label
	}
	dir, err := filepath.Abs(cmd.String("out"))
	if err != nil {
		return err
	}
	plan := ss.plan(sides, cmd.String("a"), cmd.String("b"))
	if cmd.IsSet("pairs") {
		if err := fixedPairs(cmd, &plan); err != nil {
			return err
		}
	}
	if err := gatesInSource(cmd, ss.sourceName(), ss.counts(), plan.Gates); err != nil {
		return err
	}
	if _, err := writerProfiler(cmd, filepath.Join(dir, "work"), nil); err != nil { // a bad profiler flag, before any run
		return err
	}
	errw := cmd.Root().ErrWriter
	ctx, stop := interruptible(ctx, errw)
	defer stop()
	st, err := series.Execute(ctx, ss.config(dir, ss.workloadFile(dir), sides, plan, time.Now()))
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
	return finishSeries(ctx, cmd, st, dir)
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
}

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
		ThresholdPct: cmd.Float("threshold"), Gates: cmd.StringSlice("gate")}
	if err := check.Check(); err != nil {
		return nil, err
	}
	switch cmd.String("target-mode") {
	case runfmt.TargetRemote:
	case runfmt.TargetEmbedded:
		if !cmd.Bool("replay") && cmd.String("workload") == "" {
			return nil, usageError(cmd, "--target-mode embedded replays the series' workload: it needs --replay")
		}
		ss.targetMode = runfmt.TargetEmbedded
	default:
		return nil, usageError(cmd, "--target-mode %q: remote or embedded", cmd.String("target-mode"))
	}
	if (cmd.Bool("replay") || cmd.String("workload") != "") && (cmd.Bool("prefetch") || cmd.IsSet("batch-size")) {
		return nil, usageError(cmd, "--prefetch and --batch-size shape reading a source server; a replay reads its workload as it was extracted")
	}
	if cmd.String("workload") != "" && cmd.IsSet("max-per-collection") {
		return nil, usageError(cmd, "--max-per-collection: a workload file holds what it was extracted with (warmstat extract --max-per-collection)")
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
	if cond.readerHeap != nil && cmd.String("workload") == "" {
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
	if err := ss.chooseHeaps(); err != nil {
		return nil, err
	}
	heaps := map[string]int64{"writer": *ss.cond.serverHeap}
	if ss.workload == nil {
		heaps["reader"] = *ss.cond.readerHeap
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
	if err := loader.ChooseHeaps(&sc, replay, "writer", "reader"); err != nil {
		return withCode(exitUsage, spawnHint(err))
	}
	var chosen []string
	if cond.serverHeap == nil {
		chosen = append(chosen, "--server-heap "+runfmt.FormatBytes(&sc.ServerHeap))
	}
	if cond.readerHeap == nil && ss.workload == nil {
		chosen = append(chosen, "--reader-heap "+runfmt.FormatBytes(&sc.ReaderHeap))
	}
	if len(chosen) > 0 {
		fmt.Fprintf(cmd.Root().ErrWriter, "heaps chosen from %s's record (as load chooses them): %s\n", ss.sourceName(), strings.Join(chosen, ", "))
	}
	cond.serverHeap = &sc.ServerHeap
	if ss.workload == nil {
		cond.readerHeap = &sc.ReaderHeap
	}
	return nil
}

// readSource reads the series' source: --pristine DIR --catalog NAME (a snapshot), or
// --workload FILE (a workload proved whole now, before any directory is made).
func (ss *seriesSettings) readSource() error {
	cmd := ss.cmd
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

// sourceName is what the series reads, for messages: "the snapshot" or "the workload".
func (ss *seriesSettings) sourceName() string {
	if ss.workload != nil {
		return "the workload"
	}
	return "the snapshot"
}

// replay: every run replays a workload file (the series' own, or --workload).
func (ss *seriesSettings) replay() bool { return ss.workload != nil || ss.cmd.Bool("replay") }

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
		label = orDefault(id.Version, fallback)
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
			Identity: fmt.Sprintf("%s@%s classpath-sha256 %.16s", orDefault(id.Version, "unknown"), orDefault(id.BuildCommit, "unknown"), id.ClasspathSHA256)}
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
			cmd.Int("max-per-collection"), cmd.Bool("prefetch"), cmd.String("writer-profile"), cmd.String("writer-profile-interval")) + jvmConditions(cmd) + snapshotCondition(ss.snapshotCompress),
		MinRuns: cmd.Int("min-runs"), MaxRuns: cmd.Int("max-runs"), Warmup: cmd.Int("warmup"), ThresholdPct: cmd.Float("threshold"),
		AlphaPct: cmd.Float("alpha"), Gates: cmd.StringSlice("gate"), RerunOutliers: cmd.Bool("rerun-outliers"), Replay: ss.replay(),
		TargetMode: ss.targetMode, Unpaired: cmd.Bool("unpaired")}
}

// config is the series of plan in dir: every run a spawn-mode load of its side; with
// --replay every run replays the workload file wl, extracted by side A's build when
// the file is not there yet.
func (ss *seriesSettings) config(dir, wl string, sides map[string]*abSide, plan series.Plan, began time.Time) series.Config {
	cmd, cond, pristine := ss.cmd, ss.cond, ss.pristine
	errw, out := cmd.Root().ErrWriter, cmd.Root().Writer
	c := series.Config{Dir: dir, Plan: plan,
		Checksum: func() (string, error) { return evitaserver.Checksum(filepath.Join(pristine, plan.Catalog)) },
		Compare:  analyze.CompareOptions{Quantiles: analyze.QuantilesJava},
		Run: func(ctx context.Context, side, runDir, id, work string) error {
			s := sides[side]
			m := runfmt.Manifest{RunID: id, Build: runfmt.Build{Label: s.label}, Loader: runfmt.Loader{Version: runfmt.UnknownText(version)}, Machine: ss.mach.Record()}
			cond.apply(&m)
			sc := loader.SpawnConfig{Server: s.src, Pristine: pristine, Catalog: plan.Catalog, WorkDir: work, SnapshotCompress: ss.snapshotCompress,
				ServerHeap: plan.ServerHeap, ReaderHeap: plan.ReaderHeap, Compress: ss.compress, Probe: evita.Probe,
				Embedded: plan.TargetMode == runfmt.TargetEmbedded, WriterJVMOptions: cmd.StringSlice("writer-jvm-option"), NoClassArchive: cmd.Bool("no-class-archive"),
				WarmUp: cmd.Int("writer-warm-up")}
			lc := loader.Config{Out: runDir, BatchSize: cmd.Int("batch-size"), MaxPerCollection: cmd.Int("max-per-collection"),
				Prefetch: cmd.Bool("prefetch"), Manifest: m, Warnings: errw}
			if plan.Replay { // the workload is the source: proved whole before every run, no reader
				r, sum, err := openReplay(wl)
				if err != nil {
					return err
				}
				defer r.Close()
				sc.Pristine, sc.Catalog, sc.ReaderHeap = "", "", 0
				lc.Replay, lc.ReplayPath, lc.ReplaySHA256 = r, wl, sum
				lc.BatchSize, lc.MaxPerCollection = 0, 0 // the file's
			}
			prof, err := writerProfiler(cmd, work, func(s string) { fmt.Fprintf(errw, "warning: %s\n", s) })
			if err != nil {
				return err
			}
			if prof != nil { // a fresh profiler per run: each run's profile is its own
				sc.Profiler = prof
			}
			fmt.Fprintf(errw, "%s %s (%s) ...\n", time.Now().Format("15:04:05"), runDir[len(dir)+1:], s.label)
			_, err = loader.Spawn(ctx, sc, lc)
			return faultHint(err)
		},
		OnRun: func(s *series.State, e series.Entry) {
			printRun(out, s, e, began)
		},
		OnLook: func(s *series.State, l series.LookRecord) {
			printLook(out, s, l)
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
			partial, _ := filepath.Glob(filepath.Join(filepath.Dir(wl), "."+filepath.Base(wl)+".partial-*"))
			for _, p := range partial {
				os.Remove(p)
			}
			fmt.Fprintf(errw, "%s extracting %s/%s into %s (build %s, reader heap %s) ...\n", time.Now().Format("15:04:05"), pristine, plan.Catalog,
				wl, sides["A"].label, runfmt.FormatBytes(&plan.ReaderHeap))
			ec := loader.ExtractConfig{Out: wl, BatchSize: cmd.Int("batch-size"), MaxPerCollection: cmd.Int("max-per-collection")}
			if isTerminal(errw) {
				ec.Progress = errw
			}
			info, err := loader.SpawnExtract(ctx, loader.SpawnConfig{Server: sides["A"].src, Pristine: pristine, Catalog: plan.Catalog, SnapshotCompress: ss.snapshotCompress,
				WorkDir: filepath.Join(dir, "work"), ReaderHeap: plan.ReaderHeap, Probe: evita.Probe}, ec)
			if err != nil {
				return fmt.Errorf("extracting the series' workload: %w", faultHint(err))
			}
			fmt.Fprintf(errw, "workload: %d entities, %s, read in %s\n", info.Trailer.Entities, runfmt.FormatBytes(&info.Size),
				time.Duration(info.Trailer.ExtractNs).Round(time.Millisecond))
			return nil
		}
	}
	return c
}

func orDefault(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// printRun is the per-run line: the run's headline figures, the machine around it,
// an outlier's reason, and the series' ETA.
func printRun(w io.Writer, s *series.State, e series.Entry, began time.Time) {
	line := fmt.Sprintf("%3d  %-5s %-13s", e.Seq, e.Side, e.Dir)
	switch {
	case e.Status == series.Failed:
		line += "  FAILED: " + e.Reason + " (excluded, run again)"
	case e.Status == series.Interrupted:
		line += "  INTERRUPTED: excluded; run again when the series resumes (the same command)"
	case e.Health != nil:
		h := e.Health
		line += fmt.Sprintf("  %s mean %s µs  load %s s  goLive %s s  TOTAL %s s", h.Collection, opt(h.MeanUs, 0), opt(h.LoadS, 1), opt(h.GoLiveS, 1), opt(h.TotalS, 1))
	case e.Kind == series.Warmup:
		line += "  warm-up (not analysed)"
	}
	if m := e.Machine; m != nil {
		line += fmt.Sprintf("  [load avg %.1f→%.1f, others %.0f %% CPU]", m.LoadAvgBefore, m.LoadAvgAfter, m.OtherCPUPct)
	}
	fmt.Fprintln(w, line)
	if e.Health != nil && e.Health.Outlier != "" {
		fmt.Fprintf(w, "     OUTLIER: %s\n", e.Health.Outlier)
	}
	if e.Status == series.Replaced {
		fmt.Fprintf(w, "     replaced (--rerun-outliers): %s\n", e.Reason)
	}
	if took, ok := runWall(e); ok && e.Health != nil && e.Health.LoadS != nil {
		inside := time.Duration(*e.Health.LoadS * 1e9)
		if e.Health.GoLiveS != nil {
			inside += time.Duration(*e.Health.GoLiveS * 1e9)
		}
		fmt.Fprintf(w, "     run took %s, %s of it outside the load and goLive (%s); the series has run %s\n",
			took.Round(time.Second), max(0, took-inside).Round(time.Second), outsideWhat(s), seriesTime(s).Round(time.Second))
	}
	done := s.Done("", "") // a run that failed or was stopped is run again: not done
	per, _ := meanRun(s)
	if per == 0 { // no finished run timed yet
		per = time.Since(began) / time.Duration(max(1, done))
	}
	left := 2*(s.Plan.MaxRuns+s.Plan.Warmup) - done
	if s.Plan.Pairs > 0 { // a fixed size: no early stop, the runs left are certain
		fmt.Fprintf(w, "     ETA: %s (%s left of the series' %d pairs)\n", (per * time.Duration(max(0, left))).Round(time.Second), report.Plural(max(0, left), "run"), s.Plan.Pairs)
		return
	}
	if n := len(s.Looks); n > 0 && s.Looks[n-1].Look != nil {
		most := 0
		for _, g := range s.Looks[n-1].Look.Gates {
			if g.MoreRuns != nil {
				most = max(most, *g.MoreRuns)
			}
		}
		// the projection counts from the look: runs done since it are part of it, and
		// the plan's maximum caps it
		if rem := min(left, 2*(s.Plan.Warmup+s.Looks[n-1].Runs+most)-done); most > 0 && rem > 0 && rem < left {
			fmt.Fprintf(w, "     ETA: about %s if the noise holds (%s more), at most %s\n",
				(per * time.Duration(rem)).Round(time.Second), report.Plural(rem, "run"), (per * time.Duration(max(0, left))).Round(time.Second))
			return
		}
	}
	fmt.Fprintf(w, "     ETA: at most %s (%s left of the plan's maximum)\n", (per * time.Duration(max(0, left))).Round(time.Second), report.Plural(max(0, left), "run"))
}

// runWall is how long a run took from its start to its end (false if it has not both).
func runWall(e series.Entry) (time.Duration, bool) {
	if e.Started == nil || e.Ended == nil {
		return 0, false
	}
	return e.Ended.Sub(*e.Started), true
}

// outsideWhat names what a run of the series does outside its load and goLive.
func outsideWhat(s *series.State) string {
	if strings.Contains(s.Plan.Conditions, "writer-warm-up=") {
		return "boots, copies, the writer's warm-up loads, activation, verification, teardown"
	}
	return "boots, copies, activation, verification, teardown"
}

// meanRun is the mean wall time of the series' timed runs, and how long outside their
// load and goLive; across invocations of a resumed series alike.
func meanRun(s *series.State) (per, outside time.Duration) {
	n, m := 0, 0 // runs timed; runs timed with their load and goLive known
	for _, e := range s.Entries {
		took, ok := runWall(e)
		if !ok {
			continue
		}
		n++
		per += took
		if h := e.Health; h != nil && h.LoadS != nil {
			inside := time.Duration(*h.LoadS * 1e9)
			if h.GoLiveS != nil {
				inside += time.Duration(*h.GoLiveS * 1e9)
			}
			outside += max(0, took-inside)
			m++
		}
	}
	if n == 0 {
		return 0, 0
	}
	if m > 0 {
		outside /= time.Duration(m)
	}
	return per / time.Duration(n), outside
}

// seriesTime is the machine time the series' runs took so far (all invocations).
func seriesTime(s *series.State) time.Duration {
	var d time.Duration
	for _, e := range s.Entries {
		if took, ok := runWall(e); ok {
			d += took
		}
	}
	return d
}

// printLook is a look's estimate, interval and verdict per gate, and what resolving
// the rest would take.
func printLook(w io.Writer, s *series.State, l series.LookRecord) {
	if l.Look == nil {
		return
	}
	unit := "run(s) per side"
	if l.Look.Method == analyze.Paired {
		unit = "pair(s)"
		first := analyze.SequentialPlan{MinRuns: s.Plan.MinRuns, MaxRuns: s.Plan.MaxRuns, Paired: true}.FirstLook()
		if l.Look.Pairs < first {
			fmt.Fprintf(w, "look after %d pairs (shown, not judged: the plan's first judged look is at %d pairs):\n", l.Look.Pairs, first)
		} else {
			fmt.Fprintf(w, "look after %d pairs (%.2f %% paired-t intervals: the budget spent across the looks):\n", l.Look.Pairs, 100*l.Look.Level)
		}
	} else {
		fmt.Fprintf(w, "look after %d runs per side (%.2f %% %s intervals: the budget spent across the looks):\n", l.Runs, 100*l.Look.Level, l.Look.Method)
	}
	for _, g := range l.Look.Gates {
		line := fmt.Sprintf("  %-20s %-11s", g.Gate, g.Verdict)
		if g.DeltaPct != nil {
			line += " " + report.SignedPct(*g.DeltaPct) + " %"
		}
		if g.LowPct != nil {
			line += fmt.Sprintf(" [%s %%, %s %%]", report.SignedPct(*g.LowPct), report.SignedPct(*g.HighPct))
		}
		switch {
		case g.Resolved():
		case g.Reason != "":
			line += "  (" + g.Reason + ")"
		case g.MoreRuns != nil:
			line += fmt.Sprintf("  about %d more %s would resolve it", *g.MoreRuns, unit)
			if l.Look.Method == analyze.Paired && l.Look.Pairs < 3 {
				line += " (a rough guess: at 2 pairs the noise rests on one difference)"
			}
		case g.PlanRuns != nil:
			line += fmt.Sprintf("  not resolvable within %d %s at this noise (a series of about %d %s would be)", s.Plan.MaxRuns, unit, *g.PlanRuns, unit)
		default:
			line += fmt.Sprintf("  not resolvable within %d %s at this noise (nor within 100: lower the noise)", s.Plan.MaxRuns, unit)
		}
		fmt.Fprintln(w, line)
		if g.NoisePct != nil { // the machine's precision, before any verdict
			noise := fmt.Sprintf("within-pair noise %.2f %% (between runs %s %%)", *g.NoisePct, opt(g.BetweenRunPct, 2))
			if l.Look.Method != analyze.Paired {
				noise = fmt.Sprintf("between-run noise %.2f %%", *g.NoisePct)
			}
			if g.LowPct != nil {
				noise += "; the interval is " + halfWidth((*g.HighPct-*g.LowPct)/2, 1) + " now"
			}
			fmt.Fprintf(w, "  %-20s %s\n", "", noise)
		}
	}
}

// nextStep says, for each gate a finished series left without an answer, why and what
// would give one: a series planned for more runs (a series cannot be extended: its
// false-verdict budget was spread over its own maximum) or less noise.
func nextStep(w io.Writer, st *series.State) {
	if st.Outcome.Reason != "max-runs" { // resolved: the verdicts are the answer
		return
	}
	unit := "runs per side"
	if st.Plan.Method() == analyze.Paired {
		unit = "pairs"
	}
	open := 0
	for _, g := range st.Outcome.Gates {
		if g.Resolved() {
			continue
		}
		open++
		line := "to resolve " + g.Gate
		switch {
		case g.Reason != "":
			line += ": " + g.Reason
		case g.NoisePct == nil:
			line += ": the interval needs runs with a figure on both sides"
		case g.PlanRuns != nil:
			line += fmt.Sprintf(": at its noise and the change seen (%s) a series of about %d %s would: start one (a new --out, --max-runs %d), or lower the noise first",
				signedPct(g.DeltaPct), *g.PlanRuns, unit, *g.PlanRuns)
		default:
			line += fmt.Sprintf(": the change seen (%s) lies too close to the ±%g %% threshold for even 100 %s at this noise to decide it: lower the noise first, or take the bound above as the answer",
				signedPct(g.DeltaPct), st.Plan.ThresholdPct, unit)
		}
		fmt.Fprintln(w, line)
	}
	if open == 0 {
		return
	}
	// advice only of what the series does not do already
	var tips []string
	if !st.Plan.Replay {
		tips = append(tips, "--replay takes the reader out of the load")
	}
	if !strings.Contains(st.Plan.Conditions, "writer-warm-up=") {
		tips = append(tips, "--writer-warm-up 1 takes most of the JIT's compiling out of the measured load")
	}
	tips = append(tips, "a larger catalog (seed --scale) makes each run longer and steadier", "a quieter machine (each run line shows what else ran)")
	fmt.Fprintf(w, "  (lowering the noise: %s; docs/measuring.md says what each bought where it was measured)\n", strings.Join(tips, "; "))
}

// printAnswer is, per gate, the series' (sequential) verdict in words: B against A with
// the change and its interval, what the machine's noise allowed this series to tell, and
// where the truth lies, so that an unresolved gate still says something a reader can act
// on (e.g. "at most 15.8 % slower").
func printAnswer(w io.Writer, st *series.State) {
	a, b := orDefault(st.Plan.A.Label, st.Plan.A.Spec), orDefault(st.Plan.B.Label, st.Plan.B.Spec)
	thr := st.Plan.ThresholdPct
	if ta, na := sideTotal(st, "A"); na > 0 {
		if tb, nb := sideTotal(st, "B"); nb > 0 {
			fmt.Fprintf(w, "publishing (load + goLive) took %.1f s with %s and %.1f s with %s on this machine (geometric means of %s and %s; the table above has their intervals)\n",
				ta, a, tb, b, report.Plural(na, "run"), report.Plural(nb, "run"))
		}
	}
	unit := "pairs"
	if st.Plan.Method() != analyze.Paired {
		unit = "runs per side"
	}
	for _, g := range st.Outcome.Gates {
		if g.DeltaPct == nil || g.LowPct == nil {
			fmt.Fprintf(w, "%s: %s, no interval", g.Gate, g.Verdict)
			if g.Reason != "" {
				fmt.Fprintf(w, " (%s)", g.Reason)
			}
			fmt.Fprintln(w)
			continue
		}
		iv := fmt.Sprintf("%s %% [%s %%, %s %%]", report.SignedPct(*g.DeltaPct), report.SignedPct(*g.LowPct), report.SignedPct(*g.HighPct))
		switch g.Verdict {
		case analyze.Slower, analyze.Faster:
			fmt.Fprintf(w, "%s: %s is %s than %s by %s: the whole interval lies beyond the ±%g %% noise threshold\n", g.Gate, b, g.Verdict, a, iv, thr)
		case analyze.Equivalent:
			fmt.Fprintf(w, "%s: %s and %s are the same within ±%g %%: %s\n", g.Gate, b, a, thr, iv)
		default:
			fmt.Fprintf(w, "%s: no verdict at ±%g %%: %s against %s %s; %s is somewhere from %s to %s than %s\n",
				g.Gate, thr, b, a, iv, b, changeWords(*g.LowPct), changeWords(*g.HighPct), a)
		}
		if g.NoisePct != nil {
			half := (*g.HighPct - *g.LowPct) / 2
			fmt.Fprintf(w, "  this machine's noise: %.1f %% per run (%s); at it, %d %s tell apart only a change beyond about %s (the interval's half-width plus the threshold)\n",
				*g.NoisePct, noiseKind(st), st.Outcome.Runs, unit, halfWidth(half+thr, 0))
		}
	}
}

// halfWidth is an interval's half-width for people: "±24.3 %", or "wider than ±99,900 %"
// where report.SignedPct stops counting.
func halfWidth(pct float64, decimals int) string {
	s := strings.TrimPrefix(report.SignedPct(pct), "+")
	if strings.HasPrefix(s, ">") {
		return "wider than ±" + strings.TrimLeft(s, ">+") + " %"
	}
	return "±" + report.Fixed(pct, decimals) + " %"
}

// sideTotal is the geometric mean of a side's measured TOTAL (load + goLive) over its
// finished runs, and how many runs it rests on.
func sideTotal(st *series.State, side string) (float64, int) {
	sum, n := 0.0, 0
	for _, e := range st.Entries {
		if e.Side != side || e.Kind != series.Measured || e.Status != series.Done || e.Health == nil || e.Health.TotalS == nil || *e.Health.TotalS <= 0 {
			continue
		}
		sum += math.Log(*e.Health.TotalS)
		n++
	}
	if n == 0 {
		return 0, 0
	}
	return math.Exp(sum / float64(n)), n
}

// changeWords is a change of B against A in words: "3.2 % faster", "15.8 % slower".
func changeWords(pct float64) string {
	switch {
	case pct < 0:
		return strings.TrimPrefix(report.SignedPct(-pct), "+") + " % faster"
	case pct > 0:
		return strings.TrimPrefix(report.SignedPct(pct), "+") + " % slower"
	}
	return "no change"
}

func noiseKind(st *series.State) string {
	if st.Plan.Method() == analyze.Paired {
		return "within a pair"
	}
	return "between runs"
}

func opt(v *float64, prec int) string {
	if v == nil {
		return "—"
	}
	return report.Fixed(*v, prec)
}

// finishSeries prints the series' runs with their health, the full compare, the table
// and the plot, then the outcome, its answer and what to do next, and maps the outcome
// to the exit code.
func finishSeries(ctx context.Context, cmd *cli.Command, st *series.State, dir string) error {
	out, errw := cmd.Root().Writer, cmd.Root().ErrWriter
	// the order a reader follows: the runs and their health, the full comparison, the
	// table, and last the answer with what to do next
	printHealth(out, st)
	a, b := filepath.Join(dir, "A"), filepath.Join(dir, "B")
	fmt.Fprintf(out, "\n== warmstat compare %s %s (95 %% intervals of the final runs; the series' verdicts below use the sequential interval)\n", a, b)
	run(ctx, []string{"warmstat", "compare", a, b}, out, errw)
	fmt.Fprintf(out, "\n== warmstat table --group %s %s\n", a, b)
	run(ctx, []string{"warmstat", "table", "--group", a, b}, out, errw)
	svg := filepath.Join(dir, "compare.svg")
	run(ctx, []string{"warmstat", "plot", "--kind", "compare", "--out", svg, a, b}, out, errw) // it says where it wrote

	o := st.Outcome
	fmt.Fprintln(out)
	if st.Plan.Pairs > 0 {
		fmt.Fprintf(out, "== the answer: series of %d pairs done (fixed size; warmstat combine judges a fleet's series together); this machine alone", o.Runs)
	} else {
		fmt.Fprintf(out, "== the answer: series %s after %d runs per side (%d saved against --max-runs %d)", o.Reason, o.Runs, o.Saved, st.Plan.MaxRuns)
	}
	var slower []string
	for _, g := range o.Gates {
		fmt.Fprintf(out, "; %s %s", g.Gate, g.Verdict)
		if g.Verdict == analyze.Slower {
			slower = append(slower, g.Gate)
		}
	}
	fmt.Fprintln(out)
	if per, outside := meanRun(st); per > 0 {
		fmt.Fprintf(out, "machine time: %s in %s, %s per run on average, %s of it outside the load and goLive (%s)\n",
			seriesTime(st).Round(time.Second), report.Plural(len(st.Entries), "run"), per.Round(time.Second), outside.Round(time.Second), outsideWhat(st))
	}
	printAnswer(out, st)
	nextStep(out, st)
	if st.Plan.Pairs > 0 {
		fmt.Fprintf(out, "next: warmstat combine %s SERIES... (the other machines' series of this plan)\n", dir)
	}
	if cmd.Bool("fail-on-regression") && len(slower) > 0 {
		return withCode(exitRegression, fmt.Errorf("regression: %s slower", strings.Join(slower, ", ")))
	}
	return nil
}

// printHealth is every run of the series with its headline figures, its state and the
// machine around it; below, why a run stands out or failed.
func printHealth(w io.Writer, st *series.State) {
	fmt.Fprintln(w, "\nruns of the series (the dominant collection's mean upsert, load wall-clock, goLive, TOTAL; machine after the run; "+
		"the writer's JIT and GC threads' and the reader's CPU during the load, in cores):")
	var rows [][]string
	var notes []string
	for _, e := range st.Entries {
		r := []string{fmt.Sprint(e.Seq), e.Side, e.Dir, e.Kind, e.Status, "—", "—", "—", "—", "—", "—", "—", "—", "—"}
		if h := e.Health; h != nil {
			r[5], r[6], r[7], r[8] = opt(h.MeanUs, 0), opt(h.LoadS, 1), opt(h.GoLiveS, 1), opt(h.TotalS, 1)
			if h.Outlier != "" {
				note := fmt.Sprintf("  run %d (%s): OUTLIER: %s", e.Seq, e.Dir, h.Outlier)
				if h.Factor != "" {
					note += "; the recorded factor furthest from its side: " + h.Factor
				}
				notes = append(notes, note)
			}
			factor := func(name string) string {
				if v, ok := h.Factors[name]; ok {
					return fmt.Sprintf("%.2f", v)
				}
				return "—"
			}
			r[11], r[12], r[13] = factor("writer jit CPU (cores)"), factor("writer gc CPU (cores)"), factor("reader CPU (cores)")
		}
		if m := e.Machine; m != nil {
			r[9], r[10] = fmt.Sprintf("%.1f", m.LoadAvgAfter), fmt.Sprintf("%.0f %%", m.OtherCPUPct)
		}
		if e.Reason != "" {
			notes = append(notes, fmt.Sprintf("  run %d (%s): %s", e.Seq, e.Status, e.Reason))
		}
		rows = append(rows, r)
	}
	report.Table(w, report.Text, 5, []string{"#", "side", "run", "kind", "status", "mean µs", "load s", "goLive s", "TOTAL s", "load avg", "others' CPU",
		"JIT cores", "GC cores", "reader cores"}, rows)
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
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
		return usageError(cmd, "--gate %q: %s has no collection %q (it has %s or *)%s", g, what, coll, strings.Join(names, ", "), hint)
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

// signedPct is a change as "+2.8 %" ("—" when unknown).
func signedPct(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%+.1f %%", *v)
}
