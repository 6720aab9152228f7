package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/warmstat/warmstat/base/procgroup"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/runfmt"
)

// stoppingAtOnce is set when a second Ctrl-C or a SIGTERM stops warmstat at once: the
// JVMs it kills then end their work, which is not a failure to print (a series' record
// keeps its run as running, and the same command runs it again). Every command writes
// through quietOnStop, so nothing but the stop's own line is printed after it.
var stoppingAtOnce atomic.Bool

// quietOnStop passes writes on until a stop at once begins, then drops them.
type quietOnStop struct{ w io.Writer }

func (q quietOnStop) Write(p []byte) (int, error) {
	if stoppingAtOnce.Load() {
		return len(p), nil
	}
	return q.w.Write(p)
}

// loud is w without its quietOnStop wrappers: the stop's own line is printed.
func loud(w io.Writer) io.Writer {
	for {
		q, ok := w.(quietOnStop)
		if !ok {
			return w
		}
		w = q.w
	}
}

// removeOnStop holds temporary directories of warmstat's own (shape's workload) that a
// stop at once removes before it exits (a deferred removal never runs after os.Exit):
// directory -> a channel the command closes once it has removed it.
var removeOnStop sync.Map

// interruptible runs long work (load, seed): the first Ctrl-C cancels ctx, and the work
// ends at its next safe point (a load between upserts, with its manifest written); a
// second Ctrl-C, or a SIGTERM at any time, stops every evitaDB JVM this process started
// and exits at once: 130 after Ctrl-C, 143 after SIGTERM. The returned function stops
// listening.
func interruptible(parent context.Context, errw io.Writer) (context.Context, func()) {
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
			stoppingAtOnce.Store(true)    // what the kills below end is not a failure to report
			runfmt.FreezeCommits()        // what is still being written stays unfinished
			builds := procgroup.KillAll() // a bisect's build, with the JVMs mvn forked
			n := evitaserver.KillAll()
			// a command's own temporary directories: the command removes one itself when it
			// sees its JVM die (it may still be writing a log into it); waited for a moment,
			// then removed here in any case
			removeOnStop.Range(func(dir, done any) bool {
				select {
				case <-done.(chan struct{}):
				case <-time.After(3 * time.Second):
				}
				os.RemoveAll(dir.(string))
				return true
			})
			code, name := 130, "a second Ctrl-C"
			if sig == syscall.SIGTERM {
				code, name = 143, "SIGTERM"
			}
			killed := fmt.Sprintf("%d evitaDB JVM(s) killed", n)
			if builds > 0 {
				killed += fmt.Sprintf(", %s ended with every process it started", report.Plural(builds, "build"))
			}
			fmt.Fprintf(loud(errw), "\nwarmstat: stopped at once by %s: %s; what was being written is incomplete\n", name, killed)
			os.Exit(code)
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

// faultHint adds the flag to change to a failed server's fault (the packages name no
// flags): the writer's heap is --server-heap, the reader's --reader-heap, a seeding
// server's --heap.
func faultHint(err error) error {
	var f *evitaserver.Fault
	if err == nil || !errors.As(err, &f) || f.Advice == "" {
		return err
	}
	flag := map[string]string{"writer": "--server-heap", "reader": "--reader-heap", "seeding": "--heap"}[f.Role]
	if flag == "" {
		return err
	}
	return fmt.Errorf("%w (%s)", err, flag)
}
