// Package progress gives long work's progress to a reader that is not a terminal. On a
// terminal a load rewrites one line in place (\r) thousands of times; in a log those
// updates would be thousands of lines, and dropped they leave an hour-long replay
// silent until it ends. Log keeps what a log's reader needs: a timestamped update at
// most once a period, and the last update of each line (a collection finished, goLive
// done) always.
package progress

import (
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// DefaultEvery is how often a log gets an update of a line still being rewritten.
const DefaultEvery = time.Minute

// For is w itself for a terminal, and a Log of it every DefaultEvery otherwise.
func For(w io.Writer, terminal bool) io.Writer {
	if terminal {
		return w
	}
	return NewLog(w, DefaultEvery, time.Now)
}

// Live is For w, a terminal when w is one (a character device).
func Live(w io.Writer) io.Writer { return For(w, isTerminal(w)) }

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Log is an io.Writer for \r-updated progress that writes whole lines to its writer.
// A write starting with \r is an update: it is written (stamped with the time) when
// DefaultEvery has passed since the last line written, else kept. A write of "\n"
// after updates ends the line: the last update is written unless it just was. Other
// text passes through, ending the line being updated.
type Log struct {
	mu      sync.Mutex
	w       io.Writer
	every   time.Duration
	now     func() time.Time
	last    time.Time // when a line was last written
	pending string    // the last update not written yet ("" when it was)
	inLine  bool      // updates have come since the last line ended
}

// NewLog writes w's lines, updates at most once every period; now is the clock.
func NewLog(w io.Writer, every time.Duration, now func() time.Time) *Log {
	return &Log{w: w, every: every, now: now, last: now()}
}

func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := string(p)
	switch {
	case strings.HasPrefix(s, "\r"):
		l.inLine = true
		l.pending = strings.TrimRight(s[1:], " \n")
		if strings.HasSuffix(s, "\n") { // an update that ends its line itself
			l.inLine = false
			return len(p), l.flush()
		}
		if l.now().Sub(l.last) >= l.every {
			return len(p), l.flush()
		}
		return len(p), nil
	case s == "\n" && l.inLine:
		l.inLine = false
		return len(p), l.flush()
	default:
		l.inLine, l.pending = false, ""
		if _, err := io.WriteString(l.w, s); err != nil {
			return 0, err
		}
		return len(p), nil
	}
}

// flush writes the pending update as a line of its own, if there is one.
func (l *Log) flush() error {
	if l.pending == "" {
		return nil
	}
	now := l.now()
	line := now.Format("15:04:05 ") + l.pending + "\n"
	l.pending, l.last = "", now
	_, err := io.WriteString(l.w, line)
	return err
}

// ETA is what is left of total at the rate done took elapsed, rounded to the second,
// or "?" while the figure would say more about the start than the rate: before
// etaAfter has passed or a hundredth of the work is done (a load's first entities
// include its JVM's start and a rate of a few entities a second: "ETA 14m49s" for a
// load of 15 seconds). Work that is done has nothing left, however fast it went.
func ETA(done, total int64, elapsed time.Duration) string {
	if total > 0 && done >= total {
		return "0s"
	}
	if done <= 0 || elapsed < etaAfter || done*100 < total {
		return "?"
	}
	left := time.Duration(float64(elapsed) / float64(done) * float64(max(total-done, 0)))
	return left.Round(time.Second).String()
}

const etaAfter = 5 * time.Second
