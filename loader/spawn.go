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
//
// Its phases are methods of spawn; the deferred clean-ups stay here, in the order they
// must run (last registered, first run).
func Spawn(ctx context.Context, sc SpawnConfig, c Config) (res *Result, err error) {
	s := &spawn{sc: sc, c: c, live: c.Replay == nil} // a replay reads a file: no reader server
	createdWork, err := s.prepare()
	if err != nil {
		return nil, err
	}
	defer func() {
		// on failure, remove only what this call created: the servers' data (a copy, a
		// catalog loaded only to be measured), and the work directory it made — unless a
		// server failed (while starting, or during the run): its logs and heap dump are
		// kept, and the error names them
		if res != nil {
			return
		}
		for _, role := range []string{"writer", "reader"} {
			os.RemoveAll(filepath.Join(s.sc.WorkDir, role))
		}
		if createdWork && s.fault == nil && !s.startFailed {
			os.RemoveAll(s.sc.WorkDir)
		}
	}()
	if s.live {
		if s.before, s.size, err = checksum(s.pristine); err != nil {
			return nil, err
		}
	}
	s.proved = !s.live // the run's own finish proved the snapshot unchanged (a replay has none)
	defer func() {     // the snapshot must come out as it went in, whatever happened
		if s.proved {
			return
		}
		if cerr := unchanged(s.pristine, s.before); cerr != nil {
			err = errors.Join(cerr, err)
		}
	}()

	// the servers are watched from their start; a fault cancels the run with its cause
	s.ctx, s.stop = context.WithCancelCause(ctx)
	defer s.stop(nil)
	w, rerr := s.boot()
	if s.reader != nil {
		defer s.sc.discard(s.reader)
	}
	if w.s != nil {
		defer s.sc.discard(w.s)
	}
	if err := s.booted(w, rerr); err != nil {
		return nil, err
	}
	if s.live {
		src, err := s.connectReader()
		if err != nil {
			return nil, err
		}
		defer src.Close()
	}
	if s.sc.Profiler != nil {
		if err := s.sc.Profiler.Attach(s.writer.Pid()); err != nil {
			return nil, fmt.Errorf("writer profile: %w", err)
		}
		s.c.Window, s.c.Manifest.WriterProfile = s.sc.Profiler.Window, s.sc.Profiler.Record()
	}
	s.measureLoadWindow()
	if s.ew != nil {
		s.c.Embedded = s.ew
	} else {
		dst, err := s.connectWriter()
		if err != nil {
			return nil, err
		}
		defer dst.Close()
	}
	if err := s.warmUp(); err != nil {
		return nil, err
	}
	s.recordConditions()
	defer func() {
		if s.proved { // the finish ended the reader
			<-s.readerDown
		}
	}()
	// everything the run records is finished before its manifest is written and the run
	// moved into place: a run at --out is complete, never rewritten
	s.c.finalize = s.finish
	if res, err = Run(s.ctx, s.c); res == nil {
		return nil, withCause(s.ctx, err, &s.fault)
	}
	return res, err
}

// spawn is one Spawn under way: its configuration, the servers it started and what
// it measured around the load, shared by its phases and by the finish that completes
// the manifest.
type spawn struct {
	sc   SpawnConfig
	c    Config
	live bool // a reader server is the source (not a replayed file)

	pristine string                // <Pristine>/<Catalog>
	snap     *evitaserver.Snapshot // the snapshot's settings (live only)
	before   string                // the snapshot's checksum before the run (live only)
	size     int64                 // the snapshot's size in bytes (live only)

	ctx         context.Context // the run's: cancelled with a server's fault as its cause
	stop        context.CancelCauseFunc
	fault       *evitaserver.Fault
	startFailed bool // a JVM died starting, or never became ready: its log is kept
	proved      bool // the snapshot was proved unchanged (or there is none)

	writer, reader *evitaserver.Server
	ew             *embedded.Writer // the embedded writer, if the writer is one
	readerDown     chan struct{}    // closed once the reader is ended (at once without one)

	// the writer's CPU during the load window, and the factors of its variance (the
	// writer's CPU by thread group, faults, switches, JIT, steal, the reader's CPU),
	// sampled inside the profiler's window and outside the load's clocks
	loadCPU    *int64
	factors    *runfmt.VarianceFactors
	speed      []canary.Sample  // the canary's samples through the load window
	loadWindow [2]time.Duration // the writer's uptime at the load window's ends
	warmEnd    time.Duration    // the writer's uptime when the warm-up loads ended
}

// startedServer is one JVM's start: the server, the embedded writer if it is one, or
// why it did not start.
type startedServer struct {
	s   *evitaserver.Server
	ew  *embedded.Writer
	err error
}

// prepare checks what the run needs before any JVM starts: absolute paths, the
// snapshot's settings or the replay's plan, the heaps, the embedded writer's classes;
// then it claims the work directory (created says whether this call made it).
func (s *spawn) prepare() (created bool, err error) {
	sc, c := &s.sc, &s.c
	if err := sc.absolute(c, s.live); err != nil {
		return false, err
	}
	s.pristine = filepath.Join(sc.Pristine, sc.Catalog)
	s.snap = &evitaserver.Snapshot{}
	heaps := map[string]int64{"writer": sc.ServerHeap}
	if s.live {
		if st, err := os.Stat(s.pristine); err != nil || !st.IsDir() {
			return false, fmt.Errorf("pristine snapshot %s: no catalog directory %q there", sc.Pristine, sc.Catalog)
		}
		if s.snap, err = snapshotSettings(sc, "writer", "reader"); err != nil {
			return false, err
		}
		heaps = map[string]int64{"writer": sc.ServerHeap, "reader": sc.ReaderHeap}
	} else {
		if _, err := c.replayPlan(); err != nil { // refused before the writer starts
			return false, err
		}
		if err := replayHeap(sc, c.Replay.Header()); err != nil {
			return false, err
		}
	}
	if sc.HeapNote != "" {
		c.warnf("note: %s\n", sc.HeapNote)
	}
	if sc.Embedded {
		if s.live {
			return false, ErrEmbeddedNeedsReplay
		}
		id, err := sc.Server.Identify()
		if err != nil {
			return false, err
		}
		if sc.embeddedClasses, err = embedded.Build(sc.Server, id, func(msg string) { c.warnf("%s\n", msg) }); err != nil {
			return false, err
		}
	}
	return prepareWork(sc.WorkDir, heaps)
}

// boot starts both JVMs at once (each takes seconds to boot; nothing is measured yet).
// A JVM that dies starting ends the other's start too; the caller discards whichever
// started, however the other fared.
func (s *spawn) boot() (startedServer, error) {
	writerUp := make(chan startedServer, 1)
	go func() {
		w, ew, err := s.sc.start(s.ctx, s.stop, "writer", s.sc.ServerHeap, s.sc.Compress, nil, s.c)
		if err != nil {
			s.stop(nil)
		}
		writerUp <- startedServer{w, ew, err}
	}()
	var rerr error
	if s.live {
		readerCompress := s.snap.StorageCompress // the snapshot opens only with its own setting
		s.reader, _, rerr = s.sc.start(s.ctx, s.stop, "reader", s.sc.ReaderHeap, readerCompress,
			map[string]string{s.sc.Catalog: s.pristine}, s.c)
		if rerr != nil {
			s.stop(nil) // a writer still booting gives up
		}
	}
	return <-writerUp, rerr
}

// booted names the JVM that failed first, if one did; otherwise the writer is ready.
func (s *spawn) booted(w startedServer, rerr error) error {
	s.startFailed = w.err != nil && !errors.Is(w.err, context.Canceled) || rerr != nil && !errors.Is(rerr, context.Canceled)
	if w.err != nil && (rerr == nil || errors.Is(rerr, context.Canceled)) {
		return withCause(s.ctx, w.err, &s.fault) // the writer failed first: the reader was only stopped
	}
	if rerr != nil {
		return rerr
	}
	s.writer, s.ew = w.s, w.ew
	return nil
}

// connectReader makes the reader the load's source once its catalog is active.
func (s *spawn) connectReader() (*evita.Client, error) {
	src, err := evita.Dial(s.ctx, s.reader.Addr, evita.Options{})
	if err != nil {
		return nil, withCause(s.ctx, err, &s.fault)
	}
	// the reader activates the stored catalog in the background: wait for it, as the
	// Java harness does, with a deadline that grows with the snapshot
	wait := 2*time.Minute + time.Duration(s.size>>30)*time.Minute
	if _, err := src.WaitSettled(s.ctx, s.sc.Catalog, wait, func(state string, waited time.Duration) {
		s.c.warnf("reader: catalog %s is %s after %s\n", s.sc.Catalog, state, waited.Round(time.Second))
	}); err != nil {
		err = withCause(s.ctx, fmt.Errorf("reader server: %w", err), &s.fault)
		src.Close()
		return nil, err
	}
	s.c.Source, s.c.SourceCatalog = src, s.sc.Catalog
	return src, nil
}

// measureLoadWindow wraps the load's window (and the profiler's, if any) to sample the
// variance factors and the canary at its ends, inside the profiler's window.
func (s *spawn) measureLoadWindow() {
	var speed *canary.Canary // the machine's speed during the load
	var f0 factorSample
	begun := false
	profWindow := s.c.Window
	canary.Prepare() // its memory made now, not inside the window it measures
	s.c.Window = func(phase string, begin bool) error {
		var err error
		if begin && profWindow != nil {
			err = profWindow(phase, begin)
		}
		if phase == runfmt.PhaseLoad && begin {
			f0, begun = sampleFactors(s.writer, s.reader, s.ew), true
			speed = canary.Start()
		} else if phase == runfmt.PhaseLoad && begun {
			fig := speed.Stop()
			s.speed = speed.Samples()
			f1 := sampleFactors(s.writer, s.reader, s.ew)
			s.loadWindow = [2]time.Duration{f0.uptime, f1.uptime + f1.cost}
			if f0.werr == nil && f1.werr == nil { // the writer's CPU from the same /proc reads as its factors
				v := (f1.writer.Total() - f0.writer.Total()).Nanoseconds()
				s.loadCPU = &v
			}
			s.factors = factorsBetween(f0, f1)
			if fig.Samples > 0 {
				s.factors.Canary = &runfmt.Canary{Samples: fig.Samples, ALUNs: fig.ALUNs, L3Ns: fig.L3Ns, DRAMNs: fig.DRAMNs}
			}
		}
		if !begin && profWindow != nil {
			err = profWindow(phase, begin)
		}
		return err
	}
}

// connectWriter makes the writer server the load's target.
func (s *spawn) connectWriter() (*evita.Client, error) {
	// the writer is watched: a slow call to a live server is not a failure, so its
	// calls may take long; a dead or GC-bound server ends them through the watch
	dst, err := evita.Dial(s.ctx, s.writer.Addr, evita.Options{CallTimeout: 30 * time.Minute})
	if err != nil {
		return nil, withCause(s.ctx, err, &s.fault)
	}
	s.c.Target = dst
	return dst, nil
}

// warmUp runs the warm-up loads before the measured load's window and clocks; the
// writer's GC is then counted from their end.
func (s *spawn) warmUp() error {
	if s.sc.WarmUp <= 0 {
		return nil
	}
	loads, err := warmUp(s.ctx, s.c, s.sc.WarmUp, s.sc.WorkDir, func() (evitaserver.JIT, error) { return evitaserver.ReadJIT(s.writer.Pid()) })
	if err != nil {
		return withCause(s.ctx, err, &s.fault)
	}
	s.c.Manifest.WarmUp, s.warmEnd = loads, s.writer.Uptime()
	return nil
}

// recordConditions puts what Spawn pinned (heaps, storage, JVM options, builds, the
// snapshot's checksum) into the manifest the load starts from.
func (s *spawn) recordConditions() {
	sc, m := s.sc, &s.c.Manifest
	m.Conditions.WarmUpLoads = sc.WarmUp
	// a 2026.1 build takes only the catalog written for its line (Config.manifest); a
	// 2026.2 build takes it too when the caller asks (a comparison across the lines)
	s.c.targetLine = s.writer.Identity.Line
	if s.c.Duet != nil {
		s.c.Duet.pinned(s.writer.Pid())
	}
	sh, rh := sc.ServerHeap, sc.ReaderHeap
	no, compress := false, sc.Compress
	m.Server.MaxHeapBytes = &sh // pinned by us: known
	m.Conditions.StorageCompress, m.Conditions.CacheEnabled, m.Conditions.TrafficRecording = &compress, &no, &no
	m.Conditions.WriterJVMOptions = slices.Clone(sc.WriterJVMOptions)
	m.Server.Build, m.Server.JVM = s.writer.Record()
	s.readerDown = make(chan struct{})
	if s.live {
		m.Reader.MaxHeapBytes = &rh
		m.Reader.Build, m.Reader.JVM = s.reader.Record()
		m.Dataset.SnapshotSHA256 = s.before
	} else {
		close(s.readerDown)        // there is none
		m.Reader = runfmt.Reader{} // and no reader heap, whatever the caller knew
	}
}

// finish is the run's Config.finalize: it names a server's fault as the outcome, ends
// both servers, records the peaks, the profile and the writer's GC, and proves the
// snapshot unchanged.
func (s *spawn) finish(dir string, m *runfmt.Manifest, runErr error) error {
	var err error
	m.Server.LoadCPUNs, m.Factors = s.loadCPU, s.factors
	if werr := runfmt.WriteCanary(dir, s.speed); werr != nil {
		s.c.warnf("warning: %s: %v\n", runfmt.CanaryFile, werr) // a figure for a later look, not the run's
	}
	// did a server fail? give the watch its moment (see withCause): after an error, and
	// after a goLive that failed or a load left unverified (an embedded writer survives
	// its OutOfMemoryError and answers with it; only its log says the JVM ran out)
	if runErr != nil || m.GoLive.Status == runfmt.GoLiveFailed || m.Verification.Status == runfmt.Unverified {
		select {
		case <-s.ctx.Done():
		case <-time.After(faultGrace):
		}
	}
	if errors.As(context.Cause(s.ctx), &s.fault) {
		// the run ended because a server failed: that is its outcome, named first
		m.Outcome = runfmt.Outcome{Status: runfmt.OutcomeAborted, Detail: s.fault.Error()}
		err = s.fault
	}
	s.stop(nil) // the run is over: a server stopping now is no fault
	// both servers have served their purpose and hold nothing to keep (a disposable
	// copy, a catalog loaded only to be measured): they are ended at once, not shut
	// down gracefully (evitaDB spends 4 s closing its APIs). Their GC logs are
	// complete: the JVM flushes every log line as it writes it; the profile windows
	// are already closed.
	if s.live {
		go func() { s.reader.Kill(); close(s.readerDown) }()
	}
	if kerr := s.endWriter(dir, m); s.sc.KeepWriterStorage != "" { // joined only when kept, as a fault stays itself
		err = errors.Join(err, kerr)
	}
	<-s.readerDown // the reader's copy is not the snapshot, but nothing may read while it writes
	if !s.live {
		return err
	}
	s.proved = true
	if cerr := unchanged(s.pristine, s.before); cerr != nil {
		// what was read is not the snapshot the run names: nothing it measured stands
		m.Outcome = runfmt.Outcome{Status: runfmt.OutcomeFailed, Detail: cerr.Error()}
		err = errors.Join(cerr, err)
	}
	return err
}

// endWriter reads the peaks before the writer ends (what the machine had to hold),
// keeps its storage if asked, kills it, then converts its profile and reads its GC log.
func (s *spawn) endWriter(dir string, m *runfmt.Manifest) error {
	var err error
	if rss, rerr := evitaserver.PeakRSS(s.writer.Pid()); rerr == nil {
		m.Server.PeakRSSBytes = &rss
	}
	if rss, rerr := evitaserver.OwnPeakRSS(); rerr == nil {
		m.Loader.PeakRSSBytes = &rss
	}
	if s.sc.KeepWriterStorage != "" {
		err = s.sc.keepStorage(s.writer, s.ew)
	}
	s.writer.Kill()
	if s.sc.Profiler != nil { // converted now, with no server left to compete with
		m.WriterProfile = s.sc.Profiler.Finish(dir)
		if e := m.WriterProfile.Error; e != "" {
			s.c.warnf("warning: writer profile: %s\n", e)
		}
	}
	if gc, gerr := s.writer.GCSince(s.warmEnd); gerr == nil { // after a warm-up: the measured part alone
		m.WriterGC = gc.Record(gc.UptimeNs - s.warmEnd.Nanoseconds())
	}
	if m.Factors != nil && s.loadWindow[1] > 0 { // the pauses inside the load window
		if gc, gerr := s.writer.GCBetween(s.loadWindow[0], s.loadWindow[1]); gerr == nil {
			n, ns := gc.Pauses(), gc.PauseNs
			m.Factors.GCPauses, m.Factors.GCPauseNs = &n, &ns
		}
	}
	return err
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
