package evitaserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// MainClass is the evitaDB server's entry point.
const MainClass = "io.evitadb.server.EvitaServer"

// Config is one server to run.
type Config struct {
	Java      string // java binary (default: java on PATH)
	Classpath string // the server jar and its dependencies (make evita writes classpath.txt)
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
	// Catalogs are copied into the fresh storage before the JVM starts: catalog name ->
	// directory of a stopped server's catalog (a pristine snapshot, only read).
	Catalogs map[string]string
}

// Server is a running evitaDB JVM that this process started.
type Server struct {
	Config
	Addr    string
	GCLog   string
	Log     string
	cmd     *exec.Cmd
	done    chan struct{}
	exitErr error
	Started time.Time
}

// Args is the JVM command line for c (without the java binary).
func (c Config) Args(port int, gcLog string) []string {
	heap := strconv.FormatInt(c.HeapBytes>>20, 10) + "m"
	args := []string{"-Xms" + heap, "-Xmx" + heap,
		"-Xlog:gc*:file=" + gcLog + ":time,uptime,level,tags:filecount=5,filesize=100M",
		"-XX:+HeapDumpOnOutOfMemoryError", "-XX:HeapDumpPath=" + filepath.Dir(gcLog)}
	for _, p := range []string{"jdk.internal.misc", "java.lang", "java.lang.invoke", "java.math", "java.util"} {
		args = append(args, "--add-opens", "java.base/"+p+"=ALL-UNNAMED")
	}
	args = append(args, "-cp", c.Classpath, MainClass,
		"storage.storageDirectory="+filepath.Join(c.DataDir, "storage"),
		"export.fileSystem.directory="+filepath.Join(c.DataDir, "export"),
		"storage.compress="+strconv.FormatBool(c.Compress),
		"server.closeSessionsAfterSecondsOfInactivity=0", // no session reaper during a long load
		"server.trafficRecording.enabled=false",
		"cache.enabled=false",
		"api.endpointDefaults.host=127.0.0.1:"+strconv.Itoa(port), // loopback only
		"api.endpointDefaults.tlsMode=FORCE_NO_TLS",
		"api.endpoints.graphQL.enabled=false", "api.endpoints.rest.enabled=false",
		"api.endpoints.lab.enabled=false", "api.endpoints.observability.enabled=false",
		"api.maxEntitySizeInBytes=64MB")
	return append(args, c.Extra...)
}

// FreePort finds a free TCP port on 127.0.0.1.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start checks memory and the data directory, starts the JVM and waits until Probe
// succeeds. On any failure the JVM is stopped and the error carries the last lines of
// its log.
func Start(ctx context.Context, c Config) (*Server, error) {
	if c.Classpath == "" || c.DataDir == "" || c.HeapBytes <= 0 || c.Probe == nil {
		return nil, errors.New("evitaserver: classpath, data directory, heap and probe are required")
	}
	m, err := ReadMachine()
	if err != nil {
		return nil, err
	}
	if err := CheckHeapsFit(m, map[string]int64{"writer": c.HeapBytes}); err != nil {
		return nil, err
	}
	if err := PrepareDataDir(c.DataDir); err != nil {
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
		if port, err = FreePort(); err != nil {
			return nil, err
		}
	} else if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err != nil {
		return nil, fmt.Errorf("evitaserver: port %d is taken: %v", port, err)
	} else {
		l.Close()
	}
	if c.Java == "" {
		c.Java = "java"
	}
	if c.Ready == 0 {
		c.Ready = 3 * time.Minute
	}
	s := &Server{Config: c, Addr: "127.0.0.1:" + strconv.Itoa(port), GCLog: filepath.Join(c.LogDir, "gc.log"),
		Log: filepath.Join(c.LogDir, "server.log"), done: make(chan struct{})}
	logf, err := os.Create(s.Log)
	if err != nil {
		return nil, err
	}
	s.cmd = exec.Command(c.Java, c.Args(port, s.GCLog)...)
	s.cmd.Dir = c.DataDir // the server writes its certificates relative to its working directory
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	// its own process group (one signal reaches the whole JVM), and killed by the
	// kernel if warmstat dies first: no orphan JVMs
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	s.Started = time.Now()
	go func() {
		s.exitErr = s.cmd.Wait()
		logf.Close()
		close(s.done)
	}()
	if err := s.waitReady(ctx); err != nil {
		s.Stop(10 * time.Second)
		return nil, err
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
		select {
		case <-s.done:
			return fmt.Errorf("evitaserver: the server exited before it became ready (%v); last log lines:\n%s", s.exitErr, s.Tail(20))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("evitaserver: not ready within %s (last probe: %v); last log lines:\n%s", s.Ready, err, s.Tail(20))
		}
	}
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
// grace. It returns once the process is gone.
func (s *Server) Stop(grace time.Duration) error {
	if !s.Running() {
		return nil
	}
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

// Tail returns the last n lines of the server log.
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
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// GC reads the server's GC log (with rotations, oldest first).
func (s *Server) GC() (GCSummary, error) {
	var files []string
	for i := 4; i >= 0; i-- {
		if p := s.GCLog + "." + strconv.Itoa(i); fileExists(p) {
			files = append(files, p)
		}
	}
	return ParseGCFiles(append(files, s.GCLog)...)
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// FetchDir is where `make evita` puts server versions: $WARMSTAT_CACHE/evita, by
// default ~/.cache/warmstat/evita (scripts/fetch-evita.sh uses the same rule).
func FetchDir() string {
	cache := os.Getenv("WARMSTAT_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "warmstat")
	}
	return filepath.Join(cache, "evita")
}

// FetchedClasspath is the classpath `make evita EVITA_VERSION=version` wrote.
func FetchedClasspath(version string) (string, error) {
	p := filepath.Join(FetchDir(), version, "classpath.txt")
	b, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("evitaDB %s is not fetched (%s missing): run make evita EVITA_VERSION=%s", version, p, version)
	}
	return strings.TrimSpace(string(b)), nil
}
