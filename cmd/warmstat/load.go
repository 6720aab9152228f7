package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/base/progress"
	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/loader"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/workload"
)

func loadCommand() *cli.Command {
	return &cli.Command{
		Name:        "load",
		Usage:       "the benchmark: re-upsert every entity of a source catalog into a fresh WARM_UP target, goLive, verify",
		Description: help("load"),
		Flags: append(append(append(conditionFlags("target (writer) server max heap, e.g. 23g", "source (reader) server max heap"), serverFlags("spawn mode")...),
			&cli.StringFlag{Name: "pristine", Usage: "spawn mode: parent directory of the pristine <catalog>/ snapshot (warmstat seed --pristine makes one)"},
			&cli.StringFlag{Name: "snapshot-compress", Usage: "spawn mode, a snapshot warmstat seed did not make (no <catalog>.snapshot.json): its storage.compress, true | false, which the reader must open it with; the heaps must then be given"},
			&cli.StringFlag{Name: "catalog", Usage: "spawn mode: the snapshot's catalog"},
			&cli.StringFlag{Name: "work", Usage: "spawn mode: working directory (absent, empty or warmstat's; default <out>.work)"},
			&cli.StringSliceFlag{Name: "writer-jvm-option", Usage: "spawn mode: a JVM option for the writer, after warmstat's own (repeatable; recorded: runs with other options are not compared)"},
			&cli.BoolFlag{Name: "no-class-archive", Usage: "spawn mode: boot the JVMs without the release's class-data archive (AppCDS)"},
			&cli.StringFlag{Name: "catalog-line", Usage: "2026.1: write the target's catalog for evitaDB 2026.1, as a comparison across the lines does; a 2026.1 writer gets it by itself (recorded)"},
			&cli.IntFlag{Name: "writer-warm-up", Usage: "spawn mode, 0 to 5: loads of the same source into a throwaway catalog of the writer (published, then deleted) before the measured load, so it times compiled code as a production server's next publish does (recorded: runs with other counts are not compared)"},
			&cli.StringFlag{Name: "replay", Usage: "the source is this workload file (warmstat extract), not a server: spawn mode starts only the writer (a server flag), attach mode needs only --target"},
			&cli.StringFlag{Name: "target-mode", Value: "remote", Usage: "remote (the writer is a server, over gRPC) | embedded (with --replay in spawn mode: the same requests applied by warmstat's embedded writer, evitaDB's engine in one JVM with no transport; remote - embedded is what gRPC costs)"},
			&cli.StringFlag{Name: "source", Usage: "attach mode: source server host:port (gRPC)"},
			&cli.StringFlag{Name: "source-catalog", Usage: "attach mode: catalog to read"},
			&cli.StringFlag{Name: "target", Usage: "attach mode: target server host:port (gRPC)"},
			&cli.StringFlag{Name: "target-catalog", Usage: "catalog to create (default: the source catalog's name)"},
			&cli.BoolFlag{Name: "replace-target", Usage: "drop the target catalog if it exists (otherwise refused)"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "run directory to create (absent or empty)"},
			&cli.StringFlag{Name: "build", Required: true, Usage: "build label of the target server's build"},
			&cli.StringFlag{Name: "commit", Usage: "build commit, if known"},
			&cli.StringFlag{Name: "run-id", Usage: "run id (default: start time)"},
			&cli.IntFlag{Name: "batch-size", Value: workload.DefaultBatchSize, Usage: "primary keys per source fetch"},
			&cli.IntFlag{Name: "max-per-collection", Usage: "cap per collection (0 = all)"},
			&cli.StringFlag{Name: "collections", Usage: "comma-separated subset (unknown name = error)"},
			&cli.BoolFlag{Name: "skip-verify", Usage: "skip the count verification (recorded as skipped)"},
			&cli.BoolFlag{Name: "prefetch", Usage: "overlap the next source fetch with upserts (recorded; source read then overlaps, so ingest loses its meaning)"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "final report: text | json | md"},
			&cli.StringFlag{Name: "cpuprofile", Usage: "write warmstat's own CPU profile to this file (is the loader the bottleneck?)"},
		), writerProfileFlags()...),
		Action: runLoad,
	}
}

func runLoad(ctx context.Context, cmd *cli.Command) error {
	f, err := report.ParseFormat(cmd.String("format"), report.Text, report.JSON, report.Markdown)
	if err != nil {
		return usageError(cmd, "--format: %v", err)
	}
	// every flag is checked before a server starts: a bad one must not cost a run
	if err := loadLimits(cmd); err != nil {
		return err
	}
	m, cond, err := loadManifest(cmd)
	if err != nil {
		return err
	}
	if m.Conditions.CatalogLine, err = catalogLine(cmd); err != nil {
		return err
	}
	mode, err := parseLoadMode(cmd)
	if err != nil {
		return err
	}
	// an existing run is refused before any server starts (and before its work
	// directory, whose logs the run's manifest names, is emptied for another)
	if err := runfmt.CheckOut(cmd.String("out")); err != nil {
		return err
	}
	if mode.spawn {
		if err := spawnPaths(cmd); err != nil {
			return err
		}
	}
	// Ctrl-C ends the load between upserts; a second one kills warmstat.
	ctx, stop := interruptible(ctx, cmd.Root().ErrWriter)
	defer stop()
	errw := cmd.Root().ErrWriter
	c := loader.Config{SourceCatalog: cmd.String("source-catalog"), TargetCatalog: cmd.String("target-catalog"),
		ReplaceTarget: cmd.Bool("replace-target"), Out: cmd.String("out"), BatchSize: cmd.Int("batch-size"),
		MaxPerCollection: cmd.Int("max-per-collection"), Collections: subsetFlag(cmd), SkipVerify: cmd.Bool("skip-verify"),
		Prefetch: cmd.Bool("prefetch"), Manifest: m, Warnings: errw, Progress: liveProgress(errw)}
	if mode.replay {
		if err := c.OpenReplay(cmd.String("replay")); err != nil {
			return err
		}
		defer c.Replay.Close()
	}
	servers := loader.Servers{SourceAddr: cmd.String("source"), TargetAddr: cmd.String("target")}
	if mode.spawn {
		if servers.Spawn, err = spawnConfig(cmd, cond, mode.embedded); err != nil {
			return err
		}
	}
	if p := cmd.String("cpuprofile"); p != "" {
		stopProfile, err := loader.ProfileSelf(p)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	leanRuntime()
	begin := time.Now()
	res, loadErr := loader.Load(ctx, c, servers)
	if mode.spawn {
		loadErr = spawnHint(loadErr)
	}
	if res == nil { // could not start: nothing measured, nothing written
		return notStarted(loadErr, mode.replay)
	}
	return reportLoad(cmd, f, res, loadErr, begin)
}

// loadMode is how a load gets its source and writer: a replayed workload file or a
// source server, servers warmstat starts (spawn) or running ones (attach), and
// whether the writer is warmstat's embedded writer.
type loadMode struct {
	replay, spawn, embedded bool
}

// loadManifest starts the run's manifest from the flags (build, run id, conditions).
func loadManifest(cmd *cli.Command) (runfmt.Manifest, conditions, error) {
	m := loader.NewManifest(runfmt.Build{Label: cmd.String("build"), Commit: cmd.String("commit")}, cmd.String("run-id"), version)
	cond, err := parseConditions(cmd)
	if err == nil {
		cond.apply(&m)
	}
	return m, cond, err
}

// parseLoadMode decides the mode from the flags and refuses flags the mode cannot use.
func parseLoadMode(cmd *cli.Command) (loadMode, error) {
	replay := cmd.IsSet("replay")
	spawn := cmd.IsSet("pristine") || replay && !cmd.IsSet("target")
	attach := cmd.IsSet("source") || cmd.IsSet("target") || cmd.IsSet("source-catalog")
	switch {
	case replay && (cmd.IsSet("pristine") || cmd.IsSet("source") || cmd.IsSet("source-catalog") || cmd.IsSet("catalog") || cmd.IsSet("snapshot-compress")):
		return loadMode{}, usageError(cmd, "--replay FILE is the source: no --pristine, --catalog, --snapshot-compress, --source or --source-catalog with it")
	case replay && cmd.IsSet("reader-heap"):
		return loadMode{}, usageError(cmd, "--reader-heap: a replay starts no reader")
	case replay && (cmd.IsSet("batch-size") || cmd.IsSet("prefetch")):
		return loadMode{}, usageError(cmd, "--batch-size and --prefetch shape reading a source server; a replay reads the workload as it was extracted")
	case replay:
	case spawn == attach:
		return loadMode{}, usageError(cmd, "load needs either --pristine DIR --catalog NAME (spawn mode), --source ADDR --source-catalog NAME --target ADDR (attach mode), or --replay FILE")
	case spawn && cmd.String("catalog") == "":
		return loadMode{}, usageError(cmd, "spawn mode needs --catalog (the snapshot's catalog in --pristine)")
	case attach && (cmd.String("source") == "" || cmd.String("target") == "" || cmd.String("source-catalog") == ""):
		return loadMode{}, usageError(cmd, "attach mode needs --source ADDR, --source-catalog NAME and --target ADDR")
	}
	embeddedMode := false
	switch cmd.String("target-mode") {
	case runfmt.TargetRemote:
	case runfmt.TargetEmbedded:
		if !replay || !spawn {
			return loadMode{}, usageError(cmd, "--target-mode embedded replays a workload in a writer warmstat starts: it needs --replay FILE and a server flag, no --target")
		}
		embeddedMode = true
	default:
		return loadMode{}, usageError(cmd, "--target-mode %q: remote or embedded", cmd.String("target-mode"))
	}
	if !spawn {
		for _, f := range []string{"evita-version", "classpath", "server-jar", "evita-home"} {
			if cmd.IsSet(f) {
				return loadMode{}, usageError(cmd, "--%s names a server for warmstat to start; attach mode (--target) uses the running one", f)
			}
		}
		for _, f := range []string{"writer-jvm-option", "no-class-archive", "writer-warm-up"} {
			if cmd.IsSet(f) {
				return loadMode{}, usageError(cmd, "--%s sets up a JVM warmstat starts; attach mode (--target) uses the running one", f)
			}
		}
	}
	if !spawn && cmd.IsSet("writer-profile") {
		return loadMode{}, usageError(cmd, "--writer-profile needs spawn mode (--pristine, or --replay without --target): warmstat must start the writer to profile it")
	}
	return loadMode{replay: replay, spawn: spawn, embedded: embeddedMode}, nil
}

// notStarted explains a load that could not start (nothing measured, nothing written),
// naming the flag that would let it.
func notStarted(loadErr error, replay bool) error {
	switch {
	case errors.Is(loadErr, loader.ErrTargetExists):
		return fmt.Errorf("%w; --replace-target drops it", loadErr)
	case errors.Is(loadErr, evitaserver.ErrHeapsDoNotFit) && replay: // a replay starts no reader
		return fmt.Errorf("%w (--server-heap)", loadErr)
	case errors.Is(loadErr, evitaserver.ErrHeapsDoNotFit):
		return fmt.Errorf("%w (--server-heap, --reader-heap)", loadErr)
	}
	return loadErr
}

// reportLoad prints the run's report and status line, and turns the run's exit code
// (or an error after the run was decided) into the command's.
func reportLoad(cmd *cli.Command, f report.Format, res *loader.Result, loadErr error, begin time.Time) error {
	out := cmd.Root().Writer
	if err := report.WriteRunDir(out, res.Dir, f); err != nil {
		return errors.Join(loadErr, err)
	}
	report.WriteLoadEnd(out, cmd.Root().ErrWriter, res.Manifest, res.Dir, time.Since(begin), f)
	if code := res.ExitCode(loadErr); code != 0 {
		msg := res.Status()
		if loadErr != nil {
			msg = faultHint(loadErr).Error() + " (" + msg + ")" // the cause first
		}
		return withCode(code, errors.New(msg))
	}
	return nil
}

// liveProgress is where long work's progress goes: the terminal itself, or, for a
// log, a line a minute and the end of each line (base/progress).
func liveProgress(w io.Writer) io.Writer { return progress.Live(w) }

// spawnConfig reads the spawn-mode flags: the server (make evita's cache or an explicit
// classpath), the heaps (pinned; not given: chosen from the snapshot's or the
// workload's record), the writer's JVM and its profiler.
func spawnConfig(cmd *cli.Command, cond conditions, embeddedMode bool) (*loader.SpawnConfig, error) {
	errw := cmd.Root().ErrWriter
	work := loader.WorkDir(cmd.String("out"), cmd.String("work"))
	prof, err := writerProfiler(cmd, work, func(s string) { fmt.Fprintf(errw, "warning: %s\n", s) })
	if err != nil {
		return nil, err
	}
	sc := &loader.SpawnConfig{Pristine: cmd.String("pristine"), Catalog: cmd.String("catalog"), WorkDir: work, Probe: evita.Probe,
		Profiler: prof, Embedded: embeddedMode, Compress: cond.compress == nil || *cond.compress, // a spawned writer's default
		ServerHeap: orZero(cond.serverHeap), ReaderHeap: orZero(cond.readerHeap)}
	if sc.SnapshotCompress, err = optBool(cmd, "snapshot-compress"); err != nil {
		return nil, err
	}
	sc.WriterJVMOptions, sc.NoClassArchive = cmd.StringSlice("writer-jvm-option"), cmd.Bool("no-class-archive")
	if err := loader.CheckWriterJVMOptions(sc.WriterJVMOptions); err != nil {
		return nil, usageError(cmd, "--writer-jvm-option %v (--server-heap pins the heap)", err)
	}
	if sc.WarmUp, err = writerWarmUp(cmd); err != nil {
		return nil, err
	}
	if sc.Server, err = serverSource(cmd, "spawn mode"); err != nil {
		return nil, err
	}
	return sc, nil
}

// loadLimits refuses batch and cap values that cannot be run (exit 2).
func loadLimits(cmd *cli.Command) error {
	if b := cmd.Int("batch-size"); b < 1 || b > 100000 {
		return usageError(cmd, "--batch-size %d: must be 1 to 100000", b)
	}
	if m := cmd.Int("max-per-collection"); m < 0 {
		return usageError(cmd, "--max-per-collection %d: must be 0 (no cap) or positive", m)
	}
	return nil
}

// spawnPaths refuses spawn-mode settings that would destroy or misstate a run: a run
// directory inside the work directory (emptied before every run) or the other way
// round, and --cache / --traffic-recording (a spawned server always runs with both off,
// and the manifest says so).
func spawnPaths(cmd *cli.Command) error {
	for _, f := range []string{"cache", "traffic-recording"} {
		if cmd.IsSet(f) {
			return usageError(cmd, "--%s describes an attached server; a spawned one runs with cache and traffic recording off", f)
		}
	}
	out, work := cmd.String("out"), loader.WorkDir(cmd.String("out"), cmd.String("work"))
	if err := loader.CheckNesting(out, work); errors.Is(err, loader.ErrNested) {
		return usageError(cmd, "--out %s and --work %s: %v", out, work, err)
	} else if err != nil {
		return err
	}
	return nil
}

// spawnHint adds the flag that fixes a spawn-mode refusal.
func spawnHint(err error) error {
	var he *evitaserver.HeapError
	switch {
	case errors.As(err, &he) && he.Server == "reader":
		return fmt.Errorf("%w: give --reader-heap %s or more", err, runfmt.FormatBytesAtLeast(he.Need))
	case errors.As(err, &he):
		return fmt.Errorf("%w: give --server-heap %s or more", err, runfmt.FormatBytesAtLeast(he.Need))
	case errors.Is(err, evitaserver.ErrNoSnapshotInfo):
		return fmt.Errorf("%w: give --snapshot-compress true|false (its storage.compress) with --server-heap and --reader-heap, or make it with warmstat seed --pristine, which records its settings", err)
	case errors.Is(err, loader.ErrHeapsNeeded):
		return fmt.Errorf("%w: give --server-heap and --reader-heap", err)
	case errors.Is(err, loader.ErrWriterHeapNeeded):
		return fmt.Errorf("%w: give --server-heap", err)
	case errors.Is(err, loader.ErrReplayMismatch):
		return fmt.Errorf("%w (--collections, --max-per-collection: extract another workload with them)", err)
	}
	return err
}

// leanRuntime leaves the machine's CPU to the servers warmstat measures (load, ab).
func leanRuntime() { loader.LeanRuntime() }

// writerWarmUp is --writer-warm-up (load and ab), checked: 0 to 5 loads.
func writerWarmUp(cmd *cli.Command) (int, error) {
	if n := cmd.Int("writer-warm-up"); n < 0 || n > 5 {
		return 0, usageError(cmd, "--writer-warm-up %d: 0 to 5 loads", n)
	}
	return cmd.Int("writer-warm-up"), nil
}
