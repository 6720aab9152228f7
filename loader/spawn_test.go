package loader_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/internal/evitatest"
	"github.com/warmstat/warmstat/loader"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/seed"
	"github.com/warmstat/warmstat/workload"
)

// seed --pristine (a compressed snapshot), then two spawned loads on the same work
// directory with an uncompressed writer: both verified — the reader opens the snapshot
// with the snapshot's storage.compress, recorded beside it, not with the writer's (it
// used the writer's: "Record is compressed and ObservableInput has compression support
// disabled!") — the writer's GC recorded, heaps known, the snapshot unchanged, no JVM
// left behind.
func TestSpawnedLoadsOnPristineSnapshot(t *testing.T) {
	cp := evitatest.Server(t)
	ctx := context.Background()
	tmp := t.TempDir()
	p := seed.DefaultProfile()
	pristine, st := smallSnapshot(t, cp)
	info, err := evitaserver.ReadSnapshot(pristine, "shop")
	if err != nil {
		t.Fatal(err)
	}
	if !info.StorageCompress || info.Entities != st.Entities || info.Seed == nil || info.Seed.Scale != 0.001 || info.Seed.Seed != 5 ||
		info.Seed.ProfileSHA256 != p.Digest() || info.Server == nil || info.Server.Version == "" || info.LiveHeapBytes == nil || info.Counts["Product"] == 0 {
		t.Fatalf("snapshot metadata: %+v", info)
	}
	t.Logf("snapshot: %d entities, live heap %d MB, server %s", info.Entities, *info.LiveHeapBytes>>20, info.Server.Version)
	sum, err := evitaserver.Checksum(filepath.Join(pristine, "shop"))
	if err != nil {
		t.Fatal(err)
	}
	sc := loader.SpawnConfig{Server: cp, Pristine: pristine, Catalog: "shop", WorkDir: filepath.Join(tmp, "work"),
		ServerHeap: 1 << 30, ReaderHeap: 1 << 30, Compress: false, Probe: evitatest.Probe}
	for _, id := range []string{"a", "b"} {
		out := filepath.Join(tmp, "runs", id)
		res, err := loader.Spawn(ctx, sc, loader.Config{Out: out, BatchSize: 100,
			Manifest: runfmt.Manifest{RunID: id, Build: runfmt.Build{Label: "local"}}})
		if err != nil {
			t.Fatalf("spawn %s: %v", id, err)
		}
		m := res.Manifest
		if m.ExitCode != 0 || m.WriterGC == nil || m.WriterGC.YoungPauses == nil || *m.Server.MaxHeapBytes != 1<<30 || *m.Conditions.CacheEnabled ||
			*m.Conditions.StorageCompress {
			t.Fatalf("run %s: exit %d gc %+v", id, m.ExitCode, m.WriterGC)
		}
		if back, err := runfmt.ReadManifest(filepath.Join(out, runfmt.ManifestFile)); err != nil || back.WriterGC == nil || back.Factors == nil {
			t.Fatalf("writer GC or variance factors not in the manifest on disk: %v", err)
		}
		// a live run's factors: the reader's CPU competes with the writer's
		if f := m.Factors; f == nil || f.Error != "" || f.ReaderCPUNs == nil || *f.ReaderCPUNs <= 0 || f.StealNs == nil || f.MachineCPUNs == nil ||
			*f.MachineCPUNs < m.Timings.LoadWallNs/2 {
			t.Fatalf("run %s: variance factors %+v", id, f)
		}
	}
	if after, _ := evitaserver.Checksum(filepath.Join(pristine, "shop")); after != sum {
		t.Fatal("pristine snapshot changed")
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), tmp) {
			t.Fatalf("a JVM outlived the runs: %s", p)
		}
	}
	// a work directory that is not ours is refused and left alone
	foreign := filepath.Join(tmp, "foreign")
	os.MkdirAll(foreign, 0o755)
	os.WriteFile(filepath.Join(foreign, "keep"), []byte("x"), 0o644)
	sc.WorkDir = foreign
	if _, err := loader.Spawn(ctx, sc, loader.Config{Out: filepath.Join(tmp, "runs", "c"), Manifest: runfmt.Manifest{Build: runfmt.Build{Label: "l"}}}); err == nil ||
		!strings.Contains(err.Error(), "refusing to wipe") {
		t.Fatalf("foreign work dir: %v", err)
	}
}

// A live writer that stops answering for longer than the client's keepalive interval
// (30 s; frozen with SIGSTOP for 35 s, as in a long GC pause) is waited for: neither the
// unanswered keepalive ping nor a call deadline ends the measurement, and the load
// completes verified once the writer continues.
func TestSlowWriterIsWaitedFor(t *testing.T) {
	src := evitatest.Server(t)
	ctx := context.Background()
	tmp := t.TempDir()
	pristine, _ := smallSnapshot(t, src)
	work := filepath.Join(tmp, "work")
	sc := loader.SpawnConfig{Server: src, Pristine: pristine, Catalog: "shop", WorkDir: work,
		ServerHeap: 1 << 30, ReaderHeap: 1 << 30, Compress: true, Probe: evitatest.Probe}
	frozen := time.Duration(0)
	const freeze = 35 * time.Second // past the client's 30 s keepalive time: a ping goes unanswered
	c := loader.Config{Out: filepath.Join(tmp, "run"), BatchSize: 50, Manifest: runfmt.Manifest{RunID: "slow", Build: runfmt.Build{Label: "local"}}}
	c.AfterUpsert = func(coll string, n int) {
		if frozen != 0 || n != 10 {
			return
		}
		pids := evitatest.Processes(filepath.Join(work, "writer", "storage"))
		if len(pids) != 1 {
			t.Errorf("writer JVM: %v", pids)
			return
		}
		syscall.Kill(pids[0], syscall.SIGSTOP)
		begin := time.Now()
		time.AfterFunc(freeze, func() { syscall.Kill(pids[0], syscall.SIGCONT) })
		frozen = time.Since(begin) + freeze
	}
	begin := time.Now()
	res, err := loader.Spawn(ctx, sc, c)
	if err != nil || res.Manifest.ExitCode != 0 || res.Manifest.Outcome.Status != runfmt.OutcomeComplete {
		t.Fatalf("after a %s freeze: %v %+v", frozen, err, res)
	}
	if took := time.Since(begin); took < freeze {
		t.Fatalf("the load took %s: the writer was not frozen", took)
	}
}

// A reader heap too small for the snapshot: the reader fails while it activates the
// catalog (out of memory, or GC-bound first). The error names that cause first —
// which server, its heap, the heap dump if one was written, what to change — and not
// what it broke downstream; nothing is left running, no run directory is written.
func TestReaderTooSmallForSnapshot(t *testing.T) {
	src := evitatest.Server(t)
	ctx := context.Background()
	tmp := t.TempDir()
	pristine, _ := smallSnapshot(t, src)
	work := filepath.Join(tmp, "work")
	sc := loader.SpawnConfig{Server: src, Pristine: pristine, Catalog: "shop", WorkDir: work,
		ServerHeap: 1 << 30, ReaderHeap: readerTestHeap, Compress: true, Probe: evitatest.Probe}
	out := filepath.Join(tmp, "run")
	// the snapshot's metadata knows its live heap: such a reader is refused before any JVM
	_, err := loader.Spawn(ctx, sc, loader.Config{Out: out, Manifest: runfmt.Manifest{RunID: "small", Build: runfmt.Build{Label: "local"}}})
	var he *evitaserver.HeapError
	if !errors.As(err, &he) || he.Server != "reader" || he.Need <= readerTestHeap {
		t.Fatalf("a reader heap below the snapshot's measured need: %v", err)
	}
	if _, err := os.Stat(work); !os.IsNotExist(err) {
		t.Fatalf("the refused run made its work directory: %v", err)
	}
	// without metadata (a snapshot made otherwise, its need unknown) the reader starts and
	// fails while it activates the catalog
	bare := filepath.Join(tmp, "bare") // the same catalog, without its metadata file
	if err := evitaserver.CopyTree(filepath.Join(pristine, "shop"), filepath.Join(bare, "shop")); err != nil {
		t.Fatal(err)
	}
	sc.Pristine = bare
	compressed := true
	sc.SnapshotCompress = &compressed
	res, err := loader.Spawn(ctx, sc, loader.Config{Out: out, Manifest: runfmt.Manifest{RunID: "small", Build: runfmt.Build{Label: "local"}}})
	if err == nil || res != nil {
		t.Fatalf("a reader of %d MiB loaded the snapshot: %v", readerTestHeap>>20, err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, fmt.Sprintf("the reader server (heap %dm)", readerTestHeap>>20)) ||
		!(strings.Contains(msg, "ran out of memory") || strings.Contains(msg, "is GC-bound")) || !strings.Contains(msg, "give it a larger heap") {
		tail, _ := os.ReadFile(filepath.Join(work, "reader-logs", "server.log"))
		gc, _ := os.ReadFile(filepath.Join(work, "reader-logs", "gc.log"))
		t.Fatalf("error does not lead with the reader's fault: %v\nreader log:\n%s\ngc log (last 3 KiB):\n%s",
			err, lastBytes(tail, 6<<10), lastBytes(gc, 3<<10))
	}
	if strings.Contains(msg, "OutOfMemoryError") {
		_, rest, ok := strings.Cut(msg, "heap dump: ")
		dump, _, _ := strings.Cut(rest, ";")
		if st, err := os.Stat(dump); !ok || err != nil || st.Size() == 0 {
			t.Errorf("an out-of-memory reader's heap dump is not named or not kept (%q): %v", dump, err)
		}
	}
	if len(evitatest.Processes(work)) > 0 {
		t.Fatal("a JVM outlived the failed run")
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("a run directory was written for a run that never started")
	}
	t.Logf("%v", err)
}

// a reader heap too small to activate the small snapshot (measured: at 48m the reader
// boots and runs out of memory activating the scale-0.001 catalog, in ~10 s; at 64m it
// activates it and fails only during the load)
const readerTestHeap = 48 << 20

// smallSnapshot is the scale-0.001 compressed snapshot the spawn tests share with
// other packages' (evitatest.SmallSnapshot).
func smallSnapshot(t *testing.T, src evitaserver.Source) (string, *seed.Stats) {
	t.Helper()
	return evitatest.SmallSnapshot(t, src)
}

func TestMain(m *testing.M) {
	code := m.Run()
	evitatest.RemoveShared()
	os.Exit(code)
}

// stagedProfiler stands in for the writer profiler to watch when Spawn finishes a run:
// a real profiler's files are written in the same call (Finish), but what is tested
// here is only where and when that call happens. Its JVM options are passed to the
// writer as given, so it can also make a real writer JVM die while it starts.
type stagedProfiler struct {
	out        string
	jvmOptions []string
	finishedIn string
	outExisted bool
}

func (p *stagedProfiler) JVMOptions() []string          { return p.jvmOptions }
func (p *stagedProfiler) Attach(int) error              { return nil }
func (p *stagedProfiler) Window(string, bool) error     { return nil }
func (p *stagedProfiler) Record() *runfmt.WriterProfile { return p.record() }
func (p *stagedProfiler) record() *runfmt.WriterProfile {
	return &runfmt.WriterProfile{Profiler: runfmt.ProfilerJFR, Mode: "jfr", Interval: 20e6, IntervalUnit: runfmt.UnitNanoseconds,
		Error: "a test double: no recording"}
}
func (p *stagedProfiler) Finish(dir string) *runfmt.WriterProfile {
	p.finishedIn = dir
	_, err := os.Stat(p.out)
	p.outExisted = err == nil
	os.WriteFile(filepath.Join(dir, "profile-finished"), []byte("x"), 0o644)
	return p.record()
}

// A pristine snapshot that changes during a spawned load fails the run (outcome failed,
// exit 1, the cause named first), although it loaded and verified; and everything the
// run records after the load — the writer's GC, its profile — is finished before the
// run is moved into place: --out appears once, complete, and is never rewritten.
func TestSpawnFinishesBeforeCommit(t *testing.T) {
	src := evitatest.Server(t)
	tmp := t.TempDir()
	shared, _ := smallSnapshot(t, src)
	pristine := filepath.Join(tmp, "pristine") // a copy: the shared snapshot is only ever read
	if err := evitaserver.CopyTree(shared, pristine); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "run")
	prof := &stagedProfiler{out: out}
	sc := loader.SpawnConfig{Server: src, Pristine: pristine, Catalog: "shop", WorkDir: filepath.Join(tmp, "work"),
		ServerHeap: 1 << 30, ReaderHeap: 1 << 30, Compress: true, Probe: evitatest.Probe, Profiler: prof}
	c := loader.Config{Out: out, BatchSize: 100, Manifest: runfmt.Manifest{RunID: "changed", Build: runfmt.Build{Label: "local"}}}
	c.AfterUpsert = func(_ string, n int) {
		if n == 3 { // something else writes into the snapshot while the run reads it
			os.WriteFile(filepath.Join(pristine, "shop", "intruder"), []byte("x"), 0o644)
		}
	}
	res, err := loader.Spawn(context.Background(), sc, c)
	if err == nil || !strings.HasPrefix(err.Error(), "the pristine snapshot "+filepath.Join(pristine, "shop")+" changed during the run") {
		t.Fatalf("a changed snapshot: %v", err)
	}
	m, rerr := runfmt.ReadManifest(filepath.Join(out, runfmt.ManifestFile))
	if rerr != nil || res == nil || m.Outcome.Status != runfmt.OutcomeFailed || m.ExitCode != 1 || !strings.Contains(m.Outcome.Detail, "changed during the run") ||
		m.Verification.Status != runfmt.Verified || len(m.Dataset.SnapshotSHA256) != 64 {
		t.Fatalf("manifest on disk: %v %+v", rerr, m)
	}
	if m.WriterGC == nil || m.WriterProfile == nil {
		t.Fatalf("recorded after the load, missing from the committed manifest: gc %+v profile %+v", m.WriterGC, m.WriterProfile)
	}
	if prof.outExisted || prof.finishedIn == "" || prof.finishedIn == out {
		t.Fatalf("the profile was finished in %q while %s existed=%v: the run was committed before it was complete", prof.finishedIn, out, prof.outExisted)
	}
	if _, err := os.Stat(filepath.Join(out, "profile-finished")); err != nil {
		t.Fatalf("what was finished in the staging directory is not in the run: %v", err)
	}
	if len(evitatest.Processes(tmp)) > 0 {
		t.Fatal("a JVM outlived the run")
	}
}

// A JVM that dies while it starts (here: the writer, given an option no JVM knows)
// ends the run before anything is measured, and its log is kept and named; the
// other server's start is given up, the servers' data is removed, no run is written.
func TestWriterDiesStarting(t *testing.T) {
	src := evitatest.Server(t)
	tmp := t.TempDir()
	pristine, _ := smallSnapshot(t, src)
	work, out := filepath.Join(tmp, "work"), filepath.Join(tmp, "run")
	sc := loader.SpawnConfig{Server: src, Pristine: pristine, Catalog: "shop", WorkDir: work, ServerHeap: 1 << 30, ReaderHeap: 1 << 30,
		Compress: true, Probe: evitatest.Probe, Profiler: &stagedProfiler{out: out, jvmOptions: []string{"-XX:+WarmstatNoSuchOption"}}}
	begin := time.Now()
	res, err := loader.Spawn(context.Background(), sc, loader.Config{Out: out, Manifest: runfmt.Manifest{RunID: "dies", Build: runfmt.Build{Label: "local"}}})
	if err == nil || res != nil || !strings.HasPrefix(err.Error(), "writer server: ") {
		t.Fatalf("a writer that cannot start: %v", err)
	}
	log := filepath.Join(work, "writer-logs", "server.log")
	if !strings.Contains(err.Error(), log) {
		t.Fatalf("the error does not name the writer's log %s: %v", log, err)
	}
	if b, rerr := os.ReadFile(log); rerr != nil || !strings.Contains(string(b), "WarmstatNoSuchOption") {
		t.Fatalf("the failed writer's log was not kept: %v %q", rerr, b)
	}
	for _, d := range []string{filepath.Join(work, "writer"), filepath.Join(work, "reader"), out} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s left behind: %v", d, err)
		}
	}
	if len(evitatest.Processes(work)) > 0 {
		t.Fatal("a JVM outlived the failed start")
	}
	t.Logf("failed in %s: %v", time.Since(begin).Round(time.Millisecond), err)
}

// A pristine snapshot read once into a workload file (a reader alone, the snapshot
// proved unchanged), then replayed in spawn mode: only the writer runs — one JVM
// during the whole load — no reader heap is asked for or recorded, and the run
// verifies against the file's counts with the same dataset fingerprint a live load of
// the snapshot records.
func TestSpawnedReplay(t *testing.T) {
	evitatest.Exclusive(t) // it compares the JIT's compile time (wall-clock) of two loads, and runs the full JIT
	// the JVMs' default JIT, as users run them: make test turns its top tier off
	// elsewhere, through the environment (which this test then proves unrecorded)
	for _, v := range evitaserver.JavaOptionsVariables {
		t.Setenv(v, "")
	}
	src := evitatest.Server(t)
	ctx := context.Background()
	tmp := t.TempDir()
	pristine, st := smallSnapshot(t, src)
	wl := filepath.Join(tmp, "shop.workload")
	info, err := loader.SpawnExtract(ctx, loader.SpawnConfig{Server: src, Pristine: pristine, Catalog: "shop", WorkDir: filepath.Join(tmp, "extract"),
		ReaderHeap: 1 << 30, Probe: evitatest.Probe}, loader.ExtractConfig{Out: wl, BatchSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	if info.Trailer.Entities != int64(st.Entities) || info.Header.SourceMode != "spawn" || len(info.Header.SnapshotSHA256) != 64 ||
		info.Header.SnapshotScale == nil || *info.Header.SnapshotScale != 0.001 || len(info.Header.Server) == 0 {
		t.Fatalf("workload %+v", info)
	}
	if _, err := os.Stat(filepath.Join(tmp, "extract")); !os.IsNotExist(err) {
		t.Fatalf("the extraction's work directory was left: %v", err)
	}
	t.Logf("workload: %d entities, %d bytes (%.0f per entity), extracted in %s", info.Trailer.Entities, info.Size,
		float64(info.Size)/float64(info.Trailer.Entities), time.Duration(info.Trailer.ExtractNs))
	r, err := workload.Open(wl)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	work := filepath.Join(tmp, "work")
	jvms := -1
	c := loader.Config{Out: filepath.Join(tmp, "run"), Replay: r, ReplayPath: wl, ReplaySHA256: info.SHA256,
		Manifest: runfmt.Manifest{RunID: "replay", Build: runfmt.Build{Label: "local"}}}
	c.AfterUpsert = func(_ string, n int) {
		if jvms < 0 && n == 5 {
			jvms = len(evitatest.Processes(tmp))
		}
	}
	// a warm writer: one warm-up load into a throwaway catalog, published and deleted,
	// before the measured one (its storage kept to show what is left)
	storage := filepath.Join(tmp, "storage")
	res, err := loader.Spawn(ctx, loader.SpawnConfig{Server: src, WorkDir: work, ServerHeap: 1 << 30, Compress: true, Probe: evitatest.Probe,
		WarmUp: 1, KeepWriterStorage: storage}, c)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Manifest
	if jvms != 1 {
		t.Fatalf("%d JVMs ran during the replayed load, want the writer alone", jvms)
	}
	if m.ExitCode != 0 || m.Verification.Status != runfmt.Verified || m.SourceMode() != runfmt.SourceReplay || m.Reader.MaxHeapBytes != nil ||
		m.Reader.JVM != nil || m.Entities != int64(st.Entities) || m.WriterGC == nil || m.Dataset.SnapshotSHA256 != info.Header.SnapshotSHA256 ||
		m.Server.LoadCPUNs == nil || *m.Server.LoadCPUNs <= 0 || *m.Server.LoadCPUNs > 2*int64(runtime.NumCPU())*m.Timings.LoadWallNs ||
		m.Server.JVM == nil || len(m.Server.JVM.EnvOptions) != 0 {
		t.Fatalf("replayed run: %+v", m)
	}
	// the peaks: the writer JVM resident beyond a bare JVM and within its heap and the
	// overhead the ledger reserves beside it; this test process (the loader) resident
	if w, l := m.Server.PeakRSSBytes, m.Loader.PeakRSSBytes; w == nil || *w < 100<<20 ||
		*w > *m.Server.MaxHeapBytes+evitaserver.JVMOverhead(*m.Server.MaxHeapBytes) || l == nil || *l < 1<<20 {
		t.Fatalf("peak memory: writer %v, loader %v (heap %d)", w, l, *m.Server.MaxHeapBytes)
	}
	// the variance factors: the writer's CPU by thread group adds up to its CPU in the
	// window (both read from /proc at its ends, 10 ms ticks apart at most per read), the
	// JIT compiled during the load, no reader
	f := m.Factors
	if f == nil || f.Error != "" || f.ReaderCPUNs != nil || f.JITCompiles == nil || *f.JITCompiles <= 0 || f.JITCompileNs == nil || *f.JITCompileNs <= 0 {
		t.Fatalf("replay's variance factors: %+v", f)
	}
	var byGroup int64
	for _, ns := range f.WriterCPUNs {
		byGroup += ns
	}
	if d := byGroup - *m.Server.LoadCPUNs; d < -50e6 || d > 50e6 || f.WriterCPUNs["request"] <= 0 {
		t.Fatalf("writer CPU by thread group %v (sum %d) against the writer's CPU %d", f.WriterCPUNs, byGroup, *m.Server.LoadCPUNs)
	}
	t.Logf("variance factors read in %s (%.3f %% of the load wall-clock %s): %+v", time.Duration(f.CostNs), 100*float64(f.CostNs)/float64(m.Timings.LoadWallNs),
		time.Duration(m.Timings.LoadWallNs), f.WriterCPUNs)
	// the warm-up: recorded, its catalog gone, its run directory too; the measured load
	// compiled less than the warm-up did
	if m.Conditions.WarmUpLoads != 1 || len(m.WarmUp) != 1 || m.WarmUp[0].Entities != int64(st.Entities) || m.WarmUp[0].LoadWallNs <= 0 ||
		m.WarmUp[0].GoLiveNs <= 0 || m.TargetCatalog != "shop" || m.WarmUp[0].JITCompileNs == nil || *f.JITCompileNs >= *m.WarmUp[0].JITCompileNs {
		t.Fatalf("warm-up: conditions %+v, warm-up %+v, target %s, JIT in the load window %d ns", m.Conditions, m.WarmUp, m.TargetCatalog, *f.JITCompileNs)
	}
	t.Logf("JIT compiling: warm-up load %s (its load %s), measured load %s (%d compiles; its load %s)", time.Duration(*m.WarmUp[0].JITCompileNs),
		time.Duration(m.WarmUp[0].LoadWallNs), time.Duration(*f.JITCompileNs), *f.JITCompiles, time.Duration(m.Timings.LoadWallNs))
	if _, err := os.Stat(filepath.Join(storage, "shop")); err != nil {
		t.Fatalf("the measured catalog's storage: %v", err)
	}
	if _, err := os.Stat(filepath.Join(storage, "shopWarmUp")); !os.IsNotExist(err) {
		t.Fatalf("the warm-up catalog was not deleted: %v", err)
	}
	if _, err := os.Stat(filepath.Join(work, "warm-up-1")); !os.IsNotExist(err) {
		t.Fatalf("the warm-up run's directory was left: %v", err)
	}
	if _, err := os.Stat(filepath.Join(work, "reader-logs")); !os.IsNotExist(err) {
		t.Fatalf("a reader was started: %v", err)
	}
	if sum, _ := workload.FileSHA256(wl); sum != info.SHA256 {
		t.Fatal("the workload changed")
	}

	// the embedded writer killed mid-replay: the run ends with that cause named first,
	// its manifest says aborted, and the writer's log is kept
	r2, err := workload.Open(wl)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	work2 := filepath.Join(tmp, "work-killed")
	c2 := loader.Config{Out: filepath.Join(tmp, "killed"), Replay: r2, ReplayPath: wl, ReplaySHA256: info.SHA256,
		Manifest: runfmt.Manifest{RunID: "killed", Build: runfmt.Build{Label: "local"}}}
	c2.AfterUpsert = func(_ string, n int) {
		if n == 5 {
			for _, pid := range evitatest.Processes(work2) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	res, err = loader.Spawn(ctx, loader.SpawnConfig{Server: src, WorkDir: work2, ServerHeap: 1 << 30, Compress: true, Probe: evitatest.Probe, Embedded: true}, c2)
	if err == nil || !strings.HasPrefix(err.Error(), "the writer server (heap 1g) exited unexpectedly") || res == nil {
		t.Fatalf("an embedded writer killed mid-replay: %v", err)
	}
	if m := res.Manifest; m.Outcome.Status != runfmt.OutcomeAborted || !strings.Contains(m.Outcome.Detail, "writer server") || m.ExitCode != 1 ||
		m.TargetMode != runfmt.TargetEmbedded {
		t.Fatalf("manifest of the killed replay: %+v", m.Outcome)
	}
	if _, err := os.Stat(filepath.Join(work2, "writer-logs", "server.log")); err != nil {
		t.Fatalf("the killed writer's log was not kept: %v", err)
	}
	if pids := evitatest.Processes(work2); len(pids) != 0 {
		t.Fatalf("JVMs left: %v", pids)
	}
}

// lastBytes is the end of a log, for a failure's message.
func lastBytes(b []byte, n int) []byte { return b[max(0, len(b)-n):] }

// An embedded writer whose heap its catalog outgrows in goLive survives the
// OutOfMemoryError and answers the goLive call with it; only its log says the JVM ran
// out. The run waits for the watch and ends aborted with that cause named (exit 1), not
// "complete, unverified". The catalog (1,937 entities) is a profile never measured, so
// no estimate refuses the 300m heap before the start, as a user's shape would not be.
func TestEmbeddedWriterOutOfMemoryInGoLive(t *testing.T) {
	src := evitatest.Server(t)
	ctx := context.Background()
	tmp := t.TempDir()
	p := seed.DefaultProfile()
	p.Collections[0].Count++ // another profile: no measured need
	wl := filepath.Join(tmp, "shop.wsw")
	info, err := seed.WriteWorkload(ctx, wl, "shop", p, 0.005, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := workload.Open(wl)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	work := filepath.Join(tmp, "work")
	c := loader.Config{Out: filepath.Join(tmp, "run"), Replay: r, ReplayPath: wl, ReplaySHA256: info.SHA256,
		Manifest: runfmt.Manifest{RunID: "oom", Build: runfmt.Build{Label: "local"}}}
	res, err := loader.Spawn(ctx, loader.SpawnConfig{Server: src, WorkDir: work, ServerHeap: 300 << 20, Compress: true, Probe: evitatest.Probe, Embedded: true}, c)
	if err == nil || !(strings.Contains(err.Error(), "ran out of memory") || strings.Contains(err.Error(), "is GC-bound")) || res == nil {
		t.Fatalf("an embedded writer out of memory: %v", err)
	}
	if m := res.Manifest; m.Outcome.Status != runfmt.OutcomeAborted || !strings.Contains(m.Outcome.Detail, "writer server") || m.ExitCode != 1 {
		t.Fatalf("its manifest: %+v, exit %d", m.Outcome, m.ExitCode)
	}
	if pids := evitatest.Processes(work); len(pids) != 0 {
		t.Fatalf("JVMs left: %v", pids)
	}
}
