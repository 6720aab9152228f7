package evitaserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/warmstat/warmstat/base/cachedir"
	"github.com/warmstat/warmstat/runfmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// MainClass is the evitaDB server's entry point.
const MainClass = "io.evitadb.server.EvitaServer"

// Config is one server to run.
type Config struct {
	Java      string // java binary (default: $JAVA_HOME/bin/java, else java on PATH)
	Server    Source // the build to run and how to launch it
	DataDir   string // storage, export and certificates; prepared by PrepareDataDir
	LogDir    string // server.log and gc.log (default DataDir/../<base>-logs)
	HeapBytes int64  // -Xms = -Xmx
	Compress  bool   // storage.compress
	Port      int    // gRPC port on 127.0.0.1; 0 picks a free one
	// Ready is how long the server may take to answer (default 3 minutes).
	Ready time.Duration
	// Probe decides readiness by a real gRPC call (the evita package's ServerStatus);
	// it is given the address and returns nil once the server answers.
	Probe func(ctx context.Context, addr string) error
	// Extra server arguments (key=value), after warmstat's own.
	Extra []string
	// JVMOptions are extra JVM options, after warmstat's own (a profiler's agent);
	// they are recorded with the JVM's options.
	JVMOptions []string
	// WaitForMemory is how long Start may wait for other warmstat JVMs on this machine to
	// release memory before it refuses (0: refuse at once).
	WaitForMemory time.Duration
	// Catalogs are copied into the fresh storage before the JVM starts: catalog name ->
	// directory of a stopped server's catalog (a pristine snapshot, only read).
	Catalogs map[string]string
	// REST enables evitaDB's REST API on the gRPC port (tests read catalogs back
	// through it). Off for measurements: the server then builds and rebuilds an
	// OpenAPI model of every catalog schema, work a production writer is not measured
	// with.
	REST bool
	// Main, if set, is launched instead of the server's main class, with the build's
	// jars and AddClasspath on the classpath and the same arguments (warmstat's
	// embedded writer). Probe then decides readiness however Main announces it.
	Main         string
	AddClasspath []string
	// ExtraFiles are inherited by the JVM as file descriptors 3, 4, ... (the embedded
	// writer's pipes); Start closes its copies once the JVM has them.
	ExtraFiles []*os.File
	// NoClassArchive boots the JVM without a class-data archive (see ClassArchiveDir);
	// by default Start maps the build's archive, made on the first start of that build.
	NoClassArchive bool
	// Boot is how the class-data archive of a launch with its own Main is made: it
	// boots that launch with the given config and returns how to stop it gracefully
	// (the embedded writer sets it; without it such a launch boots without an archive).
	Boot func(ctx context.Context, c Config) (stop func() error, err error)
	// Note receives what Start does beside starting the JVM (making a class-data
	// archive, or booting without one and why); nil drops it.
	Note func(string)
	// CPUs, if set, is the CPU set the JVM runs on from its first instruction (a
	// duet's writer): it is told its CPU count (-XX:ActiveProcessorCount) and keeps
	// G1, the collector it has on the whole machine (on one CPU the JVM's ergonomics
	// would pick the serial collector, another write path's GC than production's).
	CPUs    []int
	archive string // the class-data archive mapped, set by Start
}

// Server is a running evitaDB JVM that this process started.
type Server struct {
	Config
	Addr  string
	GCLog string
	Log   string
	// Identity is what the server's jars say about it (version, build commit, checksums).
	Identity Identity
	cmd      *exec.Cmd
	done     chan struct{}
	exitErr  error
	release  func() // gives the memory reservation back
	Started  time.Time
}

// jvmOptions are the JVM's options (everything before the launch part).
func (c Config) jvmOptions(gcLog string) []string {
	heap := strconv.FormatInt(c.HeapBytes>>20, 10) + "m"
	opts := []string{"-Xms" + heap, "-Xmx" + heap,
		"-Xlog:gc*:file=" + gcLog + ":time,uptime,level,tags:filecount=5,filesize=100M",
		"-XX:+HeapDumpOnOutOfMemoryError", "-XX:HeapDumpPath=" + filepath.Dir(gcLog),
		// the JVM's temporary files (evitaDB's native brotli library unpacks itself there on
		// every boot) go into its own data directory, which is removed with it, never into
		// the machine's temporary directory
		"-Djava.io.tmpdir=" + c.tmpDir(),
		// the JVM's identity and its ergonomic flags (chosen GC) go into the server log
		"-XshowSettings:properties", "-XX:+PrintCommandLineFlags"}
	for _, p := range []string{"jdk.internal.misc", "java.lang", "java.lang.invoke", "java.math", "java.util"} {
		opts = append(opts, "--add-opens", "java.base/"+p+"=ALL-UNNAMED")
	}
	if c.archive != "" {
		opts = append(opts, "-XX:SharedArchiveFile="+c.archive)
	}
	if len(c.CPUs) > 0 {
		opts = append(opts, "-XX:ActiveProcessorCount="+strconv.Itoa(len(c.CPUs)))
		if !slices.ContainsFunc(c.JVMOptions, func(o string) bool { return strings.HasPrefix(o, "-XX:+Use") && strings.HasSuffix(o, "GC") }) {
			opts = append(opts, "-XX:+UseG1GC")
		}
	}
	return append(opts, c.JVMOptions...)
}

// tmpDir is the JVM's temporary directory, inside its data directory.
func (c Config) tmpDir() string { return filepath.Join(c.DataDir, "tmp") }

// ClassArchive is the class-data archive the JVM was started with ("" if none).
func (s *Server) ClassArchive() string { return s.archive }

// Args is the JVM command line for c (without the java binary).
func (c Config) Args(port int, gcLog string) []string {
	args := append(c.jvmOptions(gcLog), c.Server.launch(c.Main, c.AddClasspath)...)
	args = append(args,
		"storage.storageDirectory="+filepath.Join(c.DataDir, "storage"),
		"export.fileSystem.directory="+filepath.Join(c.DataDir, "export"),
		"storage.compress="+strconv.FormatBool(c.Compress),
		"server.closeSessionsAfterSecondsOfInactivity=0", // no session reaper during a long load
		"server.trafficRecording.enabled=false",
		"cache.enabled=false",
		"api.endpointDefaults.host=127.0.0.1:"+strconv.Itoa(port), // loopback only
		"api.endpointDefaults.tlsMode=FORCE_NO_TLS",
		"api.endpoints.graphQL.enabled=false", "api.endpoints.rest.enabled="+strconv.FormatBool(c.REST),
		"api.endpoints.lab.enabled=false", "api.endpoints.observability.enabled=false",
		"api.maxEntitySizeInBytes=64MB")
	if c.REST {
		// REST answers a test's reads of whole catalogs; the defaults (2 s per request,
		// 5 s per query) refuse a 500-entity page on a busy 2-core machine with HTTP 408
		// (seen in CI). No benchmark server enables REST.
		args = append(args, "api.requestTimeoutInMillis=300000", "server.queryTimeoutInMilliseconds=300000")
	}
	return append(args, c.Extra...)
}

// freePort is FreePort; a test replaces it to hand Start a port already taken.
var freePort = FreePort

// FreePort finds a free TCP port on 127.0.0.1.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start checks the server build, memory and the data directory, starts the JVM and
// waits until Probe succeeds. On any failure the JVM is stopped and the error carries
// the last lines of its log.
func Start(ctx context.Context, c Config) (s *Server, err error) {
	if c.Server.Kind == "" || c.DataDir == "" || c.HeapBytes <= 0 || c.Probe == nil {
		return nil, errors.New("evitaserver: server, data directory, heap and probe are required")
	}
	// the JVM runs in its data directory: every path it is given must be absolute
	if c.DataDir, err = filepath.Abs(c.DataDir); err != nil {
		return nil, err
	}
	if c.LogDir != "" {
		if c.LogDir, err = filepath.Abs(c.LogDir); err != nil {
			return nil, err
		}
	}
	m, err := ReadMachine()
	if err != nil {
		return nil, err
	}
	if err := CheckHeapsFit(m, map[string]int64{"server": c.HeapBytes}); err != nil {
		return nil, err
	}
	id, err := c.Server.Identify()
	if err != nil {
		return nil, err
	}
	if c.Java == "" {
		c.Java = JavaBinary()
	}
	if c.archive == "" {
		c.archive = classArchive(ctx, c, id)
	}
	for attempt := 1; ; attempt++ {
		s, err = start(ctx, c, m, id)
		if !errors.Is(err, errPortRace) || attempt == portAttempts {
			return s, err
		}
	}
}

// errPortRace: the port FreePort found free was taken by another process before the
// JVM bound it (another warmstat, another test package starting its own server): the
// JVM could not bind it, or another server answered on it. Start then tries another.
var errPortRace = errors.New("evitaserver: the port was taken before the server bound it")

// portAttempts bounds Start's tries with a fresh port.
const portAttempts = 3

// start is one launch of the JVM for c: its memory reserved, its data directory
// prepared, started and probed until ready.
func start(ctx context.Context, c Config, m Machine, id Identity) (s *Server, err error) {
	release, err := reserveMemory(ctx, m, c.HeapBytes, c.WaitForMemory)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			release()
		}
	}()
	if err := PrepareDataDir(c.DataDir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.tmpDir(), 0o755); err != nil {
		return nil, err
	}
	for name, from := range c.Catalogs {
		if err := CopyTree(from, filepath.Join(c.DataDir, "storage", name)); err != nil {
			return nil, fmt.Errorf("evitaserver: copying catalog %s: %w", name, err)
		}
	}
	if c.LogDir == "" {
		c.LogDir = c.DataDir + "-logs"
	}
	if err := os.MkdirAll(c.LogDir, 0o755); err != nil {
		return nil, err
	}
	port := c.Port
	if port == 0 {
		if port, err = freePort(); err != nil {
			return nil, err
		}
	} else if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err != nil {
		return nil, fmt.Errorf("evitaserver: port %d is taken: %v", port, err)
	} else {
		l.Close()
	}
	if c.Ready == 0 {
		c.Ready = 3 * time.Minute
	}
	s = &Server{Config: c, Identity: id, Addr: "127.0.0.1:" + strconv.Itoa(port), GCLog: filepath.Join(c.LogDir, "gc.log"),
		Log: filepath.Join(c.LogDir, "server.log"), done: make(chan struct{}), release: release}
	logf, err := os.Create(s.Log)
	if err != nil {
		return nil, err
	}
	s.cmd = exec.Command(c.Java, c.Args(port, s.GCLog)...)
	s.cmd.Dir = c.DataDir // the server writes its certificates relative to its working directory
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.ExtraFiles = c.ExtraFiles
	// its own process group (one signal reaches the whole JVM), and killed by the
	// kernel if warmstat dies first: no orphan JVMs
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if len(c.CPUs) > 0 {
		err = startPinned(s.cmd, c.CPUs, s.done)
	} else {
		err = s.cmd.Start()
	}
	for _, f := range c.ExtraFiles {
		f.Close() // the JVM's ends: ours would keep its pipes open after it dies
	}
	if err != nil {
		logf.Close()
		return nil, err
	}
	s.Started = time.Now()
	running.add(s)
	go func() {
		s.exitErr = s.cmd.Wait()
		logf.Close()
		release()
		running.remove(s)
		close(s.done)
	}()
	if err := s.waitReady(ctx); err != nil {
		s.Stop(10 * time.Second)
		if c.Port == 0 && len(c.ExtraFiles) == 0 && strings.Contains(s.Tail(200), "Address already in use") {
			return nil, fmt.Errorf("%w (%d): %v", errPortRace, port, err)
		}
		return nil, err
	}
	// ready, but is it ours that answered? Another process may have bound the port first
	if mine, known := listensOn(s.Pid(), port); c.Port == 0 && len(c.ExtraFiles) == 0 && known && !mine {
		s.Stop(10 * time.Second)
		return nil, fmt.Errorf("%w (%d): another process answers on it", errPortRace, port)
	}
	return s, nil
}

func (s *Server) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(s.Ready)
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := s.Probe(pctx, s.Addr)
		cancel()
		if err == nil {
			return nil
		}
		if why := s.mainDied(); why != "" { // the JVM may stay up with nothing listening
			return fmt.Errorf("%w: %s (its log: %s)", ErrStartFailed, why, s.Log)
		}
		select {
		case <-s.done:
			return fmt.Errorf("evitaserver: the server exited before it became ready (%v); its log %s ends:\n%s", s.exitErr, s.Log, s.Tail(20))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("evitaserver: not ready within %s (last probe: %v); its log %s ends:\n%s", s.Ready, err, s.Log, s.Tail(20))
		}
	}
}

// ErrStartFailed: the JVM's main thread died starting the server; the error names the
// exception's root cause on one line.
var ErrStartFailed = errors.New("evitaserver: the server failed to start")

// mainDied is the root cause of an exception that ended the JVM's main thread while
// it started ("" when there is none in the log's last lines): a missing class of an
// incomplete classpath, a configuration the server refuses.
func (s *Server) mainDied() string {
	lines := strings.Split(s.Tail(300), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, `Exception in thread "main" `) {
			continue
		}
		why := strings.TrimPrefix(l, `Exception in thread "main" `)
		for _, c := range lines[i+1:] {
			if cause, ok := strings.CutPrefix(strings.TrimSpace(c), "Caused by: "); ok {
				why = cause
			}
		}
		return why
	}
	return ""
}

// Running reports whether the JVM is still alive.
func (s *Server) Running() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// Pid is the JVM's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Stop asks the JVM to shut down (SIGTERM to its process group), and kills it after
// grace. It returns once the process is gone. A heap dump the JVM is writing is let
// finish first (AwaitHeapDump): a server that ran out of memory is stopped by whoever
// started it, often before its watch has done with it.
func (s *Server) Stop(grace time.Duration) error {
	if !s.Running() {
		return nil
	}
	s.AwaitHeapDump()
	pg := -s.cmd.Process.Pid
	_ = syscall.Kill(pg, syscall.SIGTERM)
	select {
	case <-s.done:
		return nil
	case <-time.After(grace):
	}
	_ = syscall.Kill(pg, syscall.SIGKILL)
	<-s.done
	return fmt.Errorf("evitaserver: %s did not stop within %s and was killed", s.Addr, grace)
}

// Kill ends the JVM at once (tests use it to simulate a crash).
func (s *Server) Kill() {
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
}

// ansi matches terminal colour and cursor sequences the server writes into its log.
var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// Tail is the last n lines of the server's log, colour codes removed.
func (s *Server) Tail(n int) string {
	f, err := os.Open(s.Log)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, ansi.ReplaceAllString(sc.Text(), "")) // for a manifest, not a terminal
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// GC reads the server's GC log (with rotations, oldest first).
func (s *Server) GC() (GCSummary, error) { return s.GCSince(0) }

// Uptime is how long the JVM has run (from its process start, a few milliseconds
// before the JVM's own clock starts): the uptime its GC log shows at this moment.
func (s *Server) Uptime() time.Duration { return time.Since(s.Started) }

// GCSince reads the server's GC log counting only the pauses that ended at or after
// the JVM uptime from (0: all of them).
func (s *Server) GCSince(from time.Duration) (GCSummary, error) { return s.GCBetween(from, 0) }

// GCBetween is GCSince counting only the pauses that ended at or before the uptime to
// too (0: no end): a window's pauses. Uptimes are warmstat's clock since the JVM was
// started, which runs a few ms ahead of the JVM's own.
func (s *Server) GCBetween(from, to time.Duration) (GCSummary, error) {
	var files []string
	for i := 4; i >= 0; i-- {
		if p := s.GCLog + "." + strconv.Itoa(i); fileExists(p) {
			files = append(files, p)
		}
	}
	return ParseGCFilesBetween(from.Nanoseconds(), to.Nanoseconds(), append(files, s.GCLog)...)
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// FetchDir is where `make evita` puts server versions: evita/ in warmstat's cache
// (internal/cachedir, the rule scripts/fetch-evita.sh follows too).
func FetchDir() string {
	return filepath.Join(cachedir.Root(), "evita")
}

// JVM describes the Java VM that ran a server.
type JVM struct {
	Java    string   // the java binary, symlinks resolved
	Vendor  string   // java.vendor
	Version string   // java.vm.version
	GC      string   // the collector the JVM chose or was told to use, e.g. G1
	Options []string // the options warmstat passed
	Flags   []string // the JVM's final flags (-XX:+PrintCommandLineFlags), ergonomics included
	// EnvOptions are options the JVM took from its environment, as the JVM itself says
	// ("Picked up JDK_JAVA_OPTIONS: ..."), each "VARIABLE=value": they change what a run
	// measures as much as options warmstat passes, and no flag of warmstat's shows them.
	EnvOptions []string
	// ClassArchive is the class-data archive the JVM mapped ("" if none); CDSWarning is
	// the JVM's own word when it was given one and booted without it.
	ClassArchive, CDSWarning string
}

// JavaBinary is the java warmstat starts: $JAVA_HOME/bin/java, else java on PATH.
func JavaBinary() string {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		return filepath.Join(home, "bin", "java")
	}
	return "java"
}

// JVM reads the running (or stopped) server's JVM identity from its log, where
// -XshowSettings:properties and -XX:+PrintCommandLineFlags print it at start.
func (s *Server) JVM() (JVM, error) {
	j := JVM{Java: resolveJava(s.Java), Options: s.jvmOptions(s.GCLog)}
	f, err := os.Open(s.Log)
	if err != nil {
		return j, err
	}
	defer f.Close()
	if err := j.read(f, s.Log); err != nil {
		return j, err
	}
	if j.CDSWarning == "" {
		j.ClassArchive = s.archive
	}
	return j, nil
}

// LocalJVM is the identity of this machine's java (JavaBinary) run with options:
// its vendor, version and the collector it chooses, as a server started with them
// records its own.
func LocalJVM(options ...string) (JVM, error) {
	java := JavaBinary()
	out, err := exec.Command(java, append(append([]string{}, options...), "-XshowSettings:properties", "-XX:+PrintCommandLineFlags", "-version")...).CombinedOutput()
	if err != nil {
		return JVM{}, fmt.Errorf("evitaserver: %s -version: %v: %s", java, err, strings.TrimSpace(string(out)))
	}
	j := JVM{Java: resolveJava(java), Options: options}
	return j, j.read(strings.NewReader(string(out)), java+" -XshowSettings:properties")
}

// JVMMismatchError: a writer's GC log says it ran another JVM version than this
// machine's java, so this java cannot stand for it.
type JVMMismatchError struct {
	At, Ran, Java, Version string // where the log says so, its version; this java and its version
}

func (e *JVMMismatchError) Error() string {
	return fmt.Sprintf("%s: field Version: the writer ran JVM %s, this machine's java (%s) is %s", e.At, e.Ran, e.Java, e.Version)
}

// ThisJVMs records this machine's java (LocalJVM) as the writer's and the reader's JVM
// of a run measured elsewhere (an imported harness run). The writer's GC log, when
// given, names the collector the server actually ran and the JVM's version, which must
// be this java's (a *JVMMismatchError).
func ThisJVMs(gc *GCSummary) (writer, reader *runfmt.JVM, err error) {
	j, err := LocalJVM()
	if err != nil {
		return nil, nil, err
	}
	// options and final flags of the harness's JVMs are not known; what this java takes
	// from this environment is part of "this machine's java"
	rec := func() *runfmt.JVM {
		return &runfmt.JVM{Java: j.Java, Vendor: j.Vendor, Version: j.Version, GC: j.GC, EnvOptions: j.EnvOptions}
	}
	writer, reader = rec(), rec()
	if gc != nil {
		if gc.JVMVersion != "" && gc.JVMVersion != j.Version {
			return nil, nil, &JVMMismatchError{At: gc.JVMVersionAt, Ran: gc.JVMVersion, Java: j.Java, Version: j.Version}
		}
		if gc.Collector != "" {
			writer.GC = gc.Collector
		}
	}
	return writer, reader, nil
}

func resolveJava(java string) string {
	if p, err := exec.LookPath(java); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
	}
	return java
}

// read takes the JVM's identity from what -XshowSettings:properties and
// -XX:+PrintCommandLineFlags print (in a server's log, or -version's output).
func (j *JVM) read(r io.Reader, name string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 0; sc.Scan() && n < 2000; n++ {
		line := strings.TrimSpace(sc.Text())
		if strings.Contains(line, "][cds") && (strings.Contains(line, "[warning]") || strings.Contains(line, "[error]")) && j.CDSWarning == "" {
			j.CDSWarning = line // e.g. an archive of another JVM build: the JVM boots without it
		}
		if e, ok := pickedUp(line); ok && !slices.Contains(j.EnvOptions, e) {
			j.EnvOptions = append(j.EnvOptions, e)
		}
		if k, v, ok := strings.Cut(line, " = "); ok {
			switch k {
			case "java.vendor":
				j.Vendor = v
			case "java.vm.version":
				j.Version = v
			}
		}
		if strings.HasPrefix(line, "-XX:") && strings.Contains(line, "-XX:MaxHeapSize=") {
			j.Flags = strings.Fields(line)
			for _, f := range j.Flags {
				if gc, ok := strings.CutPrefix(f, "-XX:+Use"); ok && strings.HasSuffix(gc, "GC") {
					j.GC = strings.TrimSuffix(gc, "GC")
				}
			}
		}
	}
	if j.Vendor == "" || j.Version == "" || j.GC == "" {
		return fmt.Errorf("evitaserver: %s does not name the JVM (vendor %q, version %q, GC %q)", name, j.Vendor, j.Version, j.GC)
	}
	return sc.Err()
}

// JavaOptionsVariables are the environment variables a JVM (or its java launcher)
// takes options from.
var JavaOptionsVariables = []string{"JDK_JAVA_OPTIONS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS"}

// pickedUp reads the line a JVM prints when it takes options from the environment
// ("NOTE: Picked up JDK_JAVA_OPTIONS: -Xss2m", "Picked up JAVA_TOOL_OPTIONS: ...") as
// "JDK_JAVA_OPTIONS=-Xss2m".
func pickedUp(line string) (string, bool) {
	_, rest, ok := strings.Cut(line, "Picked up ")
	if !ok {
		return "", false
	}
	v, val, ok := strings.Cut(rest, ": ")
	if !ok || !slices.Contains(JavaOptionsVariables, v) {
		return "", false
	}
	return v + "=" + strings.TrimSpace(val), true
}

// running are the JVMs this process started and that have not exited.
var running = &registry{servers: map[*Server]bool{}}

type registry struct {
	mu      sync.Mutex
	servers map[*Server]bool
}

func (r *registry) add(s *Server)    { r.mu.Lock(); r.servers[s] = true; r.mu.Unlock() }
func (r *registry) remove(s *Server) { r.mu.Lock(); delete(r.servers, s); r.mu.Unlock() }

// KillAll kills every JVM this process started that still runs, at once, waits (up to
// 10 s) until they are gone, and empties their data directories (copies warmstat made,
// carrying its marker; a production catalog's copy is gigabytes); it returns how many
// it killed. For a process that must end now (a second Ctrl-C, SIGTERM): no JVM, and no
// copy of a catalog, outlives warmstat.
func KillAll() int {
	running.mu.Lock()
	var all []*Server
	for s := range running.servers {
		all = append(all, s)
	}
	running.mu.Unlock()
	for _, s := range all {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
	deadline := time.After(10 * time.Second)
	for _, s := range all {
		select {
		case <-s.done:
			emptyDataDir(s.DataDir)
		case <-deadline:
		}
	}
	return len(all)
}

// emptyDataDir removes what a stopped JVM's data directory holds, the marker aside:
// only a directory carrying the marker (one warmstat made) is touched.
func emptyDataDir(dir string) {
	if _, err := os.Lstat(filepath.Join(dir, OwnerMarker)); err != nil {
		return
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != OwnerMarker {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// CPU is the JVM's CPU time so far (user + system of all its threads, from
// /proc/PID/stat), or an error once it is gone.
func (s *Server) CPU() (time.Duration, error) {
	f, err := readStat(fmt.Sprintf("/proc/%d/stat", s.Pid()))
	if err != nil {
		return 0, fmt.Errorf("evitaserver: CPU of pid %d: %w", s.Pid(), err)
	}
	return ticks(f[11] + f[12]), nil // utime, stime: fields 14 and 15
}

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every Linux that Go
// supports (the kernel's ABI fixes it for user space).
const clockTicks = 100
