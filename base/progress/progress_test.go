package progress

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A load's progress as loader writes it, at one update a second for five minutes and
// two collections, becomes a handful of stamped lines: one a minute while a line is
// rewritten, the last update of each line, and the text between them untouched.
func TestLogKeepsWhatALogNeeds(t *testing.T) {
	clock := time.Date(2026, 12, 4, 14, 0, 0, 0, time.UTC)
	var b strings.Builder
	l := NewLog(&b, time.Minute, func() time.Time { return clock })
	fmt.Fprintf(l, "warm-up load 1 of 1 (not measured) ...\n")
	for i := 1; i <= 300; i++ {
		clock = clock.Add(time.Second)
		fmt.Fprintf(l, "\r%-10s %3d/300   ", "Product", i)
		if i == 300 {
			fmt.Fprintln(l)
		}
	}
	fmt.Fprintf(l, "\r%-10s %3d/1   ", "Brand", 1) // a short line: written by its end alone
	fmt.Fprintln(l)
	fmt.Fprintf(l, "\rgoLive %3d%%", 50)
	fmt.Fprintf(l, "other text ends the line\n")
	fmt.Fprintf(l, "\rdone in one write\n")
	fmt.Fprintln(l) // a blank line of its own passes through
	want := `warm-up load 1 of 1 (not measured) ...
14:01:00 Product     60/300
14:02:00 Product    120/300
14:03:00 Product    180/300
14:04:00 Product    240/300
14:05:00 Product    300/300
14:05:00 Brand        1/1
other text ends the line
14:05:00 done in one write

`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestForATerminalIsTheWriterItself(t *testing.T) {
	var b strings.Builder
	if For(&b, true) != &b {
		t.Fatal("a terminal's progress was wrapped")
	}
	if _, ok := For(&b, false).(*Log); !ok {
		t.Fatal("a log's progress was not")
	}
}

// Live tells a terminal from a file: a regular file (a log) gets the Log, as does any
// writer that is not a file.
func TestLiveWrapsAllButATerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := Live(f).(*Log); !ok {
		t.Error("a regular file's progress was not wrapped")
	}
	if _, ok := Live(&strings.Builder{}).(*Log); !ok {
		t.Error("a buffer's progress was not wrapped")
	}
}

// An ETA is the rest of the work at the rate so far, once the rate means something:
// not in the first seconds (a JVM's start), not before a hundredth of the work.
func TestETAWaitsForARate(t *testing.T) {
	for _, c := range []struct {
		done, total int64
		elapsed     time.Duration
		want        string
	}{
		{1, 7731, 100 * time.Millisecond, "?"},    // the first entity: a JVM's start, not a rate
		{500, 1000, 2 * time.Second, "?"},         // half done, but too early to say
		{50, 10000, 60 * time.Second, "?"},        // a minute in, a two-hundredth done
		{100, 10000, 60 * time.Second, "1h39m0s"}, // a hundredth: 99 more minutes
		{2375, 7731, 17 * time.Second, "38s"},     // 5,356 left at 139.7/s
		{7731, 7731, 30 * time.Second, "0s"},
		{3645, 3645, 400 * time.Millisecond, "0s"}, // done in under a second: nothing left, not "?"
		{0, 10, time.Minute, "?"},
	} {
		if got := ETA(c.done, c.total, c.elapsed); got != c.want {
			t.Errorf("ETA(%d, %d, %s) = %s, want %s", c.done, c.total, c.elapsed, got, c.want)
		}
	}
}
