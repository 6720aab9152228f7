package profile

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/warmstat/warmstat/runfmt"
)

// Setup is a writer profile as a user asks for it: a mode and, as typed, an interval
// in the mode's own unit.
type Setup struct {
	Mode     string // one of Modes
	Interval string // a size for alloc (512k), a duration for the others (10ms); "" = the mode's default
	WorkDir  string // the run's work directory: recordings go into its writer-profile/
	Warn     func(string)
}

// IntervalError is an interval typed in another unit than its mode samples by.
type IntervalError struct{ Interval, Mode string }

func (e *IntervalError) Error() string {
	if e.Mode == "alloc" {
		return fmt.Sprintf("%q: alloc samples by size, e.g. 512k", e.Interval)
	}
	return fmt.Sprintf("%q: %s samples by time, e.g. 10ms", e.Interval, e.Mode)
}

// Open checks s and returns its Recorder, with the fetched async-profiler (every mode
// converts its recordings with it). Its errors are an *IntervalError, ErrNotFetched
// (wrapped) and New's *OptionError, in that order.
func Open(s Setup) (*Recorder, error) {
	o := Options{Mode: s.Mode, WorkDir: filepath.Join(s.WorkDir, "writer-profile"), Warn: s.Warn}
	if s.Interval != "" {
		v, err := parseInterval(s.Mode, s.Interval)
		if err != nil {
			return nil, err
		}
		o.Interval = v
	}
	a, err := Fetched(AsyncProfilerVersion)
	if err != nil {
		return nil, err
	}
	o.Artifact = a
	return New(o)
}

// parseInterval reads an interval in mode's unit: bytes for alloc, nanoseconds for the
// modes that sample by time.
func parseInterval(mode, s string) (int64, error) {
	if mode == "alloc" {
		v, err := runfmt.ParseBytes(s)
		if err != nil || v <= 0 {
			return 0, &IntervalError{s, mode}
		}
		return v, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, &IntervalError{s, mode}
	}
	return int64(d), nil
}
