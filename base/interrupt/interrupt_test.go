package interrupt

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a buffer the listening goroutine writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The first Ctrl-C cancels the work's context and says so; the second kills what the
// process started, removes the registered directories, silences the quiet writers but
// for its own line and exits 130.
func TestTwoInterrupts(t *testing.T) {
	codes := make(chan int, 1)
	exit = func(code int) { codes <- code; runtime.Goexit() }
	defer func() { exit = os.Exit; Stopping.Store(false) }()
	tmp := filepath.Join(t.TempDir(), "workload")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	removed := make(chan struct{})
	close(removed) // its owner is gone: no wait
	RemoveOnStop.Store(tmp, removed)
	defer RemoveOnStop.Delete(tmp)

	var errw syncBuffer
	quiet := Quiet{W: &errw}
	kills := 0
	ctx, stop := Listen(context.Background(), quiet, func() string { kills++; return "2 evitaDB JVM(s) killed" })
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the first Ctrl-C did not cancel the context")
	}
	if !strings.Contains(errw.String(), "interrupted: stopping at the next safe point") || Stopping.Load() {
		t.Fatalf("after the first Ctrl-C: stopping %v, %q", Stopping.Load(), errw.String())
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-codes:
		if code != 130 {
			t.Errorf("exit %d after a second Ctrl-C, want 130", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second Ctrl-C did not stop at once")
	}
	if kills != 1 || !Stopping.Load() {
		t.Errorf("kills %d, stopping %v", kills, Stopping.Load())
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the registered directory is left: %v", err)
	}
	quiet.Write([]byte("FAILED: the writer exited"))
	if got := errw.String(); strings.Contains(got, "FAILED") ||
		!strings.HasSuffix(got, "\nwarmstat: stopped at once by a second Ctrl-C: 2 evitaDB JVM(s) killed; what was being written is incomplete\n") {
		t.Errorf("stop's output: %q", got)
	}
}

// Quiet drops what is written once a stop at once begins; Loud reaches the writer
// beneath however many Quiet wrappers.
func TestQuietAndLoud(t *testing.T) {
	var b bytes.Buffer
	w := Quiet{W: Quiet{W: &b}}
	w.Write([]byte("before;"))
	Stopping.Store(true)
	defer Stopping.Store(false)
	w.Write([]byte(" dropped;"))
	Loud(w).Write([]byte(" stopped at once"))
	if b.String() != "before; stopped at once" {
		t.Fatalf("%q", b.String())
	}
}
