package method

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/base/staging"
	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/loader"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/series"
	"github.com/warmstat/warmstat/workload"
)

// Config is the series of plan in dir: every run a spawn-mode load of its side, with
// the workload wl replayed when the plan replays (extracted by side A's build when
// the series starts, unless the source is a workload: WorkloadFile). hint adds to a failed
// run's error what its caller would change (nil: nothing). The caller sets OnRun and
// OnLook to show the series as it goes.
func (m *Method) Config(dir, wl string, sides map[string]*Side, plan series.Plan, hint func(error) error) series.Config {
	if hint == nil {
		hint = func(err error) error { return err }
	}
	r := runner{m: m, dir: dir, wl: wl, sides: sides, plan: plan}
	c := series.Config{Dir: dir, Plan: plan,
		Checksum: func() (string, error) { return evitaserver.Checksum(filepath.Join(m.Source.Pristine, plan.Catalog)) },
		Compare:  analyze.CompareOptions{Quantiles: analyze.QuantilesJava},
		Run: func(ctx context.Context, side, runDir, id, work string) error {
			part, done, err := r.part(side, runDir, id, work)
			if err != nil {
				return err
			}
			defer done()
			fmt.Fprintf(m.o.Log, "%s %s (%s) ...\n", time.Now().Format("15:04:05"), runDir[len(dir)+1:], sides[side].Label)
			_, err = loader.Spawn(ctx, part.Spawn, part.Load)
			return hint(err)
		},
		RunDuet: func(ctx context.Context, runs [2]series.DuetRun) [2]error {
			errs := r.duet(ctx, runs)
			for i := range errs {
				errs[i] = hint(errs[i])
			}
			return errs
		},
	}
	if plan.Replay {
		c.Source = "the workload " + wl
		c.Checksum = func() (string, error) { return workload.FileSHA256(wl) }
		c.Prepare = func(ctx context.Context) error { return r.extract(ctx, hint) }
	}
	return c
}

// runner makes a series' runs.
type runner struct {
	m     *Method
	dir   string
	wl    string
	sides map[string]*Side
	plan  series.Plan
}

// part is one run of side into runDir: its writer and its load; done closes what it
// opened (the workload's reader).
func (r runner) part(side, runDir, id, work string) (loader.DuetPart, func(), error) {
	o, plan, s := r.m.o, r.plan, r.sides[side]
	mf := runfmt.Manifest{RunID: id, Build: runfmt.Build{Label: s.Label}, Loader: runfmt.Loader{Version: runfmt.UnknownText(o.Version)}, Machine: r.m.Machine.Record()}
	mf.Server.MaxHeapBytes, mf.Reader.MaxHeapBytes = &plan.ServerHeap, nil
	if plan.ReaderHeap > 0 {
		mf.Reader.MaxHeapBytes = &plan.ReaderHeap
	}
	mf.Conditions.StorageCompress, mf.Conditions.CacheEnabled, mf.Conditions.TrafficRecording = o.Compress, o.Cache, o.Record
	mf.Conditions.CatalogLine = plan.CatalogLine
	compress := o.Compress == nil || *o.Compress
	sc := loader.SpawnConfig{Server: s.Src, Pristine: r.m.Source.Pristine, Catalog: plan.Catalog, WorkDir: work, SnapshotCompress: o.SnapshotCompress,
		ServerHeap: plan.ServerHeap, ReaderHeap: plan.ReaderHeap, Compress: compress, Probe: evita.Probe,
		Embedded: plan.TargetMode == runfmt.TargetEmbedded, WriterJVMOptions: o.WriterJVMOptions, NoClassArchive: o.NoClassArchive,
		WarmUp: o.WriterWarmUp}
	lc := loader.Config{Out: runDir, BatchSize: o.BatchSize, MaxPerCollection: o.MaxPerCollection,
		Prefetch: o.Prefetch, Manifest: mf, Warnings: o.Log}
	done := func() {}
	if plan.Replay { // the workload is the source: proved whole before every run, no reader
		rd, sum, err := OpenReplay(r.wl)
		if err != nil {
			return loader.DuetPart{}, nil, err
		}
		done = func() { rd.Close() }
		sc.Pristine, sc.Catalog, sc.ReaderHeap = "", "", 0
		lc.Replay, lc.ReplayPath, lc.ReplaySHA256 = rd, r.wl, sum
		lc.BatchSize, lc.MaxPerCollection = 0, 0 // the file's
	}
	if o.Profiler != nil { // a fresh profiler per run: each run's profile is its own
		prof, err := o.Profiler(work)
		if err != nil {
			done()
			return loader.DuetPart{}, nil, err
		}
		sc.Profiler = prof
	}
	return loader.DuetPart{Spawn: sc, Load: lc}, done, nil
}

// duet runs a duet's two runs at once, each writer in its slot's CPUs.
func (r runner) duet(ctx context.Context, runs [2]series.DuetRun) [2]error {
	var ps [2]loader.DuetPart
	var errs [2]error
	for i, run := range runs {
		p, done, err := r.part(run.Side, run.Dir, run.ID, run.Work)
		if err != nil {
			errs[i] = err
			return errs
		}
		defer done()
		ps[i] = p
	}
	cpus := func(i int) string {
		if r.m.CPUs[i] == nil {
			return "all CPUs"
		}
		return "CPUs " + evitaserver.FormatCPUs(r.m.CPUs[i])
	}
	fmt.Fprintf(r.m.o.Log, "%s duet: %s (%s, %s) with %s (%s, %s) ...\n", time.Now().Format("15:04:05"),
		runs[0].Dir[len(r.dir)+1:], r.sides[runs[0].Side].Label, cpus(0), runs[1].Dir[len(r.dir)+1:], r.sides[runs[1].Side].Label, cpus(1))
	_, errs = loader.Duet(ctx, ps, r.m.CPUs)
	return errs
}

// extract reads the snapshot into the series' workload when the series starts; a
// series resumed finds it there (its checksum proves it unchanged).
func (r runner) extract(ctx context.Context, hint func(error) error) error {
	o, plan, wl := r.m.o, r.plan, r.wl
	if _, err := os.Stat(wl); err == nil {
		return nil
	}
	for _, p := range staging.Leftovers(wl) { // an extraction the series did not finish
		os.Remove(p)
	}
	fmt.Fprintf(o.Log, "%s extracting %s/%s into %s (build %s, reader heap %s) ...\n", time.Now().Format("15:04:05"), r.m.Source.Pristine, plan.Catalog,
		wl, r.sides["A"].Label, runfmt.FormatBytesExact(&plan.ReaderHeap))
	ec := loader.ExtractConfig{Out: wl, BatchSize: o.BatchSize, MaxPerCollection: o.MaxPerCollection, Progress: o.Progress}
	info, err := loader.SpawnExtract(ctx, loader.SpawnConfig{Server: r.sides["A"].Src, Pristine: r.m.Source.Pristine, Catalog: plan.Catalog, SnapshotCompress: o.SnapshotCompress,
		WorkDir: filepath.Join(r.dir, "work"), ReaderHeap: plan.ReaderHeap, Probe: evita.Probe}, ec)
	if err != nil {
		return fmt.Errorf("extracting the series' workload: %w", hint(err))
	}
	fmt.Fprintf(o.Log, "workload: %d entities, %s, read in %s\n", info.Trailer.Entities, runfmt.FormatSize(info.Size),
		time.Duration(info.Trailer.ExtractNs).Round(time.Millisecond))
	return nil
}

// OpenReplay verifies a whole workload file and opens it to be replayed, with its SHA-256.
func OpenReplay(path string) (*workload.Reader, string, error) {
	info, err := workload.Verify(path)
	if err != nil {
		return nil, "", err
	}
	rd, err := workload.Open(path)
	return rd, info.SHA256, err
}
