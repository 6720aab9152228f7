package evitaserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Fault is why a server warmstat started can no longer be measured: it exited, ran out
// of memory, is GC-bound, or stopped answering. It names the server, its heap, where a
// heap dump lies, and what to change; callers report it before any error it caused.
type Fault struct {
	Role     string // "writer", "reader", "seeding server"
	Heap     int64
	Reason   string
	HeapDump string // a heap dump the JVM left, if any
	Advice   string
}

func (f *Fault) Error() string {
	msg := fmt.Sprintf("the %s server (heap %s) %s", f.Role, fmtBytesExact(f.Heap), f.Reason)
	if f.HeapDump != "" {
		msg += "; heap dump: " + f.HeapDump
	}
	if f.Advice != "" {
		msg += "; " + f.Advice
	}
	return msg
}

// WatchOptions tune Watch; zero values take the defaults.
type WatchOptions struct {
	Role string
	// Advice is what to change when the server runs short of memory (e.g. "give it a
	// larger --server-heap").
	Advice string
	// Every is how often the logs are read and the server probed (default 2 s).
	Every time.Duration
	// Window is the span the GC share is measured over (default 60 s).
	Window time.Duration
	// WarnShare and BoundShare are GC-pause shares of the window (defaults 15 % and 40 %):
	// above the first a warning is reported, above the second the server is GC-bound.
	WarnShare, BoundShare float64
	// Unanswered is how long the server may not answer a status call while its process
	// lives and is not GC-bound (default 90 s).
	Unanswered time.Duration
	// Warn receives warnings (GC pressure while it happens); nil = none.
	Warn func(string)
}

func (o *WatchOptions) defaults() {
	if o.Every == 0 {
		o.Every = 2 * time.Second
	}
	if o.Window == 0 {
		o.Window = time.Minute
	}
	if o.WarnShare == 0 {
		o.WarnShare = 15
	}
	if o.BoundShare == 0 {
		o.BoundShare = 40
	}
	if o.Unanswered == 0 {
		o.Unanswered = 90 * time.Second
	}
	if o.Role == "" {
		o.Role = "evitaDB"
	}
}

// Watch follows the server until ctx ends or a fault is found, which it returns (nil
// when ctx ended first): the JVM's exit, an OutOfMemoryError in its log, a GC-bound
// JVM (the GC log is read as it grows), or a server that stops answering.
func (s *Server) Watch(ctx context.Context, o WatchOptions) *Fault {
	o.defaults()
	gc := &gcTail{path: s.GCLog}
	out := &logTail{path: s.Log}
	lastAnswer, lastProbe := time.Now(), time.Time{}
	warned := time.Time{}
	tick := time.NewTicker(o.Every)
	defer tick.Stop()
	fault := func(reason, advice string) *Fault {
		dump := out.dump
		if dump == "" {
			dump = s.heapDump()
		}
		return &Fault{Role: o.Role, Heap: s.HeapBytes, Reason: reason, HeapDump: dump, Advice: advice}
	}
	// the status call runs beside the loop: a JVM too busy to answer (GC-bound, or dying
	// of OutOfMemoryError) holds a call for its whole timeout, and the logs must still be
	// read every tick meanwhile, since a caller whose call failed waits only a few seconds
	// for the verdict
	probed := make(chan error, 1) // one call in flight at most: its send never blocks
	probing := false
	var lastErr error
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.done:
			if ctx.Err() != nil {
				return nil
			}
			if out.sawOOM() {
				return fault("ran out of memory (OutOfMemoryError) and exited", o.Advice)
			}
			return fault(fmt.Sprintf("exited unexpectedly (%v); last log lines:\n%s", s.exitErr, s.Tail(10)), "")
		case err := <-probed:
			probing = false
			if err == nil {
				lastAnswer = time.Now()
			} else {
				lastErr = err
			}
			continue
		case <-tick.C:
		}
		if out.sawOOM() {
			return fault("ran out of memory (OutOfMemoryError in its log)", o.Advice)
		}
		gc.read()
		if share, full, heap := gc.window(o.Window); gc.covers(o.Window) {
			desc := fmt.Sprintf("%.0f %% of the last %s in GC pauses, %d full GC(s), heap %s after the last collection",
				share, o.Window, full, heap)
			if share >= o.BoundShare {
				return fault("is GC-bound: "+desc+"; the run would measure the collector, not the write path", o.Advice)
			}
			if share >= o.WarnShare && o.Warn != nil && time.Since(warned) > o.Window {
				warned = time.Now()
				o.Warn(fmt.Sprintf("the %s server is under GC pressure: %s", o.Role, desc))
			}
		}
		if silent := time.Since(lastAnswer); silent > o.Unanswered && s.Running() {
			last := "a call still waits for its answer"
			if !probing && lastErr != nil {
				last = lastErr.Error()
			}
			return fault(fmt.Sprintf("has not answered a status call for %s although its process runs (last: %s)",
				silent.Round(time.Second), last), "")
		}
		if !probing && time.Since(lastProbe) >= 10*time.Second { // now and then: no load on the measured server
			probing, lastProbe = true, time.Now()
			go func() {
				pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				probed <- s.Probe(pctx, s.Addr)
			}()
		}
	}
}

// AwaitHeapDump waits (up to heapDumpWait, while the JVM lives) until a heap dump it is writing
// is complete: a server that failed is killed only after, since a dump cut short is
// useless. The JVM prints the OutOfMemoryError a moment before it announces the dump
// ("Dumping heap to ..."), so an error with no dump announced yet is given a few
// seconds for one.
func (s *Server) AwaitHeapDump() {
	t := &logTail{path: s.Log}
	begin := time.Now()
	for end := begin.Add(heapDumpWait); time.Now().Before(end) && s.Running(); time.Sleep(250 * time.Millisecond) {
		t.sawOOM()
		switch {
		case t.dumpClosed:
			return
		case t.dump != "": // being written
		case t.oom && time.Since(begin) < dumpAnnounced: // about to be written
		default:
			return
		}
	}
}

// heapDumpWait bounds the wait for a heap dump: a 21 GiB heap is written in about a
// minute on this kind of machine's disk.
const heapDumpWait = 2 * time.Minute

// dumpAnnounced is how long after an OutOfMemoryError a heap dump may still be
// announced: the JVM prints both from the same thread, one right after the other.
const dumpAnnounced = 5 * time.Second

// heapDump is the newest heap dump in the server's log directory, if any.
func (s *Server) heapDump() string {
	dumps, _ := filepath.Glob(filepath.Join(s.LogDir, "*.hprof"))
	if len(dumps) == 0 {
		return ""
	}
	return dumps[len(dumps)-1]
}

// logTail reads a growing log for OutOfMemoryError and the heap dump it triggers.
type logTail struct {
	path       string
	off        int64
	oom        bool
	dump       string // "Dumping heap to <path> ..."
	dumpClosed bool   // "Heap dump file created ..."
}

// sawOOM reads what the log gained since the last call (the dump's announcement and end
// follow the error) and says whether an OutOfMemoryError was seen.
func (t *logTail) sawOOM() bool {
	f, err := os.Open(t.path)
	if err != nil {
		return false
	}
	defer f.Close()
	if _, err := f.Seek(t.off, io.SeekStart); err != nil {
		return false
	}
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadString('\n')
		if err != nil { // an incomplete last line is read again next time
			return t.oom
		}
		t.off += int64(len(line))
		if strings.Contains(line, "java.lang.OutOfMemoryError") {
			t.oom = true
		}
		if rest, ok := strings.CutPrefix(line, "Dumping heap to "); ok {
			t.dump = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "..."))
		}
		// the dump's end: written, or given up ("Unable to create ...", "Dump file is incomplete")
		if strings.HasPrefix(line, "Heap dump file created") || strings.HasPrefix(line, "Unable to create") ||
			strings.HasPrefix(line, "Dump file is incomplete") {
			t.dumpClosed = true
		}
	}
}

// gcTail reads a growing GC log and keeps the pauses of the recent past.
type gcTail struct {
	path   string
	off    int64
	pauses []pause
	seen   map[string]bool
	uptime float64 // the last uptime seen, s
	first  float64 // the first uptime seen, s
}

type pause struct {
	end, secs  float64 // uptime at completion, duration (s)
	full       bool
	after, cap string // heap after and capacity, as logged ("512M", "2048M")
}

// "[12.345s][info][gc          ] GC(61) Pause Full (G1 Compaction Pause) 1020M->1010M(1024M) 3456.789ms"
var pauseDetailRe = regexp.MustCompile(`\[gc\s*\]\s+GC\((\d+)\) Pause (\w+)\b.*?(?:\d+\w->(\d+\w)\((\d+\w)\))?\s+(\d+(?:\.\d+)?)ms\s*$`)

func (t *gcTail) read() {
	if t.seen == nil {
		t.seen = map[string]bool{}
	}
	f, err := os.Open(t.path)
	if err != nil {
		return
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() < t.off { // rotated: start over
		t.off = 0
	}
	if _, err := f.Seek(t.off, io.SeekStart); err != nil {
		return
	}
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		t.off += int64(len(line))
		m := uptimeRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		up, _ := strconv.ParseFloat(m[1], 64)
		if t.first == 0 {
			t.first = up
		}
		t.uptime = max(t.uptime, up)
		p := pauseDetailRe.FindStringSubmatch(line)
		if p == nil || t.seen[p[1]+"/"+p[2]] {
			continue
		}
		t.seen[p[1]+"/"+p[2]] = true
		ms, _ := strconv.ParseFloat(p[5], 64)
		t.pauses = append(t.pauses, pause{end: up, secs: ms / 1000, full: p[2] == "Full", after: p[3], cap: p[4]})
	}
}

// covers reports whether the log spans a whole window yet.
func (t *gcTail) covers(w time.Duration) bool { return t.uptime-t.first >= w.Seconds() }

// window is the pause share (%) of the last w of uptime, the full GCs in it, and the
// heap after the last collection; older pauses are dropped.
func (t *gcTail) window(w time.Duration) (share float64, full int, heap string) {
	from := t.uptime - w.Seconds()
	keep := t.pauses[:0]
	var paused float64
	for _, p := range t.pauses {
		if p.end < from {
			continue
		}
		keep = append(keep, p)
		paused += min(p.secs, p.end-from) // the part of the pause inside the window
		if p.full {
			full++
		}
	}
	t.pauses = keep
	heap = "unknown"
	if n := len(keep); n > 0 && keep[n-1].after != "" {
		heap = keep[n-1].after + " of " + keep[n-1].cap
	}
	return 100 * paused / w.Seconds(), full, heap
}
