package runfmt

import (
	"errors"
	"testing"
)

// A heap a person gives has its unit and is at least a JVM's smallest; anything else
// is refused saying why, never guessed.
func TestParseHeapSize(t *testing.T) {
	for in, want := range map[string]int64{"1.5g": 3 << 29, " 1536m ": 1536 << 20, "2m": 2 << 20, "4 GiB": 4 << 30} {
		if got, err := ParseHeapSize(in); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", in, got, err, want)
		}
	}
	for in, want := range map[string]SizeError{
		"0":     {"0", "a size must be positive"},
		"1.5":   {"1.5", "give the size with its unit (k, m, g or t: 1536m, 1.5g)"},
		" 512 ": {"512", "give the size with its unit (k, m, g or t: 1536m, 1.5g)"},
		"1m":    {"1m", "below 2m, the smallest heap a JVM takes"},
	} {
		_, err := ParseHeapSize(in)
		var se *SizeError
		if !errors.As(err, &se) || *se != want {
			t.Errorf("%q: %v; want %v", in, err, &want)
		}
	}
	if _, err := ParseHeapSize("lots"); err == nil || errors.As(err, new(*SizeError)) {
		t.Errorf("a size that does not read: %v, want ParseBytes' error", err)
	}
}
