package loader

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/warmstat/warmstat/base/canary"
	"github.com/warmstat/warmstat/embedded"
	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/runfmt"
)

// SpawnConfig runs both servers itself: a reader on a disposable copy of a pristine
// snapshot and a fresh writer, each with a pinned heap and a GC log. When the load
// replays a workload file (Config.Replay) there is no reader: only the writer starts,
// and Pristine and Catalog stay empty.
type SpawnConfig struct {
	Server     evitaserver.Source // the build under test (the writer) and the reader
	Pristine   string             // parent of <Catalog>/, a stopped server's storage (only ever read)
	Catalog    string
	WorkDir    string // ours: absent, empty or carrying warmstat's marker
	ServerHeap int64  // 0: chosen from the snapshot's metadata
	ReaderHeap int64  // 0: chosen from the snapshot's metadata
	Compress   bool   // the writer's storage.compress (the reader follows the snapshot's)
	// HeapNote is set when a heap not given was chosen from an older warmstat's record
	// (its seed scale read as a share of production, not the catalog's own size): what
	// the run says about it.
	HeapNote string
	// SnapshotCompress is the snapshot's storage.compress when it has no metadata file
	// (made otherwise than by warmstat seed --pristine); the heaps must then be given.
	SnapshotCompress *bool
	Probe            func(ctx context.Context, addr string) error
	// Watch tunes the watch over both servers (GC-bound, out of memory, exited, not
	// answering); zero values take evitaserver's defaults.
	Watch evitaserver.WatchOptions
	// Profiler, if set, profiles the writer: the load and goLive each in a window of
	// their own; its record goes into the manifest (nil = unprofiled).
	Profiler Profiler
	// Embedded runs the writer as warmstat's embedded writer (package embedded): the
	// same engine, settings and JVM rules, no transport. Only a replay can (the reader
	// would be a server over gRPC again).
	Embedded bool
	// NoClassArchive boots both JVMs without the build's class-data archive
	// (evitaserver.Config.NoClassArchive).
	NoClassArchive bool
	// WriterJVMOptions are given to the writer JVM after warmstat's own (and a
	// profiler's), and recorded in the run's conditions.
	WriterJVMOptions []string
	// WarmUp is how many loads of the same source the writer does, each into a
	// throwaway catalog published and deleted, before the measured load (recorded:
	// runfmt.Conditions.WarmUpLoads). 0: the measured load is the writer JVM's first.
	WarmUp int
	// KeepWriterStorage, if set, is where the writer's storage goes after the run: the
	// writer is then closed gracefully, not killed (tests open it with a server).
	KeepWriterStorage string
	// CPUs, if set, is the writer's CPU set (a duet's: Duet sets it); the reader, if
	// any, is not pinned.
	CPUs            []int
	embeddedClasses string // Build's output
}

// ErrEmbeddedNeedsReplay: an embedded writer replays a workload file; a live source
// would put a reader server and its transport back.
var ErrEmbeddedNeedsReplay = errors.New("an embedded writer replays a workload file: a live source is not possible")

// Profiler profiles the writer JVM (package profile's Recorder).
type Profiler interface {
	JVMOptions() []string                       // added to the writer's command line
	Attach(pid int) error                       // the writer, once it answers
	Window(phase string, begin bool) error      // Config.Window
	Record() *runfmt.WriterProfile              // the condition, before any window
	Finish(runDir string) *runfmt.WriterProfile // after the writer stopped: files and record
}

// Spawn starts the servers, runs the load, tears both down, records the writer's GC
// in the manifest and proves the pristine snapshot unchanged. A server that fails
// during the run (exits, runs out of memory, turns GC-bound, stops answering) ends it;
// the manifest and the error name that cause first.
func Spawn(ctx context.Context, sc SpawnConfig, c Config) (res *Result, err error) {
	live := c.Replay == nil // a replay reads a file: no reader server
	if err := sc.absolute(&c, live); err != nil {
		return nil, err
	}
	pristine := filepath.Join(sc.Pristine, sc.Catalog)
	snap := &evitaserver.Snapshot{}
	heaps := map[string]int64{"writer": sc.ServerHeap}
	if live {
		if st, err := os.Stat(pristine); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("pristine snapshot %s: no catalog directory %q there", sc.Pristine, sc.Catalog)
		}
		if snap, err = snapshotSettings(&sc, "writer", "reader"); err != nil {
			return nil, err
		}
		heaps = map[string]int64{"writer": sc.ServerHeap, "reader": sc.ReaderHeap}
	} else {
		if _, err := c.replayPlan(); err != nil { // refused before the writer starts
			return nil, err
		}
		if err := replayHeap(&sc, c.Replay.Header()); err != nil {
			return nil, err
		}
	}
	if sc.HeapNote != "" {
		c.warnf("note: %s\n", sc.HeapNote)
	}
	if sc.Embedded {
		if live {
			return nil, ErrEmbeddedNeedsReplay
		}
		id, err := sc.Server.Identify()
		if err != nil {
			return nil, err
		}
		if sc.embeddedClasses, err = embedded.Build(sc.Server, id, func(msg string) { c.warnf("%s\n", msg) }); err != nil {
			return nil, err
		}
	}
	createdWork, err := prepareWork(sc.WorkDir, heaps)
	if err != nil {
		return nil, err
	}
	var fault *evitaserver.Fault
	startFailed := false // a JVM died starting, or never became ready: its log is kept
	defer func() {
		// on failure, remove only what this call created: the servers' data (a copy, a
		// catalog loaded only to be measured), and the work directory it made — unless a
		// server failed (while starting, or during the run): its logs and heap dump are
		// kept, and the error names them
		if res != nil {
			return
		}
		for _, role := range []string{"writer", "reader"} {
			os.RemoveAll(filepath.Join(sc.WorkDir, role))
		}
		if createdWork && fault == nil && !startFailed {
			os.RemoveAll(sc.WorkDir)
		}
	}()
	var before string
	var size int64
	if live {
		if before, size, err = checksum(pristine); err != nil {
			return nil, err
		}
	}
	proved := !live // the run's own finish proved the snapshot unchanged (a replay has none)
	defer func() {  // the snapshot must come out as it went in, whatever happened
		if proved {
			return
		}
		if cerr := unchanged(pristine, before); cerr != nil {
			err = errors.Join(cerr, err)
		}
	}()

	// the servers are watched from their start; a fault cancels the run with its cause
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	// both JVMs start at once (each takes seconds to boot; nothing is measured yet), and
	// whichever started is discarded however the other fared; a JVM that dies starting
	// ends the other's start too
	type started struct {
		s   *evitaserver.Server
		ew  *embedded.Writer
		err error
	}
	writerUp := make(chan started, 1)
	go func() {
		w, ew, err := sc.start(runCtx, stop, "writer", sc.ServerHeap, sc.Compress, nil, c)
		if err != nil {
			stop(nil)
		}
		writerUp <- started{w, ew, err}
	}()
	var reader *evitaserver.Server
	var rerr error
	if live {
		readerCompress := snap.StorageCompress // the snapshot opens only with its own setting
		reader, _, rerr = sc.start(runCtx, stop, "reader", sc.ReaderHeap, readerCompress, map[string]string{sc.Catalog: pristine}, c)
		if rerr != nil {
			stop(nil) // a writer still booting gives up
		}
	}
	w := <-writerUp
	if reader != nil {
		defer sc.discard(reader)
	}
	if w.s != nil {
		defer sc.discard(w.s)
	}
	startFailed = w.err != nil && !errors.Is(w.err, context.Canceled) || rerr != nil && !errors.Is(rerr, context.Canceled)
	if w.err != nil && (rerr == nil || errors.Is(rerr, context.Canceled)) {
		return nil, withCause(runCtx, w.err, &fault) // the writer failed first: the reader was only stopped
	}
	if rerr != nil {
		return nil, rerr
	}
	writer := w.s
	if live {
		src, err := evita.Dial(runCtx, reader.Addr, evita.Options{})
		if err != nil {
			return nil, withCause(runCtx, err, &fault)
		}
		defer src.Close()
		// the reader activates the stored catalog in the background: wait for it, as the
		// Java harness does, with a deadline that grows with the snapshot
		wait := 2*time.Minute + time.Duration(size>>30)*time.Minute
		if _, err := src.WaitSettled(runCtx, sc.Catalog, wait, func(state string, waited time.Duration) {
			c.warnf("reader: catalog %s is %s after %s\n", sc.Catalog, state, waited.Round(time.Second))
		}); err != nil {
			return nil, withCause(runCtx, fmt.Errorf("reader server: %w", err), &fault)
		}
		c.Source, c.SourceCatalog = src, sc.Catalog
	}
	if sc.Profiler != nil {
		if err := sc.Profiler.Attach(writer.Pid()); err != nil {
			return nil, fmt.Errorf("writer profile: %w", err)
		}
		c.Window, c.Manifest.WriterProfile = sc.Profiler.Window, sc.Profiler.Record()
	}
	// the writer's CPU during the load window, and the factors of its variance (the
	// writer's CPU by thread group, faults, switches, JIT, steal, the reader's CPU),
	// sampled inside the profiler's window and outside the load's clocks
	var loadCPU *int64
	var factors *runfmt.VarianceFactors
	var loadWindow [2]time.Duration // the writer's uptime at the load window's ends
	var speed *canary.Canary        // the machine's speed during the load
	var f0 factorSample
	begun := false
	profWindow := c.Window
	canary.Prepare() // its memory made now, not inside the window it measures
	c.Window = func(phase string, begin bool) error {
		var err error
		if begin && profWindow != nil {
			err = profWindow(phase, begin)
		}
		if phase == runfmt.PhaseLoad && begin {
			f0, begun = sampleFactors(writer, reader, w.ew), true
			speed = canary.Start()
		} else if phase == runfmt.PhaseLoad && begun {
			fig := speed.Stop()
			f1 := sampleFactors(writer, reader, w.ew)
			loadWindow = [2]time.Duration{f0.uptime, f1.uptime + f1.cost}
			if f0.werr == nil && f1.werr == nil { // the writer's CPU from the same /proc reads as its factors
				v := (f1.writer.Total() - f0.writer.Total()).Nanoseconds()
				loadCPU = &v
			}
			factors = factorsBetween(f0, f1)
			if fig.Samples > 0 {
				factors.Canary = &runfmt.Canary{Samples: fig.Samples, ALUNs: fig.ALUNs, L3Ns: fig.L3Ns, DRAMNs: fig.DRAMNs}
			}
		}
		if !begin && profWindow != nil {
			err = profWindow(phase, begin)
		}
		return err
	}
	if w.ew != nil {
		c.Embedded = w.ew
	} else {
		// the writer is watched: a slow call to a live server is not a failure, so its
		// calls may take long; a dead or GC-bound server ends them through the watch
		dst, err := evita.Dial(runCtx, writer.Addr, evita.Options{CallTimeout: 30 * time.Minute})
		if err != nil {
			return nil, withCause(runCtx, err, &fault)
		}
		defer dst.Close()
		c.Target = dst
	}
	// the warm-up loads run before the measured load's window and clocks; the writer's
	// GC is then counted from their end
	var warmEnd time.Duration
	if sc.WarmUp > 0 {
		loads, err := warmUp(runCtx, c, sc.WarmUp, sc.WorkDir, func() (evitaserver.JIT, error) { return evitaserver.ReadJIT(writer.Pid()) })
		if err != nil {
			return nil, withCause(runCtx, err, &fault)
		}
		c.Manifest.WarmUp, warmEnd = loads, writer.Uptime()
	}
	c.Manifest.Conditions.WarmUpLoads = sc.WarmUp
	if c.Duet != nil {
		c.Duet.pinned(writer.Pid())
	}
	sh, rh := sc.ServerHeap, sc.ReaderHeap
	no, compress := false, sc.Compress
	c.Manifest.Server.MaxHeapBytes = &sh // pinned by us: known
	c.Manifest.Conditions.StorageCompress, c.Manifest.Conditions.CacheEnabled, c.Manifest.Conditions.TrafficRecording = &compress, &no, &no
	c.Manifest.Conditions.WriterJVMOptions = slices.Clone(sc.WriterJVMOptions)
	c.Manifest.Server.Build, c.Manifest.Server.JVM = writer.Record()
	readerDown := make(chan struct{})
	if live {
		c.Manifest.Reader.MaxHeapBytes = &rh
		c.Manifest.Reader.Build, c.Manifest.Reader.JVM = reader.Record()
		c.Manifest.Dataset.SnapshotSHA256 = before
	} else {
		close(readerDown)                   // there is none
		c.Manifest.Reader = runfmt.Reader{} // and no reader heap, whatever the caller knew
	}
	defer func() {
		if proved { // the finish below ended the reader
			<-readerDown
		}
	}()
	// everything the run records is finished before its manifest is written and the run
	// moved into place: a run at --out is complete, never rewritten
	c.finalize = func(dir string, m *runfmt.Manifest, runErr error) error {
		var err error
		m.Server.LoadCPUNs, m.Factors = loadCPU, factors
		// did a server fail? give the watch its moment (see withCause): after an error, and
		// after a goLive that failed or a load left unverified (an embedded writer survives
		// its OutOfMemoryError and answers with it; only its log says the JVM ran out)
		if runErr != nil || m.GoLive.Status == runfmt.GoLiveFailed || m.Verification.Status == runfmt.Unverified {
			select {
			case <-runCtx.Done():
			case <-time.After(faultGrace):
			}
		}
		if errors.As(context.Cause(runCtx), &fault) {
			// the run ended because a server failed: that is its outcome, named first
			m.Outcome = runfmt.Outcome{Status: runfmt.OutcomeAborted, Detail: fault.Error()}
			err = fault
		}
		stop(nil) // the run is over: a server stopping now is no fault
		// both servers have served their purpose and hold nothing to keep (a disposable
		// copy, a catalog loaded only to be measured): they are ended at once, not shut
		// down gracefully (evitaDB spends 4 s closing its APIs). Their GC logs are
		// complete: the JVM flushes every log line as it writes it; the profile windows
		// are already closed.
		if live {
			go func() { reader.Kill(); close(readerDown) }()
		}
		// the peaks, read before the writer ends: what the machine had to hold
		if rss, rerr := evitaserver.PeakRSS(writer.Pid()); rerr == nil {
			m.Server.PeakRSSBytes = &rss
		}
		if rss, rerr := evitaserver.OwnPeakRSS(); rerr == nil {
			m.Loader.PeakRSSBytes = &rss
		}
		if sc.KeepWriterStorage != "" {
			err = errors.Join(err, sc.keepStorage(writer, w.ew))
		}
		writer.Kill()
		if sc.Profiler != nil { // converted now, with no server left to compete with
			m.WriterProfile = sc.Profiler.Finish(dir)
			if e := m.WriterProfile.Error; e != "" {
				c.warnf("warning: writer profile: %s\n", e)
			}
		}
		if gc, gerr := writer.GCSince(warmEnd); gerr == nil { // after a warm-up: the measured part alone
			young, full := gc.Young, gc.Full
			m.WriterGC = &runfmt.GCStats{Collections: gc.Pauses(), YoungPauses: &young, FullPauses: &full, PauseNs: gc.PauseNs,
				ShareOfWallPc: gc.ShareOf(gc.UptimeNs - warmEnd.Nanoseconds())}
		}
		if m.Factors != nil && loadWindow[1] > 0 { // the pauses inside the load window
			if gc, gerr := writer.GCBetween(loadWindow[0], loadWindow[1]); gerr == nil {
				n, ns := gc.Pauses(), gc.PauseNs
				m.Factors.GCPauses, m.Factors.GCPauseNs = &n, &ns
			}
		}
		<-readerDown // the reader's copy is not the snapshot, but nothing may read while it writes
		if !live {
			return err
		}
		proved = true
		if cerr := unchanged(pristine, before); cerr != nil {
			// what was read is not the snapshot the run names: nothing it measured stands
			m.Outcome = runfmt.Outcome{Status: runfmt.OutcomeFailed, Detail: cerr.Error()}
			err = errors.Join(cerr, err)
		}
		return err
	}
	if res, err = Run(runCtx, c); res == nil {
		return nil, withCause(runCtx, err, &fault)
	}
	return res, err
}

// unchanged proves the pristine snapshot still has the checksum it had before the run.
func unchanged(pristine, before string) error {
	after, _, err := checksum(pristine)
	if err != nil {
		return fmt.Errorf("the pristine snapshot %s could not be checksummed after the run: %w", pristine, err)
	}
	if after != before {
		return fmt.Errorf("the pristine snapshot %s changed during the run (checksum %s -> %s)", pristine, before[:12], after[:12])
	}
	return nil
}

// prepareWork refuses heaps the machine cannot hold, then claims the work directory
// (absent, empty or warmstat's); created says whether this call made it.
func prepareWork(dir string, heaps map[string]int64) (created bool, err error) {
	m, err := evitaserver.ReadMachine()
	if err != nil {
		return false, err
	}
	if err := evitaserver.CheckHeapsFit(m, heaps); err != nil {
		return false, err
	}
	_, statErr := os.Stat(dir)
	if err := evitaserver.PrepareDataDir(dir); err != nil {
		return false, err
	}
	return errors.Is(statErr, fs.ErrNotExist), nil
}

// faultGrace is how long a failed call waits for the watch to name a server's failure:
// a few of its polling intervals.
const faultGrace = 6 * time.Second

// absolute resolves every path before anything starts: the JVMs run in their data
// directories, where a relative path would mean something else.
func (sc *SpawnConfig) absolute(c *Config, live bool) error {
	if !live {
		for _, p := range []*string{&sc.WorkDir, &c.Out} {
			abs, err := filepath.Abs(*p)
			if err != nil {
				return err
			}
			*p = abs
		}
		return nil
	}
	for _, p := range []*string{&sc.Pristine, &sc.WorkDir, &c.Out} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	// the snapshot is only ever read: nothing this run writes may lie inside it or hold it
	if err := evitaserver.Overlap("the work directory", sc.WorkDir, sc.Pristine, "the pristine snapshot"); err != nil {
		return err
	}
	return evitaserver.Overlap("the run directory", c.Out, sc.Pristine, "the pristine snapshot")
}

// keepStorage closes the writer gracefully (its storage complete, as a server's stop
// leaves it) and moves its storage to KeepWriterStorage.
func (sc SpawnConfig) keepStorage(writer *evitaserver.Server, ew *embedded.Writer) error {
	var err error
	if ew != nil {
		err = ew.Close(time.Minute)
	} else {
		err = writer.Stop(time.Minute)
	}
	if err != nil {
		return fmt.Errorf("closing the writer to keep its storage: %w", err)
	}
	return os.Rename(filepath.Join(writer.DataDir, "storage"), sc.KeepWriterStorage)
}

// start starts one server (the writer: a server, or the embedded writer) and watches
// it until the run ends; a fault stops the run with that cause and kills the JVM, so
// that no call waits on it.
func (sc SpawnConfig) start(ctx context.Context, stop context.CancelCauseFunc, role string, heap int64, compress bool,
	catalogs map[string]string, c Config) (*evitaserver.Server, *embedded.Writer, error) {
	var jvmOpts []string
	if role == "writer" && sc.Profiler != nil {
		jvmOpts = sc.Profiler.JVMOptions()
	}
	if role == "writer" {
		jvmOpts = append(jvmOpts, sc.WriterJVMOptions...)
	}
	cfg := evitaserver.Config{Server: sc.Server, DataDir: filepath.Join(sc.WorkDir, role),
		HeapBytes: heap, Compress: compress, Probe: sc.Probe, Catalogs: catalogs, JVMOptions: jvmOpts,
		NoClassArchive: sc.NoClassArchive, Note: func(s string) { c.warnf("%s server: %s\n", role, s) }}
	if role == "writer" {
		cfg.CPUs = sc.CPUs
	}
	var s *evitaserver.Server
	var ew *embedded.Writer
	var err error
	if role == "writer" && sc.Embedded {
		if ew, err = embedded.Start(ctx, cfg, sc.embeddedClasses); err == nil {
			s = ew.Server
		}
	} else {
		s, err = evitaserver.Start(ctx, cfg)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s server: %w", role, err)
	}
	o := sc.Watch
	o.Role = role
	if o.Advice == "" {
		o.Advice = "give it a larger heap"
	}
	if o.Warn == nil {
		o.Warn = func(msg string) { c.warnf("\nwarning: %s\n", msg) }
	}
	go func() {
		if f := s.Watch(ctx, o); f != nil {
			stop(f)
			s.AwaitHeapDump()
			s.Kill()
		}
	}()
	return s, ew, nil
}

// discard stops a server and removes its data directory (a copy, or a catalog that
// was loaded only to be measured); its logs, and any heap dump, stay in the work dir.
func (sc SpawnConfig) discard(s *evitaserver.Server) {
	s.Stop(time.Minute)
	os.RemoveAll(s.DataDir)
}

// withCause puts a server fault that cancelled ctx before the error it caused. A call
// can fail a moment before the watch has classified the server's failure (a JVM dying
// of OutOfMemoryError resets its connections first), so a failure waits briefly for
// the watch's verdict.
func withCause(ctx context.Context, err error, fault **evitaserver.Fault) error {
	if err == nil {
		return nil
	}
	select {
	case <-ctx.Done():
	case <-time.After(faultGrace):
	}
	if errors.As(context.Cause(ctx), fault) {
		return fmt.Errorf("%w (then: %v)", *fault, err)
	}
	return err
}

// checksum digests the snapshot and measures its size.
func checksum(dir string) (string, int64, error) {
	sum, err := evitaserver.Checksum(dir)
	if err != nil {
		return "", 0, err
	}
	var size int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				size += info.Size()
			}
		}
		return nil
	})
	return sum, size, nil
}
