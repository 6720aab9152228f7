package evitaserver_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/internal/evitatest"
)

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestStartStopRealServer(t *testing.T) {
	s, c := evitatest.Start(t)
	ctx := context.Background()
	st, err := c.ServerStatus(ctx)
	if err != nil || st.GetVersion() == "" || c.Version != st.GetVersion() {
		t.Fatalf("status %v %v", st, err)
	}
	if !strings.HasPrefix(s.Addr, "127.0.0.1:") {
		t.Fatalf("not on loopback: %s", s.Addr)
	}
	// what the variance factors read: the JVM's JIT counters and its threads by group
	jit, err := evitaserver.ReadJIT(s.Pid())
	if err != nil || jit.Compiles < 100 || jit.CompileTime <= 0 {
		t.Fatalf("JIT counters of a booted server: %+v %v", jit, err)
	}
	p0, err := evitaserver.SampleProc(s.Pid())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ServerStatus(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	p1, err := evitaserver.SampleProc(s.Pid())
	if err != nil {
		t.Fatal(err)
	}
	if d := p1.Since(p0); len(d.CPU) != 4 || d.MinorFaults < 0 || d.VoluntarySwitches < 0 {
		t.Fatalf("a JVM's activity between two samples: %+v", d)
	}
	if d := p1.Since(evitaserver.ProcSample{}); d.CPU[evitaserver.ThreadsJIT] <= 0 || d.CPU[evitaserver.ThreadsGC] <= 0 || d.MinorFaults <= 0 {
		t.Fatalf("a booted JVM's CPU by thread group: %+v (read in %s)", d, p1.ReadCost)
	}
	// the JVM's temporary files are its own: evitaDB's native brotli library unpacks into
	// the data directory's tmp/, not into the machine's temporary directory
	if brotli, _ := filepath.Glob(filepath.Join(s.DataDir, "tmp", "com_aayushatharva_brotli4j_*")); len(brotli) == 0 {
		entries, _ := os.ReadDir(filepath.Join(s.DataDir, "tmp"))
		t.Fatalf("no brotli4j directory in the server's own tmp/ (%v): it went elsewhere", entries)
	}
	pid := s.Pid()
	if err := s.Stop(30 * time.Second); err != nil {
		t.Fatalf("graceful stop: %v", err)
	}
	if alive(pid) || s.Running() {
		t.Fatal("JVM still alive after Stop")
	}
	gc, err := s.GC()
	if err != nil || gc.UptimeNs == 0 {
		t.Fatalf("GC log of the server: %+v %v", gc, err)
	}
	t.Logf("server %s up and down; its GC log: %d young, %d full pauses, %.1f ms paused", st.GetVersion(), gc.Young, gc.Full, float64(gc.PauseNs)/1e6)
}

// A server whose readiness never arrives (here: probed where it does not listen) is
// given up after the deadline, with its last log lines, and killed.
func TestNeverReady(t *testing.T) {
	src := evitatest.Server(t)
	data := filepath.Join(t.TempDir(), "d")
	_, err := evitaserver.Start(context.Background(), evitaserver.Config{Server: src, DataDir: data, HeapBytes: 512 << 20,
		Ready: 8 * time.Second, Probe: func(ctx context.Context, addr string) error { return errors.New("probe refused on purpose") }})
	if err == nil || !strings.Contains(err.Error(), "not ready within 8s") || !strings.Contains(err.Error(), "server.log ends:") {
		t.Fatalf("%v", err)
	}
	if len(evitatest.Processes(data)) > 0 {
		t.Fatal("orphan JVM after a failed start")
	}
}

// A server that dies during startup is reported with its log, not waited for.
func TestServerExitsDuringStartup(t *testing.T) {
	src := evitatest.Server(t)
	start := time.Now()
	_, err := evitaserver.Start(context.Background(), evitaserver.Config{Server: src, DataDir: filepath.Join(t.TempDir(), "d"), HeapBytes: 512 << 20,
		Ready: 2 * time.Minute, Probe: evitatest.Probe, Extra: []string{"storage.storageDirectory=/proc/warmstat-cannot-write-here"}})
	if err == nil {
		t.Fatal("started with an unusable storage directory")
	}
	if time.Since(start) > time.Minute || !strings.Contains(err.Error(), "server.log ends:") {
		t.Fatalf("after %s: %v", time.Since(start), err)
	}
}

func TestPortTaken(t *testing.T) {
	src := evitatest.Server(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	_, err = evitaserver.Start(context.Background(), evitaserver.Config{Server: src, DataDir: filepath.Join(t.TempDir(), "d"), HeapBytes: 512 << 20,
		Port: port, Probe: evitatest.Probe})
	if err == nil || !strings.Contains(err.Error(), "is taken") {
		t.Fatalf("%v", err)
	}
}

// Killing the server while calls are in flight ends them with a typed error, quickly.
func TestServerKilledMidCall(t *testing.T) {
	s, c := evitatest.Start(t)
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		for {
			if _, err := c.ServerStatus(ctx); err != nil {
				done <- err
				return
			}
		}
	}()
	time.Sleep(300 * time.Millisecond)
	killed := time.Now()
	s.Kill()
	select {
	case err := <-done:
		var e *evita.Error
		if !errors.As(err, &e) || !evita.IsUnavailable(err) {
			t.Fatalf("want a typed Unavailable error, got %T %v", err, err)
		}
		t.Logf("in-flight calls failed %s after the kill: %v", time.Since(killed).Round(time.Millisecond), err)
	case <-time.After(20 * time.Second):
		t.Fatal("calls hang after the server was killed")
	}
}

// A server's last log lines go into errors and manifests: without its colour codes.
func TestTailDropsColourCodes(t *testing.T) {
	log := filepath.Join(t.TempDir(), "server.log")
	if err := os.WriteFile(log, []byte("one\n\x1b[31mERROR\x1b[0m boom\n\x1b[1;33mWARN\x1b[m two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := (&evitaserver.Server{Log: log}).Tail(2); got != "ERROR boom\nWARN two" {
		t.Fatalf("tail %q", got)
	}
}

// A server boots on its build's class-data archive, made by the first start of that
// build (a boot of its own): the JVM really maps it (it is in /proc/<pid>/maps), the
// manifest's record names it, and NoClassArchive boots without one.
func TestClassArchive(t *testing.T) {
	evitatest.Exclusive(t) // another package's JVM training an archive would make this one boot without it
	src := evitatest.Server(t)
	ctx := context.Background()
	var notes []string
	start := func(no bool) *evitaserver.Server {
		s, err := evitaserver.Start(ctx, evitaserver.Config{Server: src, DataDir: filepath.Join(t.TempDir(), "d"), HeapBytes: 512 << 20,
			Probe: evitatest.Probe, NoClassArchive: no, Note: func(s string) { notes = append(notes, s) }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Kill)
		return s
	}
	s := start(false)
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", s.Pid()))
	if err != nil || s.ClassArchive() == "" || !strings.Contains(string(maps), s.ClassArchive()) {
		t.Fatalf("the JVM did not map its archive %q (notes %v): %v", s.ClassArchive(), notes, err)
	}
	_, j := s.Record()
	if j == nil || j.ClassArchive != filepath.Base(s.ClassArchive()) || !slices.Contains(j.Options, "-XX:SharedArchiveFile="+s.ClassArchive()) {
		t.Fatalf("recorded JVM %+v", j)
	}
	if st, err := os.Stat(s.ClassArchive()); err != nil || filepath.Dir(s.ClassArchive()) != evitaserver.ClassArchiveDir() || st.Size() < 1<<20 {
		t.Fatalf("archive %s: %v", s.ClassArchive(), err)
	}
	if leftover, _ := filepath.Glob(filepath.Join(evitaserver.ClassArchiveDir(), ".boot-*")); len(leftover) > 0 {
		t.Fatalf("the archive's boot left %v", leftover)
	}
	n := start(true)
	if _, j := n.Record(); n.ClassArchive() != "" || j == nil || j.ClassArchive != "" || strings.Contains(strings.Join(j.Options, " "), "SharedArchiveFile") {
		t.Fatalf("NoClassArchive: %q %+v", n.ClassArchive(), j)
	}
	t.Logf("notes: %v", notes)
}

// A port found free and taken by another process before the JVM binds it (another
// package's test, another warmstat starting its server): Start sees that the server
// answering is not its JVM, stops it, and starts again on another port. The first
// port handed to Start is held by a listener of this test that accepts connections,
// so that a probe which only connects succeeds at once, as another server would answer.
func TestPortRaceIsRetried(t *testing.T) {
	src := evitatest.Server(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	go func() {
		for {
			c, err := taken.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := taken.Addr().(*net.TCPAddr).Port
	handed := 0
	defer evitaserver.SetFreePort(func() (int, error) {
		handed++
		if handed == 1 {
			return port, nil
		}
		return evitaserver.FreePort()
	})()
	connects := func(ctx context.Context, addr string) error {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
		}
		return err
	}
	s, err := evitaserver.Start(context.Background(), evitaserver.Config{Server: src, DataDir: filepath.Join(t.TempDir(), "d"), HeapBytes: 512 << 20,
		Probe: connects})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(30 * time.Second)
	if handed < 2 || s.Addr == taken.Addr().String() { // more than 2 when a busy machine made another start fail too: still retried
		t.Fatalf("ports handed: %d, the server on %s (the taken one %s)", handed, s.Addr, taken.Addr())
	}
	if mine, known := evitaserver.ListensOn(s.Pid(), port); !known || mine {
		t.Fatalf("the taken port: mine %v, known %v", mine, known)
	}
	p, _ := strconv.Atoi(s.Addr[strings.LastIndex(s.Addr, ":")+1:])
	if mine, known := evitaserver.ListensOn(s.Pid(), p); !known || !mine {
		t.Fatalf("the server's own port %d: mine %v, known %v", p, mine, known)
	}
}

// A server whose main thread dies starting, but whose JVM stays up (threads it had
// started), is reported at once on one line with the exception's root cause: here a
// classpath without evitaDB's gRPC layer.
func TestServerMainDiesStarting(t *testing.T) {
	src := evitatest.Server(t)
	noGRPC := evitatest.Without(t, src, "evita_external_api_grpc_shared")
	start := time.Now()
	s, err := evitaserver.Start(context.Background(), evitaserver.Config{Server: noGRPC, DataDir: filepath.Join(t.TempDir(), "d"), HeapBytes: 512 << 20,
		Ready: 2 * time.Minute, Probe: evitatest.Probe, NoClassArchive: true})
	if err == nil {
		s.Kill()
		t.Fatal("started without the gRPC layer")
	}
	t.Logf("after %s: %v", time.Since(start).Round(time.Millisecond), err)
	if !errors.Is(err, evitaserver.ErrStartFailed) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "grpc") || time.Since(start) > time.Minute {
		t.Fatalf("after %s: %v", time.Since(start), err)
	}
}
