package loader

import (
	"context"
	"fmt"
	"time"

	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evita/pb"
	"github.com/warmstat/warmstat/runfmt"
)

type load struct {
	c        Config
	src, tgt *evita.Session
	w        *runfmt.CSVWriter
	csv      interface{ Sync() error } // entities.csv, synced at the end of each collection
	m        *runfmt.Manifest
	plans    map[string]*collectionPlan
	wall     int64
	start    time.Time
	done     int64
	total    int64
	batch    int64
}

// run loads every collection in order; the load clock covers all of it.
func (l *load) run(ctx context.Context, order []string) error {
	for _, ty := range order {
		l.total += int64(l.plans[ty].load)
	}
	l.start = l.c.Now()
	defer func() { l.wall = l.c.Now().Sub(l.start).Nanoseconds() }()
	for _, ty := range order {
		col, err := l.collection(ctx, ty)
		l.m.Collections = append(l.m.Collections, col)
		l.m.Entities += col.Entities
		l.m.Timings.UpsertNs += col.UpsertNs
		l.m.Timings.SourceReadNs += col.ReadNs
		if err != nil {
			return err
		}
		// every row is flushed as it completes (a crashed warmstat loses at most the
		// upsert in flight); a crashed machine loses at most the current collection
		if err := l.csv.Sync(); err != nil {
			return err
		}
	}
	return nil
}

// collection loads one collection. col is a named result so that the deferred wall
// clock lands in what is returned.
func (l *load) collection(ctx context.Context, ty string) (col runfmt.Collection, err error) {
	p := l.plans[ty]
	col = runfmt.Collection{Name: ty}
	pks, err := l.src.PrimaryKeys(ctx, ty, p.source)
	if err != nil {
		return col, &AbortError{Where: "listing " + ty, Err: err}
	}
	if len(pks) > p.load {
		pks = pks[:p.load]
	}
	copyPlan := evita.CopyPlan{Reflected: evita.ReflectedNames(p.schema), WithPrices: p.schema.GetWithPrice()}
	colStart := l.c.Now()
	defer func() { col.WallNs = l.c.Now().Sub(colStart).Nanoseconds() }()
	// fetch returns batch b; with prefetch the next batch is already on its way while
	// this one is upserted (the source is another server; upserts stay sequential).
	type fetched struct {
		ents []*pb.GrpcSealedEntity
		ns   int64
		err  error
	}
	fetchBatch := func(from int) fetched {
		batch := pks[from:min(from+l.c.BatchSize, len(pks))]
		t0 := l.c.Now()
		ents, err := l.src.Fetch(ctx, p.schema, batch)
		f := fetched{ents: ents, ns: l.c.Now().Sub(t0).Nanoseconds(), err: err}
		if err == nil && len(ents) != len(batch) {
			f.err = fmt.Errorf("asked for %d entities, the source returned %d", len(batch), len(ents))
		}
		return f
	}
	var next chan fetched
	defer func() {
		if next != nil { // a prefetch still on its way: wait, it uses the source session
			<-next
		}
	}()
	for i := 0; i < len(pks); i += l.c.BatchSize {
		if err := ctx.Err(); err != nil {
			return col, &AbortError{Where: fmt.Sprintf("in %s after %d of %d", ty, i, len(pks)), Err: err}
		}
		l.batch++
		var f fetched
		if next != nil {
			f = <-next
		} else {
			f = fetchBatch(i)
		}
		next = nil
		if l.c.Prefetch && i+l.c.BatchSize < len(pks) {
			next = make(chan fetched, 1)
			go func(from int) { next <- fetchBatch(from) }(i + l.c.BatchSize)
		}
		col.ReadNs += f.ns
		if f.err != nil {
			return col, &AbortError{Where: fmt.Sprintf("reading %s batch %d", ty, l.batch), Err: f.err}
		}
		ents := f.ents
		for _, e := range ents {
			if err := ctx.Err(); err != nil { // interrupts take effect between upserts
				return col, &AbortError{Where: fmt.Sprintf("in %s after %d of %d", ty, col.Entities, len(pks)), Err: err}
			}
			mut := evita.BuildUpsert(e, copyPlan)
			begin := l.c.Now()
			err := l.tgt.UpsertUncancelled(mut) // never cut in flight: WARM_UP has no rollback
			ns := l.c.Now().Sub(begin).Nanoseconds()
			if err != nil {
				return col, &AbortError{Where: fmt.Sprintf("upserting %s %d (%d of %d loaded)", ty, e.GetPrimaryKey(), col.Entities, len(pks)), Err: err}
			}
			if err := l.w.Write(runfmt.Row{Collection: ty, PrimaryKey: e.GetPrimaryKey(), Batch: l.batch,
				StartNs: begin.Sub(l.start).Nanoseconds(), UpsertNs: ns}); err != nil {
				return col, err
			}
			if err := l.w.Flush(); err != nil { // a crash loses at most the entity in flight
				return col, err
			}
			col.Entities++
			col.UpsertNs += ns
			l.done++
			if l.c.AfterUpsert != nil {
				l.c.AfterUpsert(ty, int(col.Entities))
			}
		}
		l.progress(ty, col.Entities, len(pks))
	}
	return col, nil
}

func (l *load) progress(ty string, done int64, of int) {
	if l.c.Progress == nil {
		return
	}
	el := l.c.Now().Sub(l.start).Seconds()
	rate := float64(l.done) / max(el, 1e-9)
	eta := "?"
	if rate > 0 {
		eta = (time.Duration(float64(l.total-l.done)/rate) * time.Second).Round(time.Second).String()
	}
	fmt.Fprintf(l.c.Progress, "\r%-24s %7d/%-7d  all %8d/%-8d  %8.1f entities/s  ETA %-10s", ty, done, of, l.done, l.total, rate, eta)
	if int(done) == of {
		fmt.Fprintln(l.c.Progress)
	}
}

// verify re-counts every loaded collection in the source and in the ALIVE target, each
// on a fresh read-only session: expected = min(source, cap). A source that grew during the
// load makes the target short, which is exactly what must not pass as complete.
func (l *load) verify(ctx context.Context, order []string) runfmt.Verification {
	if l.c.SkipVerify {
		return runfmt.Verification{Status: runfmt.VerifySkip}
	}
	s, err := l.c.Target.Open(ctx, l.c.TargetCatalog, false)
	if err != nil {
		return runfmt.Verification{Status: runfmt.Unverified, Error: err.Error()}
	}
	defer s.Close(context.WithoutCancel(ctx))
	// a fresh source session too: the load's own one reads the snapshot of its start
	src, err := l.c.Source.Open(ctx, l.c.SourceCatalog, false)
	if err != nil {
		return runfmt.Verification{Status: runfmt.Unverified, Error: "source: " + err.Error()}
	}
	defer src.Close(context.WithoutCancel(ctx))
	v := runfmt.Verification{Status: runfmt.Verified}
	for i, ty := range order {
		n, err := s.Count(ctx, ty)
		if err != nil {
			return runfmt.Verification{Status: runfmt.Unverified, Error: err.Error()}
		}
		srcN, err := src.Count(ctx, ty)
		if err != nil {
			return runfmt.Verification{Status: runfmt.Unverified, Error: "source: " + err.Error()}
		}
		expected := srcN
		if l.c.MaxPerCollection > 0 {
			expected = min(srcN, l.c.MaxPerCollection)
		}
		cc := runfmt.CountCheck{Collection: ty, Source: int64(srcN), Expected: int64(expected), Target: int64(n), Loaded: l.m.Collections[i].Entities}
		if cc.Target != cc.Expected {
			v.Status, v.Error = runfmt.Mismatch, "target counts differ from the source"
		}
		v.Counts = append(v.Counts, cc)
	}
	return v
}
