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
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evita/pb"
	"github.com/warmstat/warmstat/runfmt"
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
	Progress      io.Writer       // nil = quiet
	Now           func() time.Time
	// AfterUpsert, if set, runs after every completed upsert (fault tests use it).
	AfterUpsert func(collection string, n int)
}

// Result is what the caller needs besides the manifest on disk.
type Result struct {
	Manifest *runfmt.Manifest
	Dir      string
}

// ErrTargetExists: the target catalog exists, and Config.ReplaceTarget did not ask to
// drop it.
var ErrTargetExists = errors.New("it is dropped only when replacing it is asked for")

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

// Run performs the load. The returned manifest (also written to Out) states the
// outcome; err is non-nil when the load aborted or could not start.
func Run(ctx context.Context, c Config) (*Result, error) {
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
	if err := runDirFree(c.Out); err != nil {
		return nil, err
	}
	m := c.Manifest
	m.Schema = runfmt.SchemaV1
	m.Loader = runfmt.Loader{Name: runfmt.LoaderWarmstat, Version: m.Loader.Version}
	m.TargetMode = runfmt.TargetRemote
	m.SourceCatalog, m.TargetCatalog = c.SourceCatalog, c.TargetCatalog
	m.Server.Version = c.Target.Version
	m.Server.Address = c.Target.Addr
	m.Conditions.BatchSize, m.Conditions.MaxPerCollection = c.BatchSize, c.MaxPerCollection
	m.Conditions.CollectionSubset = c.Collections
	m.Conditions.Prefetch = c.Prefetch
	m.Timings.ResolutionNs = 1
	started := c.Now().UTC()
	m.StartedAt = &started
	if m.RunID == "" {
		m.RunID = started.Format("20060102T150405")
	}

	// --- source: schema and counts (before any clock)
	src, err := c.Source.Open(ctx, c.SourceCatalog, false)
	if err != nil {
		return nil, fmt.Errorf("source catalog %q: %w", c.SourceCatalog, err)
	}
	defer src.Close(context.WithoutCancel(ctx))
	catSchema, err := src.CatalogSchema(ctx)
	if err != nil {
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
	var schemas []*pb.GrpcEntitySchema
	plans := map[string]*collectionPlan{}
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
		schemas = append(schemas, sch)
		m.Dataset.SourceCounts[ty] = int64(n)
		load := n
		if c.MaxPerCollection > 0 {
			load = min(n, c.MaxPerCollection)
		}
		plans[ty] = &collectionPlan{schema: sch, source: n, load: load}
	}
	m.Dataset.Fingerprint = runfmt.Fingerprint(m.Dataset.SourceCounts)
	order := types
	if len(c.Collections) > 0 {
		order = slices.DeleteFunc(slices.Clone(types), func(t string) bool { return !slices.Contains(c.Collections, t) })
	}

	// --- target: fresh catalog and schema (before the clock; duration recorded)
	if _, known, err := c.Target.CatalogState(ctx, c.TargetCatalog); err != nil {
		return nil, err
	} else if known && !c.ReplaceTarget {
		return nil, fmt.Errorf("target catalog %q already exists on %s: %w", c.TargetCatalog, c.Target.Addr, ErrTargetExists)
	} else if known {
		if _, err := c.Target.DeleteCatalogIfExists(ctx, c.TargetCatalog); err != nil {
			return nil, err
		}
	}
	repStart := c.Now()
	if err := c.Target.DefineCatalog(ctx, c.TargetCatalog); err != nil {
		return nil, err
	}
	plan := evita.PlanReplication(catSchema, schemas)
	sch, err := c.Target.Open(ctx, c.TargetCatalog, true)
	if err != nil {
		return nil, err
	}
	if err := sch.Replicate(ctx, plan); err != nil {
		return nil, fmt.Errorf("schema replication: %w", err)
	}
	if err := sch.Close(ctx); err != nil {
		return nil, err
	}
	rep := c.Now().Sub(repStart).Nanoseconds()
	m.Timings.SchemaReplicationNs = &rep
	for _, n := range plan.Notes {
		c.logf("note: %s\n", n)
	}

	// --- the run directory: the CSV is written as upserts complete
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return nil, err
	}
	csvFile, err := os.Create(filepath.Join(c.Out, runfmt.EntitiesFile))
	if err != nil {
		return nil, err
	}
	defer csvFile.Close()
	w, err := runfmt.NewCSVWriter(csvFile)
	if err != nil {
		return nil, err
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	res := &Result{Dir: c.Out, Manifest: &m}

	tgt, err := c.Target.Open(ctx, c.TargetCatalog, true)
	if err != nil {
		return nil, err
	}
	l := &load{c: c, src: src, tgt: tgt, w: w, m: &m, plans: plans}
	loadErr := l.run(ctx, order)
	m.Timings.LoadWallNs = l.wall
	if loadErr != nil {
		m.Outcome = runfmt.Outcome{Status: runfmt.OutcomeAborted, Detail: loadErr.Error()}
		if errors.Is(loadErr, context.Canceled) {
			m.Outcome.Status = runfmt.OutcomeInterrupted
		}
		m.GoLive = runfmt.GoLive{Status: runfmt.GoLiveSkipped}
		m.Verification = runfmt.Verification{Status: runfmt.Unverified, Error: "the load did not finish"}
		_ = tgt.Close(context.WithoutCancel(ctx)) // best effort; the target may be gone
		return res, finish(res, loadErr)
	}
	m.Outcome = runfmt.Outcome{Status: runfmt.OutcomeComplete}

	// --- after the load: deferred schema settings, goLive, verification
	for _, d := range plan.Deferred {
		if err := tgt.UpdateEntitySchema(ctx, d); err != nil {
			c.logf("warning: deferred schema mutation for %s: %v\n", d.GetEntityType(), err)
		}
	}
	c.logf("goLive ...\n")
	m.GoLive = goLiveRecord(tgt.GoLive(ctx, c.GoLiveStall, c.GoLiveConfirm, func(p int32) { c.logf("\rgoLive %3d%%", p) }))
	c.logf("\n")
	m.Verification = l.verify(ctx, order)
	return res, finish(res, nil)
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

// finish writes the manifest; the exit code follows the contract.
func finish(res *Result, loadErr error) error {
	m := res.Manifest
	m.ExitCode = runfmt.ExitCodeFor(m.Outcome.Status, m.Verification.Status)
	if err := runfmt.WriteManifest(filepath.Join(res.Dir, runfmt.ManifestFile), m); err != nil {
		return errors.Join(loadErr, err)
	}
	return loadErr
}

func runDirFree(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(ents) > 0 {
		return fmt.Errorf("%s exists and is not empty; refusing to write a run there", dir)
	}
	return nil
}

func (c Config) logf(format string, args ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format, args...)
	}
}
