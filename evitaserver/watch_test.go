package evitaserver

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// jvmServer runs GcWorkload as if it were a started server: its GC log is read by
// Watch the same way (only the status probe is a stand-in, since no evitaDB runs).
func jvmServer(t *testing.T, heap string, args ...string) *Server {
	t.Helper()
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatal("no java on PATH (.ci/run installs a JDK)")
	}
	dir := t.TempDir()
	s := &Server{Config: Config{HeapBytes: 64 << 20, LogDir: dir, Probe: func(context.Context, string) error { return nil }},
		GCLog: filepath.Join(dir, "gc.log"), Log: filepath.Join(dir, "server.log"), done: make(chan struct{})}
	logf, err := os.Create(s.Log)
	if err != nil {
		t.Fatal(err)
	}
	s.cmd = exec.Command(java, append([]string{"-Xms" + heap, "-Xmx" + heap, "-XX:+UseG1GC", "-Xlog:gc*:file=" + s.GCLog + ":time,uptime,level,tags",
		filepath.Join("..", "testdata", "gcgen", "GcWorkload.java")}, args...)...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.exitErr = s.cmd.Wait(); logf.Close(); close(s.done) }()
	t.Cleanup(func() { s.cmd.Process.Kill(); <-s.done })
	return s
}

// A real JVM that is GC-bound (a live set of 70 % of its heap, allocating on) is found
// while it happens, from its growing GC log, and reported with the share of time in
// pauses; a JVM that collects normally is not.
func TestWatchFindsGCBoundJVM(t *testing.T) {
	s := jvmServer(t, "64m", "spiral", "60")
	begin := time.Now()
	f := s.Watch(context.Background(), WatchOptions{Role: "writer", Window: 5 * time.Second, Every: 500 * time.Millisecond,
		Advice: "give it a larger --server-heap"})
	if f == nil || !strings.Contains(f.Reason, "is GC-bound") || !strings.Contains(f.Error(), "the writer server (heap 64m) is GC-bound") ||
		!strings.Contains(f.Error(), "larger --server-heap") {
		t.Fatalf("fault %v", f)
	}
	if s.Running() == false {
		t.Fatal("the JVM ended before it was found GC-bound: the fault came from its exit")
	}
	t.Logf("found after %s: %v", time.Since(begin).Round(100*time.Millisecond), f)

	healthy := jvmServer(t, "256m", "0")
	var warned []string
	f = healthy.Watch(context.Background(), WatchOptions{Role: "writer", Window: 5 * time.Second, Every: 500 * time.Millisecond,
		Warn: func(s string) { warned = append(warned, s) }})
	if f == nil || !strings.Contains(f.Reason, "exited unexpectedly") {
		t.Fatalf("a healthy JVM's end: %v", f)
	}
	if len(warned) > 0 {
		t.Fatalf("a healthy JVM was warned about: %v", warned)
	}
}
