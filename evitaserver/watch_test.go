package evitaserver

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// jvmServer runs GcWorkload as if it were a started server: its GC log is read by
// Watch the same way (only the status probe is a stand-in, since no evitaDB runs).
func jvmServer(t *testing.T, heap string, args ...string) *Server {
	t.Helper()
	return jvmServerWith(t, heap, nil, args...)
}

// jvmServerWith is jvmServer with extra JVM options.
func jvmServerWith(t *testing.T, heap string, jvmOpts []string, args ...string) *Server {
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
	jargs := append([]string{"-Xms" + heap, "-Xmx" + heap, "-XX:+UseG1GC", "-Xlog:gc*:file=" + s.GCLog + ":time,uptime,level,tags",
		"-XX:HeapDumpPath=" + dir}, jvmOpts...) // where Start's servers dump: their log directory
	jargs = append(append(jargs, filepath.Join("..", "testdata", "gcgen", "GcWorkload.java")), args...)
	s.cmd = exec.Command(java, jargs...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // as Start's: Stop signals the group
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

// A JVM that ran out of memory and does not answer its status call (the call hangs, as
// a GC-bound or dying server's does): the watch names the OutOfMemoryError from the log
// while the call still hangs — a caller whose own call failed waits only seconds for
// the verdict — and a stop lets the heap dump finish, so the dump the fault names is
// complete.
func TestWatchNamesOutOfMemoryWhileAStatusCallHangs(t *testing.T) {
	s := jvmServerWith(t, "64m", []string{"-XX:+HeapDumpOnOutOfMemoryError"}, "oom", "600")
	hung := make(chan struct{})
	var answered atomic.Int32
	s.Probe = func(context.Context, string) error { // ignores its deadline, like a call on a wedged transport
		select {
		case <-hung:
		case <-time.After(30 * time.Second): // a watch that waits for it ends, and fails below
		}
		answered.Add(1)
		return nil
	}
	defer close(hung)
	f := s.Watch(context.Background(), WatchOptions{Role: "reader", Every: 500 * time.Millisecond, Advice: "give it a larger heap"})
	if f == nil || !strings.Contains(f.Error(), "the reader server (heap 64m) ran out of memory") {
		t.Fatalf("fault %v", f)
	}
	if answered.Load() != 0 {
		t.Fatal("the verdict waited for a status call")
	}
	if err := s.Stop(time.Minute); err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(s.Log)
	st, err := os.Stat(f.HeapDump)
	if !strings.Contains(string(log), "Heap dump file created") || err != nil || st.Size() == 0 {
		t.Fatalf("the heap dump %q is not complete (%v); the log:\n%s", f.HeapDump, err, log)
	}
	t.Logf("%v (%d bytes)", f, st.Size())
}

// The JVM prints an OutOfMemoryError a moment before it announces its heap dump: a
// stop that read the log in between must still wait for the dump, not kill it.
func TestAwaitHeapDumpWaitsForTheAnnouncement(t *testing.T) {
	dir := t.TempDir()
	s := &Server{Config: Config{LogDir: dir}, Log: filepath.Join(dir, "server.log"), done: make(chan struct{})}
	if err := os.WriteFile(s.Log, []byte("java.lang.OutOfMemoryError: Java heap space\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	appendLine := func(line string) {
		f, err := os.OpenFile(s.Log, os.O_APPEND|os.O_WRONLY, 0)
		if err == nil {
			f.WriteString(line + "\n")
			f.Close()
		}
	}
	go func() {
		time.Sleep(time.Second)
		appendLine("Dumping heap to " + filepath.Join(dir, "java_pid1.hprof") + " ...")
		time.Sleep(time.Second)
		appendLine("Heap dump file created [1234 bytes in 0.001 secs]")
	}()
	begin := time.Now()
	s.AwaitHeapDump()
	if log, _ := os.ReadFile(s.Log); !strings.Contains(string(log), "Heap dump file created") {
		t.Fatalf("returned before the dump was written; the log:\n%s", log)
	}
	if waited := time.Since(begin); waited > 4*time.Second { // the dump ended at 2 s
		t.Fatalf("waited %s, past the dump's end", waited)
	}
	close(s.done)
	begin = time.Now()
	s.AwaitHeapDump() // a JVM that is gone writes nothing more
	if time.Since(begin) > time.Second {
		t.Fatal("waited on an exited JVM")
	}
}
