package loader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/warmstat/warmstat/base/progress"
	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/workload"
)

// ExtractConfig is one extraction: a source catalog read once into a workload file.
type ExtractConfig struct {
	Source           *evita.Client
	SourceCatalog    string
	Out              string // the workload file to create (never an existing one)
	BatchSize        int
	MaxPerCollection int
	Collections      []string
	// SourceMode, Server and SnapshotSHA256 describe the source for the file's header
	// (spawn mode fills them).
	SourceMode            string
	Server                *runfmt.ServerBuild
	SnapshotSHA256        string
	SnapshotScale         *float64
	SnapshotLiveHeapBytes *int64
	Progress              io.Writer
	Now                   func() time.Time
}

// Extract reads every collection of the source (in load order, the subset and cap
// applied) exactly as a load reads it — the same key listing, the same fetches, the
// same transcoding into upsert requests — and writes the requests to a workload file,
// verified before it is reported. Interrupts take effect between batches; nothing is
// left at Out unless the file is complete.
func Extract(ctx context.Context, ec ExtractConfig) (*workload.Info, error) {
	if err := outFree(ec.Out); err != nil {
		return nil, err
	}
	c := Config{Source: ec.Source, SourceCatalog: ec.SourceCatalog, BatchSize: ec.BatchSize, MaxPerCollection: ec.MaxPerCollection,
		Collections: ec.Collections, Progress: ec.Progress, Now: ec.Now}
	c.defaults()
	src, err := c.Source.Open(ctx, c.SourceCatalog, false)
	if err != nil {
		return nil, fmt.Errorf("source catalog %q: %w", c.SourceCatalog, err)
	}
	defer src.Close(context.WithoutCancel(ctx))
	var m runfmt.Manifest
	sp, err := c.discover(ctx, src, &m)
	if err != nil {
		return nil, err
	}
	w, err := workload.Create(ec.Out, extractHeader(c, ec, sp, &m), sp.catalog, sp.schemas)
	if err != nil {
		return nil, err
	}
	committed := false
	defer func() {
		if !committed {
			w.Abort()
		}
	}()
	var total int64
	for _, ty := range sp.order {
		total += int64(sp.collections[ty].load)
	}
	x := &extraction{c: c, src: src, w: w, total: total, start: c.Now()}
	for _, ty := range sp.order {
		if err := x.collection(ctx, ty, sp.collections[ty]); err != nil {
			return nil, err
		}
	}
	committed = true
	if err := w.Close(); err != nil {
		return nil, err
	}
	info, err := workload.Verify(ec.Out)
	if err != nil {
		return nil, fmt.Errorf("the workload just written does not verify: %w", err)
	}
	return &info, nil
}

// extractHeader describes the workload file: the source, the snapshot it came from,
// the subset and cap, and the share of production the catalog a replay builds is.
func extractHeader(c Config, ec ExtractConfig, sp *sourcePlan, m *runfmt.Manifest) workload.Header {
	h := workload.Header{CreatedAt: c.Now().UTC(), Catalog: c.SourceCatalog, SourceMode: ec.SourceMode, SourceAddress: c.Source.Addr,
		SourceVersion: c.Source.Version, SnapshotSHA256: ec.SnapshotSHA256, SnapshotScale: ec.SnapshotScale,
		SnapshotLiveHeapBytes: ec.SnapshotLiveHeapBytes, SourceCounts: m.Dataset.SourceCounts,
		Fingerprint: m.Dataset.Fingerprint, Collections: sp.order, CollectionSubset: c.Collections, MaxPerCollection: c.MaxPerCollection,
		BatchSize: c.BatchSize}
	if ec.Server != nil {
		h.Server, _ = json.Marshal(ec.Server)
	}
	var entities int64 // the catalog a replay builds: the collections read, each capped
	for _, name := range sp.order {
		n := m.Dataset.SourceCounts[name]
		if c.MaxPerCollection > 0 {
			n = min(n, int64(c.MaxPerCollection))
		}
		entities += n
	}
	share := evitaserver.ProductionShare(entities)
	h.ProductionShare = &share
	return h
}

// extraction is one Extract's reading: the source session, the file being written and
// the progress over all collections.
type extraction struct {
	c           Config
	src         *evita.Session
	w           *workload.Writer
	done, total int64 // entities written, and to write, over all collections
	start       time.Time
}

// collection reads one collection as a load reads it (key listing, then batches of
// fetches transcoded into upsert requests) and writes its requests and read time.
func (x *extraction) collection(ctx context.Context, ty string, p *collectionPlan) error {
	c, src, w := x.c, x.src, x.w
	colStart := c.Now()
	pks, err := src.PrimaryKeys(ctx, ty, p.source)
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("extraction interrupted in %s while listing its primary keys: %w", ty, context.Cause(ctx))
	}
	if err != nil {
		return fmt.Errorf("listing %s: %w", ty, err)
	}
	if len(pks) > p.load {
		pks = pks[:p.load]
	}
	if err := w.Begin(ty, int64(p.source)); err != nil {
		return err
	}
	tc := evita.Transcoder{Plan: evita.CopyPlan{Reflected: evita.ReflectedNames(p.schema), WithPrices: p.schema.GetWithPrice()}}
	var buf, req []byte
	read := c.Now().Sub(colStart).Nanoseconds()
	for i := 0; i < len(pks); i += c.BatchSize {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("extraction interrupted in %s after %d of %d: %w", ty, i, len(pks), err)
		}
		batch := pks[i:min(i+c.BatchSize, len(pks))]
		t0 := c.Now()
		ents, err := src.FetchRaw(ctx, p.schema, batch, &buf)
		read += c.Now().Sub(t0).Nanoseconds()
		if err == nil && len(ents) != len(batch) {
			err = fmt.Errorf("asked for %d entities, the source returned %d", len(batch), len(ents))
		}
		if err != nil && ctx.Err() != nil { // cut in flight by the interrupt: say so
			return fmt.Errorf("extraction interrupted in %s after %d of %d: %w", ty, i, len(pks), context.Cause(ctx))
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", ty, err)
		}
		for _, e := range ents {
			var id evita.Entity
			if req, id, err = tc.Upsert(req[:0], e); err != nil {
				return fmt.Errorf("reading %s: %w", ty, err)
			}
			if err := w.Entity(id.PrimaryKey, req); err != nil {
				return err
			}
		}
		x.done += int64(len(batch))
		c.extractProgress(ty, i+len(batch), len(pks), x.done, x.total, x.start)
	}
	return w.End(read, c.Now().Sub(colStart).Nanoseconds())
}

func (c Config) extractProgress(ty string, done, of int, all, total int64, start time.Time) {
	if c.Progress == nil {
		return
	}
	el := c.Now().Sub(start)
	rate := float64(all) / max(el.Seconds(), 1e-9)
	fmt.Fprintf(c.Progress, "\rextract %-16s %7d/%-7d  all %8d/%-8d  %8.1f entities/s  ETA %-10s", ty, done, of, all, total, rate,
		progress.ETA(all, total, el))
	if done == of {
		fmt.Fprintln(c.Progress)
	}
}

// SpawnExtract extracts from a pristine snapshot: a reader server alone on a
// disposable copy of it (sc's writer settings are unused), the snapshot proved
// unchanged afterwards — a workload read from a snapshot that changed is removed.
func SpawnExtract(ctx context.Context, sc SpawnConfig, ec ExtractConfig) (info *workload.Info, err error) {
	for _, p := range []*string{&sc.Pristine, &sc.WorkDir, &ec.Out} {
		if *p, err = filepath.Abs(*p); err != nil {
			return nil, err
		}
	}
	for _, d := range []struct{ what, path string }{{"the work directory", sc.WorkDir}, {"the workload file", ec.Out}} {
		if err := evitaserver.Overlap(d.what, d.path, sc.Pristine, "the pristine snapshot"); err != nil {
			return nil, err
		}
	}
	if err := outFree(ec.Out); err != nil { // refused before any server starts
		return nil, err
	}
	pristine := filepath.Join(sc.Pristine, sc.Catalog)
	if st, err := os.Stat(pristine); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("pristine snapshot %s: no catalog directory %q there", sc.Pristine, sc.Catalog)
	}
	snap, err := snapshotSettings(&sc, "reader") // an extraction starts no writer
	if err != nil {
		return nil, err
	}
	if sc.HeapNote != "" && ec.Progress != nil {
		fmt.Fprintf(ec.Progress, "note: %s\n", sc.HeapNote)
	}
	createdWork, err := prepareWork(sc.WorkDir, map[string]int64{"reader": sc.ReaderHeap})
	if err != nil {
		return nil, err
	}
	var fault *evitaserver.Fault
	startFailed := false // the reader died starting, or never became ready: its log is kept
	defer func() {       // remove what this call created; a failed server's logs are kept
		os.RemoveAll(filepath.Join(sc.WorkDir, "reader"))
		if createdWork && fault == nil && !startFailed {
			os.RemoveAll(sc.WorkDir)
		}
	}()
	before, size, err := checksum(pristine)
	if err != nil {
		return nil, err
	}
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	c := Config{Progress: ec.Progress, Warnings: ec.Progress}
	reader, _, err := sc.start(runCtx, stop, "reader", sc.ReaderHeap, snap.StorageCompress, map[string]string{sc.Catalog: pristine}, c)
	if err != nil {
		startFailed = !errors.Is(err, context.Canceled)
		return nil, err
	}
	defer sc.discard(reader)
	src, err := evita.Dial(runCtx, reader.Addr, evita.Options{})
	if err != nil {
		return nil, withCause(runCtx, err, &fault)
	}
	defer src.Close()
	wait := 2*time.Minute + time.Duration(size>>30)*time.Minute
	if _, err := src.WaitSettled(runCtx, sc.Catalog, wait, nil); err != nil {
		startFailed = ctx.Err() == nil // its catalog never settled: the log says why
		return nil, withCause(runCtx, fmt.Errorf("reader server: %w", err), &fault)
	}
	ec.Source, ec.SourceCatalog, ec.SourceMode, ec.SnapshotSHA256 = src, sc.Catalog, "spawn", before
	ec.Server, _ = reader.Record()
	ec.SnapshotLiveHeapBytes = snap.LiveHeapBytes
	if snap.Seed != nil {
		scale := snap.Seed.Scale
		ec.SnapshotScale = &scale
	}
	info, err = Extract(runCtx, ec)
	if err != nil {
		return nil, withCause(runCtx, err, &fault)
	}
	stop(nil)
	reader.Kill()
	if cerr := unchanged(pristine, before); cerr != nil {
		os.Remove(ec.Out) // read from a snapshot that changed: not the workload it claims to be
		return nil, cerr
	}
	return info, nil
}

// outFree refuses an existing workload path before anything is read (workload.Create
// refuses it too, but only once the source has been opened).
func outFree(path string) error {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s exists: a workload file is never overwritten (choose another path, or remove it)", path)
	}
	return nil
}
