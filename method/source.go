package method

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/seed"
	"github.com/warmstat/warmstat/workload"
)

// ErrNoSnapshot: the snapshot's catalog directory is not there (a NoSnapshotError).
var ErrNoSnapshot = errors.New("no such snapshot")

// NoSnapshotError is a snapshot's catalog directory that is not there; its message
// names the directory and what it holds instead.
type NoSnapshotError struct{ Dir, Catalog string }

func (e *NoSnapshotError) Error() string {
	return fmt.Sprintf("--pristine %s: no catalog directory %q there (a pristine snapshot is made by warmstat seed --pristine)%s", e.Dir, e.Catalog, snapshotHint(e.Dir, e.Catalog))
}

func (e *NoSnapshotError) Is(target error) bool { return target == ErrNoSnapshot }

// WorkloadError is a workload file that cannot be replayed (damaged, or not one).
type WorkloadError struct{ Err error }

func (e *WorkloadError) Error() string { return e.Err.Error() }
func (e *WorkloadError) Unwrap() error { return e.Err }

// Source is what a series reads, as Prepare found it.
type Source struct {
	// Default: no source was given; the built-in catalog at DefaultScale, and
	// Generated says whether this series generated it (else it was cached), in Took.
	Default   bool
	Generated bool
	Took      time.Duration
	// Pristine and Catalog: a snapshot (Pristine absolute), or "" with a workload.
	Pristine, Catalog string
	// Workload: the workload file, proved whole (nil for a snapshot).
	Workload *workload.Info
	// snapshot is the snapshot's metadata, read once (nil: none, or a workload)
	snapshot *evitaserver.Snapshot
}

// Name is the source as messages name it: "the snapshot" or "the workload".
func (s Source) Name() string {
	if s.Workload != nil {
		return "the workload"
	}
	return "the snapshot"
}

// Path is where the source lies: the snapshot's catalog directory or the workload file.
func (s Source) Path() string {
	if s.Workload != nil {
		return s.Workload.Path
	}
	return filepath.Join(s.Pristine, s.Catalog)
}

// Counts are the collections the series loads and their entities (nil when unknown):
// a workload's own (the collections it holds, each capped as it was extracted, not every
// collection of the catalog it was read from), or the snapshot's metadata.
func (s Source) Counts() map[string]int64 {
	if s.Workload != nil {
		h := s.Workload.Header
		counts := map[string]int64{}
		for _, n := range h.Collections {
			counts[n] = h.SourceCounts[n]
			if h.MaxPerCollection > 0 {
				counts[n] = min(counts[n], int64(h.MaxPerCollection))
			}
		}
		return counts
	}
	if s.snapshot == nil || len(s.snapshot.Counts) == 0 {
		return nil
	}
	counts := map[string]int64{}
	for n, c := range s.snapshot.Counts {
		counts[n] = int64(c)
	}
	return counts
}

// Entities is the source's entity count (0 when unknown).
func (s Source) Entities() int64 {
	var n int64
	for _, c := range s.Counts() {
		n += c
	}
	return n
}

// LiveHeap is what holding the catalog costs, as its source records it (0 when it
// records nothing): a snapshot's live heap measured when it was seeded, else the
// estimate made for its entities; a workload's record of either.
func (s Source) LiveHeap() int64 {
	if s.Workload != nil {
		h := s.Workload.Header
		return cmp.Or(deref(h.SnapshotLiveHeapBytes), deref(h.LiveHeapEstimateBytes))
	}
	switch info := s.snapshot; {
	case info == nil:
		return 0
	case info.LiveHeapBytes != nil:
		return *info.LiveHeapBytes
	case info.Size != nil:
		return info.Size.LiveHeapEstimateBytes
	}
	return 0
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// readSource reads the series' source: a workload proved whole now, a snapshot whose
// catalog directory is there, or the default catalog (generated into warmstat's cache
// the first time) — all before any directory of the series is made.
func readSource(ctx context.Context, o Options) (Source, error) {
	switch {
	case o.Workload != "":
		path, err := filepath.Abs(o.Workload)
		if err != nil {
			return Source{}, err
		}
		info, err := workload.Verify(path)
		if err != nil {
			return Source{}, &WorkloadError{err}
		}
		return Source{Workload: &info, Catalog: info.Header.Catalog}, nil
	case o.Pristine != "" || o.Catalog != "":
		dir, err := filepath.Abs(o.Pristine)
		if err != nil {
			return Source{}, err
		}
		if st, err := os.Stat(filepath.Join(dir, o.Catalog)); err != nil || !st.IsDir() {
			return Source{}, &NoSnapshotError{Dir: dir, Catalog: o.Catalog}
		}
		src := Source{Pristine: dir, Catalog: o.Catalog}
		if info, err := evitaserver.ReadSnapshot(dir, o.Catalog); err == nil { // none: heaps must be given (loader says so)
			src.snapshot = info
		}
		return src, nil
	}
	begin := time.Now()
	info, generated, err := seed.CachedDefault(ctx, DefaultScale, o.Progress)
	if err != nil {
		return Source{}, err
	}
	return Source{Default: true, Generated: generated, Took: time.Since(begin), Workload: &info, Catalog: info.Header.Catalog}, nil
}

// snapshotHint helps a user whose --pristine or --catalog misses: the catalogs dir holds,
// or that dir is itself a catalog's snapshot (--pristine takes its parent).
func snapshotHint(dir, catalog string) string {
	if _, err := os.Stat(dir + ".snapshot.json"); err == nil {
		return fmt.Sprintf("; %s is itself a snapshot: give its parent, --pristine %s --catalog %s", dir, filepath.Dir(dir), filepath.Base(dir))
	}
	entries, _ := os.ReadDir(dir)
	var have []string
	for _, e := range entries {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(dir, e.Name()+".snapshot.json")); err == nil {
				have = append(have, e.Name())
			}
		}
	}
	if len(have) > 0 {
		return "; it holds " + strings.Join(have, ", ")
	}
	return ""
}
