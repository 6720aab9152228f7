package loader

import (
	"context"
	"fmt"
	"time"

	"github.com/warmstat/warmstat/base/progress"
	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/runfmt"
)

// flushEvery bounds what a crash of warmstat loses of entities.csv.
const flushEvery = 100 * time.Millisecond

type load struct {
	c       Config
	src     *evita.Session
	tgt     targetSession
	w       *runfmt.CSVWriter
	csv     interface{ Sync() error } // entities.csv, synced at the end of each collection
	m       *runfmt.Manifest
	plans   map[string]*collectionPlan
	wall    int64
	start   time.Time
	done    int64
	total   int64
	batch   int64
	flushed time.Time // when rows last reached the OS
	waitNs  int64     // a duet's waits for its partner inside the load: not in its walls
	// two fetch buffers (the batch being upserted, the one being prefetched), kept from
	// one collection to the next: each grows once to the largest batch
	fetchBufs [2][]byte
}

// run loads every collection in order; the load clock covers all of it.
func (l *load) run(ctx context.Context, order []string) error {
	for _, ty := range order {
		l.total += int64(l.plans[ty].load)
	}
	l.start = l.c.Now()
	defer func() { l.wall = l.c.Now().Sub(l.start).Nanoseconds() - l.waitNs }()
	for _, ty := range order {
		collection := l.collection
		if l.c.Replay != nil {
			collection = l.replayCollection
		}
		col, err := collection(ctx, ty)
		l.m.Collections = append(l.m.Collections, col)
		l.m.Entities += col.Entities
		l.m.Timings.UpsertNs += col.UpsertNs
		l.m.Timings.SourceReadNs += col.ReadNs
		if err != nil {
			return err
		}
		// rows are flushed every 100 ms and at the end of each collection (a crashed
		// warmstat loses at most the last 100 ms of rows); a crashed machine loses at
		// most the current collection
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
	tc := evita.Transcoder{Plan: evita.CopyPlan{Reflected: evita.ReflectedNames(p.schema), WithPrices: p.schema.GetWithPrice()}}
	colStart := l.c.Now()
	defer func() { col.WallNs = l.c.Now().Sub(colStart).Nanoseconds() }()
	defer func() {
		if ferr := l.w.Flush(); err == nil {
			err = ferr
		}
	}()
	// fetch returns batch b as the bytes of its entities, kept in one of two buffers:
	// with prefetch the next batch is already on its way (into the other buffer) while
	// this one is upserted (the source is another server; upserts stay sequential).
	type fetched struct {
		ents [][]byte
		ns   int64
		err  error
	}
	bufs := &l.fetchBufs
	fetchBatch := func(from int, buf *[]byte) fetched {
		batch := pks[from:min(from+l.c.BatchSize, len(pks))]
		t0 := l.c.Now()
		ents, err := l.src.FetchRaw(ctx, p.schema, batch, buf)
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
	var req []byte // the upsert request, rewritten in place for each entity
	for i, n := 0, 0; i < len(pks); i, n = i+l.c.BatchSize, n+1 {
		if err := ctx.Err(); err != nil {
			return col, &AbortError{Where: fmt.Sprintf("in %s after %d of %d", ty, i, len(pks)), Err: err}
		}
		l.batch++
		var f fetched
		if next != nil {
			f = <-next
		} else {
			f = fetchBatch(i, &bufs[n%2])
		}
		next = nil
		if l.c.Prefetch && i+l.c.BatchSize < len(pks) {
			next = make(chan fetched, 1)
			go func(from int, buf *[]byte) { next <- fetchBatch(from, buf) }(i+l.c.BatchSize, &bufs[(n+1)%2])
		}
		col.ReadNs += f.ns
		if f.err != nil {
			return col, &AbortError{Where: fmt.Sprintf("reading %s batch %d", ty, l.batch), Err: f.err}
		}
		for _, e := range f.ents {
			if err := ctx.Err(); err != nil { // interrupts take effect between upserts
				return col, &AbortError{Where: fmt.Sprintf("in %s after %d of %d", ty, col.Entities, len(pks)), Err: err}
			}
			var id evita.Entity
			var err error
			if req, id, err = tc.Upsert(req[:0], e); err != nil {
				return col, &AbortError{Where: fmt.Sprintf("reading %s batch %d", ty, l.batch), Err: err}
			}
			if err := l.upsert(ty, id.PrimaryKey, req, &col); err != nil {
				return col, err
			}
		}
		l.progress(ty, col.Entities, len(pks))
	}
	return col, nil
}

// upsert sends one entity's request, timed, and writes its row.
func (l *load) upsert(ty string, pk int32, req []byte, col *runfmt.Collection) error {
	begin := l.c.Now()
	cost, err := l.tgt.upsert(req, ty) // never cut in flight: WARM_UP has no rollback
	if err != nil {
		return &AbortError{Where: fmt.Sprintf("upserting %s %d (%d of %d loaded)", ty, pk, col.Entities, l.plans[ty].load), Err: err}
	}
	ns := cost.WallNs
	if err := l.w.Write(runfmt.Row{Collection: ty, PrimaryKey: pk, Batch: l.batch,
		StartNs: begin.Sub(l.start).Nanoseconds(), UpsertNs: ns, CPUNs: cost.CPUNs, AllocBytes: cost.AllocBytes, WaitNs: cost.WaitNs}); err != nil {
		return err
	}
	// rows reach the OS every 100 ms and when the collection ends, however it ends (a
	// flush per row was one system call per upsert: 5 % of warmstat's CPU); a crash of
	// warmstat loses at most the last 100 ms of rows
	if end := begin.Add(time.Duration(ns)); end.Sub(l.flushed) >= flushEvery {
		if err := l.w.Flush(); err != nil {
			return err
		}
		l.flushed = end
	}
	col.Entities++
	col.UpsertNs += ns
	l.done++
	if l.c.AfterUpsert != nil {
		l.c.AfterUpsert(ty, int(col.Entities))
	}
	return nil
}

func (l *load) progress(ty string, done int64, of int) {
	if l.c.Progress == nil {
		return
	}
	el := l.c.Now().Sub(l.start)
	rate := float64(l.done) / max(el.Seconds(), 1e-9)
	fmt.Fprintf(l.c.Progress, "\r%-24s %7d/%-7d  all %8d/%-8d  %8.1f entities/s  ETA %-10s", ty, done, of, l.done, l.total, rate,
		progress.ETA(l.done, l.total, el))
	if int(done) == of {
		fmt.Fprintln(l.c.Progress)
	}
}

// verify re-counts every loaded collection in the source and in the ALIVE target, each
// on a fresh read-only session: expected = min(source, cap). A source that grew during the
// load makes the target short, which is exactly what must not pass as complete. A
// replayed load's source counts are the workload's: what its source held when read.
func (l *load) verify(ctx context.Context, order []string) runfmt.Verification {
	if l.c.SkipVerify {
		return runfmt.Verification{Status: runfmt.VerifySkip}
	}
	s, err := l.c.target().open(ctx, l.c.TargetCatalog, false)
	if err != nil {
		return runfmt.Verification{Status: runfmt.Unverified, Error: err.Error()}
	}
	defer s.close(context.WithoutCancel(ctx))
	sourceCount := func(ty string) (int, error) { return l.plans[ty].source, nil }
	if l.c.Replay == nil {
		// a fresh source session too: the load's own one reads the snapshot of its start
		src, err := l.c.Source.Open(ctx, l.c.SourceCatalog, false)
		if err != nil {
			return runfmt.Verification{Status: runfmt.Unverified, Error: "source: " + err.Error()}
		}
		defer src.Close(context.WithoutCancel(ctx))
		sourceCount = func(ty string) (int, error) { return src.Count(ctx, ty) }
	}
	v := runfmt.Verification{Status: runfmt.Verified}
	for i, ty := range order {
		n, err := s.count(ctx, ty)
		if err != nil {
			return runfmt.Verification{Status: runfmt.Unverified, Error: err.Error()}
		}
		srcN, err := sourceCount(ty)
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
