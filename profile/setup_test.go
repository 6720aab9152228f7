package profile

import (
	"errors"
	"testing"
)

// An interval is read in its mode's unit, before the profiler is looked for: alloc
// samples by size, the other modes by time; a wrong unit or a value not above 0 is an
// *IntervalError naming both.
func TestOpenReadsTheIntervalInItsModesUnit(t *testing.T) {
	for _, c := range []struct{ mode, interval, want string }{
		{"alloc", "10ms", `"10ms": alloc samples by size, e.g. 512k`},
		{"alloc", "0", `"0": alloc samples by size, e.g. 512k`},
		{"cpu", "512k", `"512k": cpu samples by time, e.g. 10ms`},
		{"wall", "-5ms", `"-5ms": wall samples by time, e.g. 10ms`},
	} {
		_, err := Open(Setup{Mode: c.mode, Interval: c.interval, WorkDir: t.TempDir()})
		var ie *IntervalError
		if !errors.As(err, &ie) || err.Error() != c.want {
			t.Errorf("%s %s: %v, want %q", c.mode, c.interval, err, c.want)
		}
	}
	for _, c := range []struct {
		mode, interval string
		want           int64
	}{{"alloc", "512k", 512 << 10}, {"cpu", "5ms", 5e6}} {
		if v, err := parseInterval(c.mode, c.interval); err != nil || v != c.want {
			t.Errorf("%s %s: %d %v, want %d", c.mode, c.interval, v, err, c.want)
		}
	}
}
