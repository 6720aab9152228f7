// Package interrupt stops warmstat's long work (a load, a seed, a series) in two steps:
// the first Ctrl-C asks the work to end at its next safe point, so that what it writes
// stays whole; a second Ctrl-C, or a SIGTERM at any time, stops at once: whatever the
// process started is killed, its output falls silent but for the stop's own line, and
// it exits 130 (Ctrl-C) or 143 (SIGTERM), as a shell reports a process its signal ended.
package interrupt

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Stopping is set when a stop at once begins: the processes it kills then end their
// work, which is not a failure to print (a series' record keeps its run as running,
// and the same command runs it again). Every writer wrapped in Quiet falls silent.
var Stopping atomic.Bool

// Quiet passes writes on to W until a stop at once begins, then drops them.
type Quiet struct{ W io.Writer }

func (q Quiet) Write(p []byte) (int, error) {
	if Stopping.Load() {
		return len(p), nil
	}
	return q.W.Write(p)
}

// Loud is w without its Quiet wrappers: the stop's own line is printed.
func Loud(w io.Writer) io.Writer {
	for {
		q, ok := w.(Quiet)
		if !ok {
			return w
		}
		w = q.W
	}
}

// RemoveOnStop holds temporary directories a stop at once removes before it exits (a
// deferred removal never runs after os.Exit): directory -> a chan struct{} the owner
// closes once it has removed the directory itself.
var RemoveOnStop sync.Map

// removeWait is how long a stop waits for a directory's owner to remove it (the owner
// may still be writing a log into it as its process dies) before removing it anyway.
const removeWait = 3 * time.Second

// exit ends the process; a test replaces it.
var exit = os.Exit

// Listen runs long work: the first Ctrl-C cancels the returned context, and the work
// ends at its next safe point; a second Ctrl-C, or a SIGTERM at any time, stops at
// once. kill then ends everything the process started and says what it ended
// ("2 evitaDB JVM(s) killed"); the stop's line names it on errw. The returned function
// stops listening.
func Listen(parent context.Context, errw io.Writer, kill func() string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		interrupted := false
		for {
			var sig os.Signal
			select {
			case <-done:
				return
			case sig = <-sigs:
			}
			if sig == os.Interrupt && !interrupted {
				interrupted = true
				fmt.Fprintln(errw, "\nwarmstat: interrupted: stopping at the next safe point (work in flight, an upsert or a write, is finished, never cut); Ctrl-C again to stop at once")
				cancel()
				continue
			}
			stopAtOnce(sig, errw, kill)
			return
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

// stopAtOnce kills, removes the temporary directories and exits with sig's code.
func stopAtOnce(sig os.Signal, errw io.Writer, kill func() string) {
	Stopping.Store(true) // what the kills end is not a failure to report
	killed := kill()
	RemoveOnStop.Range(func(dir, removed any) bool {
		select {
		case <-removed.(chan struct{}):
		case <-time.After(removeWait):
		}
		os.RemoveAll(dir.(string))
		return true
	})
	code, name := 130, "a second Ctrl-C"
	if sig == syscall.SIGTERM {
		code, name = 143, "SIGTERM"
	}
	fmt.Fprintf(Loud(errw), "\nwarmstat: stopped at once by %s: %s; what was being written is incomplete\n", name, killed)
	exit(code)
}
