package evitaserver

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/warmstat/warmstat/runfmt"
)

// GCSummary is what one JVM's GC log says about its pauses.
type GCSummary struct {
	Young   int64 // "Pause Young" (Normal, Concurrent Start, Prepare Mixed, Mixed)
	Full    int64 // "Pause Full"
	Other   int64 // other stop-the-world pauses: Remark, Cleanup
	PauseNs int64 // total time in all pauses
	MaxNs   int64 // the longest single pause
	// UptimeNs is the last JVM uptime the log shows (0 when it carries no uptime
	// decorator): the window the pauses fell in.
	UptimeNs int64
	// Collector and JVMVersion are what the JVM says of itself at start ("Using G1",
	// "[gc,init] Version: 17.0.15+6-..."; its java.vm.version), "" when the log does not
	// reach back to the start; JVMVersionAt is where it says so (file:line).
	Collector, JVMVersion, JVMVersionAt string
}

// Pauses is the number of stop-the-world pauses.
func (s GCSummary) Pauses() int64 { return s.Young + s.Full + s.Other }

// Record is the summary as a run's manifest records it, its pauses' share taken of the
// window wallNs (the measured part of the JVM's uptime).
func (s GCSummary) Record(wallNs int64) *runfmt.GCStats {
	young, full := s.Young, s.Full
	return &runfmt.GCStats{Collections: s.Pauses(), YoungPauses: &young, FullPauses: &full, PauseNs: s.PauseNs, ShareOfWallPc: s.ShareOf(wallNs)}
}

// ShareOf is the pause time as a percentage of a wall-clock window.
func (s GCSummary) ShareOf(wallNs int64) float64 {
	if wallNs <= 0 {
		return 0
	}
	return 100 * float64(s.PauseNs) / float64(wallNs)
}

// A pause is counted from its completion line, tagged exactly [gc] and ending in its
// duration; the [gc,start] line of the same pause is not counted, which is the
// mistake the Java wrapper's `grep -c` made (every count doubled).
var (
	pauseRe  = regexp.MustCompile(`\[gc\s*\]\s+GC\((\d+)\) Pause (\w+)\b.*?(\d+(?:\.\d+)?)ms\s*$`)
	uptimeRe = regexp.MustCompile(`\[(\d+(?:\.\d+)?)s\]`)
	// gcLineRe is a unified-logging line (-Xlog) whose tag set starts with gc:
	// "[0.048s][info][gc          ] ..." or "[...][info][gc,start    ] ...".
	gcLineRe  = regexp.MustCompile(`^(?:\[[^\]]*\])*?\[gc[\s,\]]`)
	usingRe   = regexp.MustCompile(`\[gc\s*\]\s+Using (\w+)\s*$`)
	versionRe = regexp.MustCompile(`\[gc,init\s*\]\s+Version: (\S+)`)
)

// NotGCLogError is a file that is not the -Xlog:gc output of a JVM. Reading it as
// "no pauses" would record 0 where the truth is unknown.
type NotGCLogError struct {
	File   string
	Reason string
}

func (e *NotGCLogError) Error() string {
	return fmt.Sprintf("%s: not a JVM GC log: %s (expected the output of -Xlog:gc*:file=...:uptime,level,tags)", e.File, e.Reason)
}

// ParseGCLog reads one GC log; name is used in errors.
func ParseGCLog(r io.Reader, name string) (GCSummary, error) {
	var s GCSummary
	n, err := parseInto(r, &s, map[string]bool{}, 0, 0)
	if err != nil {
		return s, err
	}
	if n.versionLine > 0 {
		s.JVMVersionAt = fmt.Sprintf("%s:%d", name, n.versionLine)
	}
	return s, checkLog(name, n, s)
}

// ParseGCFiles reads a log and its rotations (e.g. gc.log.0 … gc.log.4 and gc.log),
// counting a pause that appears in two files once. A file with content that carries
// no GC line is refused, and so is a set with no GC line at all (an empty file) or
// without the JVM uptime the pause share is measured against.
func ParseGCFiles(paths ...string) (GCSummary, error) { return ParseGCFilesFrom(0, paths...) }

// ParseGCFilesFrom is ParseGCFiles counting only the pauses that ended at or after the
// JVM uptime fromNs (a window that began then: after a warm-up). UptimeNs stays the
// log's last uptime; the window is UptimeNs - fromNs.
func ParseGCFilesFrom(fromNs int64, paths ...string) (GCSummary, error) {
	return ParseGCFilesBetween(fromNs, 0, paths...)
}

// ParseGCFilesBetween is ParseGCFilesFrom counting only the pauses that ended at or
// before the JVM uptime toNs too (0: no end): the pauses of one window.
func ParseGCFilesBetween(fromNs, toNs int64, paths ...string) (GCSummary, error) {
	var s GCSummary
	seen := map[string]bool{}
	var total lineCount
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return s, err
		}
		n, err := parseInto(f, &s, seen, fromNs, toNs)
		f.Close()
		if err != nil {
			return s, fmt.Errorf("%s: %w", p, err)
		}
		if n.text > 0 && n.gc == 0 {
			return s, &NotGCLogError{File: p, Reason: fmt.Sprintf("none of its %d lines carries a [gc...] tag", n.text)}
		}
		total.text += n.text
		total.gc += n.gc
		if n.versionLine > 0 && s.JVMVersionAt == "" {
			s.JVMVersionAt = fmt.Sprintf("%s:%d", p, n.versionLine)
		}
	}
	if len(paths) == 0 {
		return s, fmt.Errorf("no GC log given")
	}
	return s, checkLog(strings.Join(paths, ", "), total, s)
}

type lineCount struct{ text, gc, versionLine int }

func checkLog(name string, n lineCount, s GCSummary) error {
	switch {
	case n.text == 0:
		return &NotGCLogError{File: name, Reason: "it is empty"}
	case n.gc == 0:
		return &NotGCLogError{File: name, Reason: fmt.Sprintf("none of its %d lines carries a [gc...] tag", n.text)}
	case s.UptimeNs == 0:
		return &NotGCLogError{File: name, Reason: "its lines carry no uptime decorator ([12.345s]), so the share of time in pauses is unknown"}
	}
	return nil
}

func parseInto(r io.Reader, s *GCSummary, seen map[string]bool, fromNs, toNs int64) (lineCount, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	var n lineCount
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			continue
		}
		n.text++
		if !gcLineRe.MatchString(text) {
			continue
		}
		n.gc++
		lineUp := int64(-1)
		if m := uptimeRe.FindStringSubmatch(text); m != nil {
			if up, err := strconv.ParseFloat(m[1], 64); err == nil {
				lineUp = int64(up * 1e9)
				s.UptimeNs = max(s.UptimeNs, lineUp)
			}
		}
		if m := usingRe.FindStringSubmatch(text); m != nil && s.Collector == "" {
			s.Collector = m[1]
		}
		if m := versionRe.FindStringSubmatch(text); m != nil && s.JVMVersion == "" {
			s.JVMVersion, n.versionLine = m[1], line
		}
		m := pauseRe.FindStringSubmatch(text)
		if m == nil || fromNs > 0 && lineUp < fromNs || toNs > 0 && lineUp > toNs {
			continue
		}
		key := m[1] + "/" + m[2] // a concurrent cycle's Remark and Cleanup share its GC id
		if seen[key] {
			continue
		}
		seen[key] = true
		ms, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			return n, fmt.Errorf("line %d: pause duration %q: %v", line, m[3], err)
		}
		ns := int64(ms * 1e6)
		s.PauseNs += ns
		s.MaxNs = max(s.MaxNs, ns)
		switch m[2] {
		case "Young":
			s.Young++
		case "Full":
			s.Full++
		default:
			s.Other++
		}
	}
	return n, sc.Err()
}
