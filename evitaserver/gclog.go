package evitaserver

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
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
}

// Pauses is the number of stop-the-world pauses.
func (s GCSummary) Pauses() int64 { return s.Young + s.Full + s.Other }

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
)

// ParseGCLog reads one GC log.
func ParseGCLog(r io.Reader) (GCSummary, error) {
	var s GCSummary
	err := parseInto(r, &s, map[string]bool{})
	return s, err
}

// ParseGCFiles reads a log and its rotations (e.g. gc.log.0 … gc.log.4 and gc.log),
// counting a pause that appears in two files once.
func ParseGCFiles(paths ...string) (GCSummary, error) {
	var s GCSummary
	seen := map[string]bool{}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return s, err
		}
		err = parseInto(f, &s, seen)
		f.Close()
		if err != nil {
			return s, fmt.Errorf("%s: %w", p, err)
		}
	}
	return s, nil
}

func parseInto(r io.Reader, s *GCSummary, seen map[string]bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if m := uptimeRe.FindStringSubmatch(text); m != nil {
			if up, err := strconv.ParseFloat(m[1], 64); err == nil && int64(up*1e9) > s.UptimeNs {
				s.UptimeNs = int64(up * 1e9)
			}
		}
		m := pauseRe.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		key := m[1] + "/" + m[2] // a concurrent cycle's Remark and Cleanup share its GC id
		if seen[key] {
			continue
		}
		seen[key] = true
		ms, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			return fmt.Errorf("line %d: pause duration %q: %v", line, m[3], err)
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
	return sc.Err()
}
