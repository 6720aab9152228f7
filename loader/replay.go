package loader

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/warmstat/warmstat/runfmt"
)

// ErrReplayMismatch: the load asked for a subset or cap the workload was not read with.
var ErrReplayMismatch = errors.New("the workload was not extracted with these settings")

// replayPlan is the source plan of a workload file: its schemas, its source's counts
// and its collections in the order it holds them. A subset or cap other than the
// file's is refused: the file holds what it was extracted with, nothing else.
func (c *Config) replayPlan() (*sourcePlan, error) {
	h := c.Replay.Header()
	if len(c.Collections) > 0 && !slices.Equal(sorted(c.Collections), sorted(h.Collections)) {
		return nil, fmt.Errorf("%w: it holds the collections %v, the load asks for %v", ErrReplayMismatch, h.Collections, c.Collections)
	}
	if c.MaxPerCollection != 0 && c.MaxPerCollection != h.MaxPerCollection {
		return nil, fmt.Errorf("%w: it was extracted with a cap of %d per collection, the load asks for %d", ErrReplayMismatch, h.MaxPerCollection, c.MaxPerCollection)
	}
	c.Collections, c.MaxPerCollection, c.BatchSize = h.CollectionSubset, h.MaxPerCollection, h.BatchSize
	c.SourceCatalog = h.Catalog
	if c.TargetCatalog == "" {
		c.TargetCatalog = h.Catalog
	}
	sp := &sourcePlan{catalog: c.Replay.CatalogSchema(), schemas: c.Replay.EntitySchemas(), collections: map[string]*collectionPlan{}, order: h.Collections}
	for _, sch := range sp.schemas {
		n := int(h.SourceCounts[sch.GetName()])
		load := n
		if h.MaxPerCollection > 0 {
			load = min(n, h.MaxPerCollection)
		}
		sp.collections[sch.GetName()] = &collectionPlan{schema: sch, source: n, load: load}
	}
	for _, ty := range sp.order {
		if sp.collections[ty] == nil {
			return nil, fmt.Errorf("workload %s: collection %s has no entity schema in the file", c.ReplayPath, ty)
		}
	}
	return sp, nil
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// replayManifest records the replay: the source mode and the workload's identity,
// and the dataset as the file's source had it (the fingerprint a live load of that
// source records).
func (c Config) replayManifest(sp *sourcePlan, m *runfmt.Manifest) {
	h := c.Replay.Header()
	m.Source = &runfmt.Source{Mode: runfmt.SourceReplay, Workload: c.ReplayPath, WorkloadSHA256: c.ReplaySHA256}
	m.Dataset.SourceCounts, m.Dataset.Fingerprint = h.SourceCounts, h.Fingerprint
	m.Dataset.SnapshotSHA256 = h.SnapshotSHA256
	m.Conditions.BatchSize, m.Conditions.MaxPerCollection, m.Conditions.CollectionSubset = h.BatchSize, h.MaxPerCollection, h.CollectionSubset
}

// replayCollection loads one collection from the workload file: each entity's request
// is read (timed as the source read, outside its upsert's clock) and upserted.
func (l *load) replayCollection(ctx context.Context, ty string) (col runfmt.Collection, err error) {
	p := l.plans[ty]
	col = runfmt.Collection{Name: ty}
	colStart, waited := l.c.Now(), l.waitNs // the collection's clock covers reading its first record too
	defer func() { col.WallNs = l.c.Now().Sub(colStart).Nanoseconds() - (l.waitNs - waited) }()
	wc, err := l.c.Replay.NextCollection()
	col.ReadNs += l.c.Now().Sub(colStart).Nanoseconds()
	if err != nil {
		return col, &AbortError{Where: "reading " + ty + " from the workload", Err: err}
	}
	if wc.Name != ty {
		return col, &AbortError{Where: "reading " + ty + " from the workload", Err: fmt.Errorf("the file holds %s next", wc.Name)}
	}
	defer func() {
		if ferr := l.w.Flush(); err == nil {
			err = ferr
		}
	}()
	for i := 0; ; i++ {
		if err := ctx.Err(); err != nil { // interrupts take effect between upserts
			return col, &AbortError{Where: fmt.Sprintf("in %s after %d of %d", ty, col.Entities, p.load), Err: err}
		}
		if i%l.c.BatchSize == 0 {
			l.batch++                    // the batches the file was extracted in
			if d := l.c.Duet; d != nil { // lock-step: both runs end batch k before either begins k+1
				var w int64
				err := d.meet(ctx, fmt.Sprintf("batch %d", l.batch), &w)
				l.waitNs, d.rec.BatchWaitNs, d.rec.BatchWaits = l.waitNs+w, d.rec.BatchWaitNs+w, d.rec.BatchWaits+1
				if err != nil {
					return col, &AbortError{Where: fmt.Sprintf("in %s after %d of %d", ty, col.Entities, p.load), Err: err}
				}
			}
		}
		t0 := l.c.Now()
		pk, req, err := l.c.Replay.Next()
		col.ReadNs += l.c.Now().Sub(t0).Nanoseconds()
		if err == io.EOF {
			break
		}
		if err != nil {
			return col, &AbortError{Where: fmt.Sprintf("reading %s from the workload (%d of %d loaded)", ty, col.Entities, p.load), Err: err}
		}
		if err := l.upsert(ty, pk, req, &col); err != nil {
			return col, err
		}
		if i%l.c.BatchSize == l.c.BatchSize-1 {
			l.progress(ty, col.Entities, p.load)
		}
	}
	if col.Entities%int64(l.c.BatchSize) != 0 || col.Entities == 0 { // a whole last batch was reported in the loop
		l.progress(ty, col.Entities, int(col.Entities))
	}
	return col, nil
}
