// Package loader is the benchmark: it re-upserts every entity of a source catalog into
// a fresh target catalog in WARM_UP, times every source fetch and every upsert, flips
// the target ALIVE with goLive, verifies per-collection counts and leaves a run
// directory (runfmt) behind.
//
// Timing follows the Java harness so runs stay comparable: the load clock starts when
// both sessions are open and stops after the last collection; it includes primary-key
// listings, fetches, mutation building and upserts; schema replication, goLive and
// verification are measured apart. A collection's clock starts after its key listing.
// Upserts are strictly sequential on one long-lived WARM_UP session, and an in-flight
// upsert is never cancelled (WARM_UP has no rollback): an interrupt takes effect
// between upserts.
package loader

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/warmstat/warmstat/embedded"
	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evita/pb"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/workload"
)

// Config is one load.
type Config struct {
	Source, Target               *evita.Client
	SourceCatalog, TargetCatalog string
	ReplaceTarget                bool // drop an existing target catalog (never done without it)
	Out                          string
	BatchSize                    int
	MaxPerCollection             int
	Collections                  []string
	SkipVerify                   bool
	// Prefetch overlaps the next source fetch with the current batch's upserts. The
	// source read sum then overlaps the upserts, so ingest (load - read) is no longer
	// the load without reading; prefetch is a recorded condition runs are compared on.
	Prefetch    bool
	GoLiveStall time.Duration // give up goLive after this long without progress
	// GoLiveConfirm is how long the catalog's state is polled after goLive (default 2
	// minutes): after a failed call for a late ALIVE, after a completed one to prove it.
	GoLiveConfirm time.Duration
	Manifest      runfmt.Manifest // conditions known to the caller (build, heaps, machine, ...)
	Progress      io.Writer       // progress for people (a terminal); nil = quiet
	// Warnings receives what a reader of the run must know even when nobody watches the
	// progress: replication notes, a server under GC pressure, a catalog still
	// activating (default: Progress).
	Warnings io.Writer
	Now      func() time.Time
	// AfterUpsert, if set, runs after every completed upsert (fault tests use it).
	AfterUpsert func(collection string, n int)
	// Window, if set, is called at the edges of the timed phases, outside their clocks:
	// (runfmt.PhaseLoad, true) just before the load clock starts and (.., false) just
	// after it stops, the same around goLive (a profiler's windows). An error opening
	// the load's window ends the run before anything is measured; any other is a warning.
	Window func(phase string, begin bool) error
	// Replay, if set, is the source instead of a server: a workload file (workload.Open,
	// verified first: Verify's SHA-256 goes in ReplaySHA256). Source is then unused;
	// the subset and cap are the file's (asking for others is refused).
	Replay       *workload.Reader
	ReplayPath   string
	ReplaySHA256 string
	// Embedded, if set, is the writer instead of Target: warmstat's embedded writer
	// (package embedded, started by Spawn for --target-mode embedded), which gets the
	// same request bytes with no transport and times each upsert in the engine.
	Embedded *embedded.Writer
	// Duet, if set (Duet sets it), is this run's place in a duet: it meets its partner
	// at the barriers and records its waits in the manifest.
	Duet *duetSide
	// finalize, if set (Spawn sets it), runs once the run is over and before its
	// manifest is written: it may complete the manifest (the writer's GC, its profile,
	// the snapshot's proof; files into dir, the staging directory) and change its outcome.
	// What it returns joins Run's error. The run is moved into place only after it.
	finalize func(dir string, m *runfmt.Manifest, runErr error) error
	// targetLine is the writer's own evitaDB line when Spawn read it from its jars
	// ("2026.1"; "" for 2026.2); a server attached to says it by its version.
	targetLine string
}

// Result is what the caller needs besides the manifest on disk.
type Result struct {
	Manifest *runfmt.Manifest
	Dir      string
}

// ErrTargetExists: the target catalog exists, and Config.ReplaceTarget did not ask to
// drop it.
var ErrTargetExists = evita.ErrCatalogExists

// interrupted is a run the user stopped (its context cancelled): what it was doing.
type interrupted struct {
	what string
	err  error
}

func (e *interrupted) Error() string { return e.what + ": " + e.err.Error() }
func (e *interrupted) Unwrap() error { return e.err }

// AbortError says the load stopped before its end; the run directory records where.
type AbortError struct {
	Where string
	Err   error
}

func (e *AbortError) Error() string { return "load aborted " + e.Where + ": " + e.Err.Error() }
func (e *AbortError) Unwrap() error { return e.Err }

type collectionPlan struct {
	schema *pb.GrpcEntitySchema
	source int // LIVE entities in the source
	load   int // min(source, cap)
}

// Run performs the load, in the steps below. The run directory is staged (runfmt.Stage)
// and moved to Out when the manifest is written, so Out never holds a run without one.
// The returned manifest (also written) states the outcome; err is non-nil when the
// load aborted or could not start (then nothing is left at Out).
func Run(ctx context.Context, c Config) (res *Result, err error) {
	c.defaults()
	stage, err := runfmt.Stage(c.Out)
	if err != nil {
		return nil, err
	}
	defer func() {
		if res == nil {
			stage.Abort()
		}
	}()
	var src *evita.Session
	var sp *sourcePlan
	if c.Replay != nil {
		if sp, err = c.replayPlan(); err != nil {
			return nil, err
		}
	}
	m := c.manifest()
	if c.Duet != nil {
		m.Duet = c.Duet.rec // filled in as the run waits
	}
	if c.Replay != nil {
		c.replayManifest(sp, &m)
	} else {
		if src, err = c.Source.Open(ctx, c.SourceCatalog, false); err != nil {
			return nil, fmt.Errorf("source catalog %q: %w", c.SourceCatalog, err)
		}
		defer src.Close(context.WithoutCancel(ctx))
		if sp, err = c.discover(ctx, src, &m); err != nil {
			return nil, err
		}
	}
	if err := c.createTarget(ctx, sp, &m); err != nil {
		return nil, err
	}
	csvFile, w, err := newCSV(stage.Dir(), c.Embedded != nil)
	if err != nil {
		return nil, err
	}
	defer csvFile.Close()
	tgt, err := c.target().open(ctx, c.TargetCatalog, true)
	if err != nil {
		return nil, err
	}
	res = &Result{Dir: c.Out, Manifest: &m}
	l := &load{c: c, src: src, tgt: tgt, w: w, csv: csvFile, m: &m, plans: sp.collections}
	if err := c.openWindow(runfmt.PhaseLoad); err != nil {
		_ = tgt.close(context.WithoutCancel(ctx))
		return nil, err
	}
	if c.Duet != nil { // both writers warm, both windows open: the measured loads begin together
		if err := c.Duet.meet(ctx, "the start of the load", &c.Duet.rec.StartWaitNs); err != nil {
			c.closeWindow(runfmt.PhaseLoad)
			_ = tgt.close(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	cpu0 := processCPU()
	loadErr := l.run(ctx, sp.order)
	if cpu := processCPU() - cpu0; cpu0 >= 0 {
		m.Loader.CPUNs = &cpu
	}
	c.closeWindow(runfmt.PhaseLoad)
	m.Timings.LoadWallNs = l.wall
	if !c.Prefetch {
		o := m.Timings.LoadWallNs - m.Timings.UpsertNs - m.Timings.SourceReadNs
		m.Timings.LoopOverheadNs = &o
	}
	if loadErr == nil && c.Duet != nil { // goLive when both loads have ended
		if err := c.Duet.meet(ctx, "goLive", &c.Duet.rec.GoLiveWaitNs); err != nil {
			loadErr = &AbortError{Where: "before goLive", Err: err}
		}
	}
	loadDone := loadErr == nil
	if loadErr = classifyLoadErr(ctx, loadErr); loadErr != nil {
		recordAbort(&m, loadErr, loadDone)
		_ = tgt.close(context.WithoutCancel(ctx)) // best effort; the target may be gone
		return res, c.finish(stage, csvFile, res, loadErr)
	}
	m.Outcome = runfmt.Outcome{Status: runfmt.OutcomeComplete}
	return res, c.finish(stage, csvFile, res, c.publishAndVerify(ctx, l, tgt, sp, &m))
}

// classifyLoadErr tells a user's interrupt from a lost server: a load cancelled by
// the user, or a context cancelled after the last upsert, is an interrupt.
func classifyLoadErr(ctx context.Context, loadErr error) error {
	var ae *AbortError
	if loadErr != nil && errors.Is(loadErr, context.Canceled) && errors.As(loadErr, &ae) {
		loadErr = &interrupted{"load interrupted " + ae.Where, loadErr} // an interrupt, not a lost server
	}
	if loadErr == nil && ctx.Err() != nil { // after the last upsert, before goLive
		loadErr = &interrupted{"interrupted after the load, before goLive", context.Cause(ctx)}
	}
	return loadErr
}

// recordAbort records a load that did not reach goLive: aborted or interrupted, goLive
// skipped, nothing verified (loadDone: every upsert had been done).
func recordAbort(m *runfmt.Manifest, loadErr error, loadDone bool) {
	m.Outcome = runfmt.Outcome{Status: runfmt.OutcomeAborted, Detail: loadErr.Error()}
	var in *interrupted
	if errors.As(loadErr, &in) {
		m.Outcome = runfmt.Outcome{Status: runfmt.OutcomeInterrupted, Detail: in.what}
	}
	m.GoLive = runfmt.GoLive{Status: runfmt.GoLiveSkipped}
	m.Verification = runfmt.Verification{Status: runfmt.Unverified, Error: "the load did not finish"}
	if loadDone {
		m.Verification.Error = "interrupted before goLive"
	}
}

// publishAndVerify runs goLive and the verification after a complete load; an
// interrupt during either is recorded as such (what goLive did stays recorded) and
// returned for the run's error.
func (c Config) publishAndVerify(ctx context.Context, l *load, tgt targetSession, sp *sourcePlan, m *runfmt.Manifest) error {
	c.publish(ctx, tgt, sp, m)
	if ctx.Err() != nil { // interrupted during goLive: what goLive did stays recorded
		m.Outcome = runfmt.Outcome{Status: runfmt.OutcomeInterrupted, Detail: "interrupted during goLive"}
		if m.GoLive.Status == runfmt.GoLiveFailed {
			m.GoLive.Error = "interrupted by the user: " + m.GoLive.Error
		}
		m.Verification = runfmt.Verification{Status: runfmt.Unverified, Error: "interrupted before verification"}
		return &interrupted{m.Outcome.Detail, context.Cause(ctx)}
	}
	m.Verification = l.verify(ctx, sp.order)
	if ctx.Err() != nil { // interrupted during verification: its counts are not proof
		m.Outcome = runfmt.Outcome{Status: runfmt.OutcomeInterrupted, Detail: "interrupted during verification"}
		m.Verification = runfmt.Verification{Status: runfmt.Unverified, Error: "interrupted during verification"}
		return &interrupted{m.Outcome.Detail, context.Cause(ctx)}
	}
	return nil
}

// processCPU is this process's user + system CPU time in ns (-1 if unknown); the
// JVMs it started are not in it.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func (c *Config) defaults() {
	if c.BatchSize <= 0 {
		c.BatchSize = 1000
	}
	if c.GoLiveStall == 0 {
		c.GoLiveStall = 10 * time.Minute
	}
	if c.GoLiveConfirm == 0 {
		c.GoLiveConfirm = 2 * time.Minute
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.TargetCatalog == "" {
		c.TargetCatalog = c.SourceCatalog
	}
}

// goRuntime is the Go runtime's settings now: GOMAXPROCS and the GC percentage (-1 off).
func goRuntime() (procs, gogc int) {
	gogc = debug.SetGCPercent(-1) // reads it; set back at once
	debug.SetGCPercent(gogc)
	return runtime.GOMAXPROCS(0), gogc
}

// manifest starts the run's manifest from what the caller knows and the load's settings.
func (c Config) manifest() runfmt.Manifest {
	m := c.Manifest
	m.Schema = runfmt.SchemaV1
	procs, gogc := goRuntime()
	m.Loader = runfmt.Loader{Name: runfmt.LoaderWarmstat, Version: m.Loader.Version, GOMAXPROCS: &procs, GOGC: &gogc}
	m.TargetMode = runfmt.TargetRemote
	m.SourceCatalog, m.TargetCatalog = c.SourceCatalog, c.TargetCatalog
	if c.Embedded != nil {
		m.TargetMode = runfmt.TargetEmbedded
		m.Server.Version = runfmt.UnknownText(cmp.Or(c.Embedded.Version, c.Embedded.Identity.Version))
		m.Server.Address = ""
	} else {
		m.Server.Version = runfmt.UnknownText(c.Target.Version)
		m.Server.Address = c.Target.Addr
	}
	m.Conditions.BatchSize, m.Conditions.MaxPerCollection = c.BatchSize, c.MaxPerCollection
	m.Conditions.CollectionSubset = c.Collections
	m.Conditions.Prefetch = c.Prefetch
	if l := c.writerLine(); l != "" { // a 2026.1 writer takes only the catalog written for it
		m.Conditions.CatalogLine = l
	}
	m.Timings.ResolutionNs = 1
	started := c.Now().UTC()
	m.StartedAt = &started
	if m.RunID == "" {
		m.RunID = started.Format("20060102T150405")
	}
	return m
}

// sourcePlan is what the source holds and what will be loaded, in load order.
type sourcePlan struct {
	catalog     *pb.GrpcCatalogSchema
	schemas     []*pb.GrpcEntitySchema
	collections map[string]*collectionPlan
	order       []string
	deferred    []*pb.GrpcModifyEntitySchemaMutation // schema settings applied after the load
}

// discover reads the source's schemas and counts (before any clock) and fingerprints
// the dataset.
func (c Config) discover(ctx context.Context, src *evita.Session, m *runfmt.Manifest) (*sourcePlan, error) {
	sp := &sourcePlan{collections: map[string]*collectionPlan{}}
	var err error
	if sp.catalog, err = src.CatalogSchema(ctx); err != nil {
		return nil, err
	}
	types, err := src.EntityTypes(ctx)
	if err != nil {
		return nil, err
	}
	slices.Sort(types) // load order: ascending names, as the Java harness (a TreeSet)
	for _, want := range c.Collections {
		if !slices.Contains(types, want) {
			return nil, fmt.Errorf("collection %q is not in source catalog %q (it has %v)", want, c.SourceCatalog, types)
		}
	}
	m.Dataset.SourceCounts = map[string]int64{}
	for _, ty := range types {
		sch, err := src.EntitySchema(ctx, ty)
		if err != nil {
			return nil, err
		}
		n, err := src.Count(ctx, ty)
		if err != nil {
			return nil, err
		}
		sp.schemas = append(sp.schemas, sch)
		m.Dataset.SourceCounts[ty] = int64(n)
		load := n
		if c.MaxPerCollection > 0 {
			load = min(n, c.MaxPerCollection)
		}
		sp.collections[ty] = &collectionPlan{schema: sch, source: n, load: load}
		if len(c.Collections) == 0 || slices.Contains(c.Collections, ty) {
			sp.order = append(sp.order, ty)
		}
	}
	m.Dataset.Fingerprint = runfmt.Fingerprint(m.Dataset.SourceCounts)
	return sp, nil
}

// writerLine is the target's evitaDB line: as Spawn read it, else by the version a
// server attached to reports.
func (c Config) writerLine() string {
	if c.targetLine == "" && c.Embedded == nil && c.Target != nil && strings.HasPrefix(c.Target.Version, "2026.1.") {
		return "2026.1"
	}
	return c.targetLine
}

// createTarget creates the fresh target catalog with the source's schema, before the
// clock; the replication's duration is recorded.
func (c Config) createTarget(ctx context.Context, sp *sourcePlan, m *runfmt.Manifest) error {
	begin := c.Now()
	plan := evita.PlanReplicationFor(evita.Line(m.Conditions.CatalogLine), evita.Line(c.writerLine()), sp.catalog, sp.schemas)
	if err := c.target().createCatalog(ctx, c.TargetCatalog, c.ReplaceTarget, plan); err != nil {
		if errors.Is(err, evita.ErrCatalogExists) {
			return fmt.Errorf("target %w", err)
		}
		return err
	}
	rep := c.Now().Sub(begin).Nanoseconds()
	m.Timings.SchemaReplicationNs = &rep
	if l := m.Conditions.CatalogLine; l != "" {
		why := "asked for"
		if c.writerLine() == l {
			why = "the writer is of that line"
		}
		c.warnf("catalog: written for evitaDB %s (%s): what that line lacks is left out (recorded as conditions.catalog_line)\n", l, why)
	}
	for _, n := range plan.Notes {
		c.warnf("note: %s\n", n)
	}
	sp.deferred = plan.Deferred
	return nil
}

// newCSV creates the run's entities.csv, header written and flushed; with cost, the
// columns of what each upsert's wall time was made of (the embedded writer measures them).
func newCSV(dir string, cost bool) (*os.File, *runfmt.CSVWriter, error) {
	f, err := os.Create(filepath.Join(dir, runfmt.EntitiesFile))
	if err != nil {
		return nil, nil, err
	}
	newWriter := runfmt.NewCSVWriter
	if cost {
		newWriter = runfmt.NewCostCSVWriter
	}
	w, err := newWriter(f)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, w, nil
}

// publish applies the schema settings that had to wait for the data, then goLive.
func (c Config) publish(ctx context.Context, tgt targetSession, sp *sourcePlan, m *runfmt.Manifest) {
	for _, d := range sp.deferred {
		if err := tgt.updateEntitySchema(ctx, d); err != nil {
			c.warnf("warning: deferred schema mutation for %s: %v\n", d.GetEntityType(), err)
		}
	}
	c.logf("goLive ...\n")
	opened := true
	if err := c.openWindow(runfmt.PhaseGoLive); err != nil {
		opened = false
		c.warnf("warning: %v\n", err)
	}
	o := tgt.goLive(ctx, c.GoLiveStall, c.GoLiveConfirm, func(p int32) { c.logf("\rgoLive %3d%%", p) })
	if opened {
		c.closeWindow(runfmt.PhaseGoLive)
	}
	m.GoLive = goLiveRecord(o)
	c.logf("\n")
}

// openWindow and closeWindow call Config.Window; a window that fails to close is a
// warning (what was measured stands).
func (c Config) openWindow(phase string) error {
	if c.Window == nil {
		return nil
	}
	return c.Window(phase, true)
}

func (c Config) closeWindow(phase string) {
	if c.Window == nil {
		return
	}
	if err := c.Window(phase, false); err != nil {
		c.warnf("warning: %v\n", err)
	}
}

// goLiveRecord is the manifest's reading of a goLive outcome (evita.GoLiveOutcome's
// one rule): ok only when ALIVE was proven; failed when the call failed or the catalog
// is in another state (named); unconfirmed when the call completed but the state could
// not be read.
func goLiveRecord(o evita.GoLiveOutcome) runfmt.GoLive {
	ns := o.Took.Nanoseconds()
	switch {
	case o.Alive():
		return runfmt.GoLive{Status: runfmt.GoLiveOK, Ns: &ns}
	case o.Err != nil:
		alive := o.StateKnown && o.State == evita.CatalogAlive
		return runfmt.GoLive{Status: runfmt.GoLiveFailed, Ns: &ns, Error: o.Err.Error(), ServerReachedAlive: &alive}
	case o.StateKnown:
		return runfmt.GoLive{Status: runfmt.GoLiveFailed, Ns: &ns, Error: o.Problem().Error()}
	}
	return runfmt.GoLive{Status: runfmt.GoLiveUnconfirmed, Ns: &ns, Error: o.Problem().Error()}
}

// finish completes the run (Config.finalize), makes the CSV durable, writes the
// manifest once (the exit code follows the contract) and only then moves the staged
// run directory into place: a run at Out is never rewritten.
func (c Config) finish(stage *runfmt.Staged, csvFile *os.File, res *Result, loadErr error) error {
	m := res.Manifest
	if c.finalize != nil {
		ferr := c.finalize(stage.Dir(), m, loadErr)
		loadErr = errors.Join(ferr, loadErr) // the cause it names comes first
	}
	if c.Replay != nil { // the workload must come out as it went in, like a snapshot
		if sum, err := workload.FileSHA256(c.ReplayPath); err != nil || sum != c.ReplaySHA256 {
			why := fmt.Sprintf("sha256 %s -> %s", short(c.ReplaySHA256), short(sum))
			if err != nil {
				why = err.Error()
			}
			cerr := fmt.Errorf("the workload %s changed during the run (%s)", c.ReplayPath, why)
			m.Outcome = runfmt.Outcome{Status: runfmt.OutcomeFailed, Detail: cerr.Error()}
			loadErr = errors.Join(cerr, loadErr)
		}
	}
	m.ExitCode = runfmt.ExitCodeFor(m.Outcome.Status, m.Verification.Status)
	err := csvFile.Sync()
	if err == nil {
		err = runfmt.WriteManifest(filepath.Join(stage.Dir(), runfmt.ManifestFile), m)
	}
	if err == nil {
		err = stage.Commit()
	}
	return errors.Join(loadErr, err)
}

func (c Config) logf(format string, args ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format, args...)
	}
}

func (c Config) warnf(format string, args ...any) {
	if w := cmp.Or(c.Warnings, c.Progress); w != nil {
		fmt.Fprintf(w, format, args...)
	}
}

func short(sum string) string { return sum[:min(12, len(sum))] }
