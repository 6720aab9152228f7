package runfmt

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/warmstat/warmstat/base/canary"
	"github.com/warmstat/warmstat/base/staging"
)

// File names inside a run directory.
const (
	ManifestFile      = "manifest.json"
	EntitiesFile      = "entities.csv"
	HarnessStdoutFile = "harness-stdout.log"
	// CanaryFile holds the machine's speed through a spawned load: one line per canary
	// sample (at_ns since the load's window began, as entities.csv's start_ns nearly is;
	// alu_ns, l3_ns, dram_ns), so a stretch of the load can be set against its own
	// speed. Optional: runs before 2026-12-07, imports and attached loads have none.
	CanaryFile = "canary.csv"
)

// Run is an opened run directory with a validated manifest.
type Run struct {
	Dir      string
	Manifest *Manifest
}

// IsRunDir reports whether dir holds a manifest.
func IsRunDir(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, ManifestFile))
	return err == nil && st.Mode().IsRegular()
}

// Incomplete is a directory that holds a run's per-upsert CSV but no manifest: what a
// killed load leaves behind (the manifest is written last), or a run still being
// written. It is never read, and never silently skipped either.
type Incomplete struct {
	Dir    string
	Reason string
}

// RunDirs returns path itself when it is a run directory, else the run directories
// directly inside it (sorted by name), and the subdirectories that look like runs
// but have no manifest. A path holding no run is an error.
func RunDirs(path string) ([]string, []Incomplete, error) {
	if IsRunDir(path) {
		return []string{path}, nil, nil
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, nil, err
	}
	var dirs []string
	var skipped []Incomplete
	for _, e := range ents {
		d := filepath.Join(path, e.Name())
		switch {
		case !e.IsDir():
		case IsRunDir(d):
			dirs = append(dirs, d)
		case fileExists(filepath.Join(d, EntitiesFile)):
			skipped = append(skipped, Incomplete{Dir: d, Reason: "has " + EntitiesFile + " but no " + ManifestFile + " (a load that was killed, or is still running)"})
		}
	}
	if len(dirs) == 0 {
		why := ""
		if len(skipped) > 0 {
			why = fmt.Sprintf("; %d incomplete: %s %s", len(skipped), skipped[0].Dir, skipped[0].Reason)
		}
		return nil, skipped, fmt.Errorf("%s holds no run directories (no %s in it or in its subdirectories%s)", path, ManifestFile, why)
	}
	return dirs, skipped, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// Open reads dir's manifest and checks that its CSV exists.
func Open(dir string) (*Run, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, err
	} else if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a run directory", dir)
	}
	mp := filepath.Join(dir, ManifestFile)
	if _, err := os.Stat(mp); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: not a run directory (no %s)", dir, ManifestFile)
	}
	m, err := ReadManifest(mp)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, EntitiesFile)); err != nil {
		return nil, fmt.Errorf("%s: %s is missing", dir, EntitiesFile)
	}
	return &Run{Dir: dir, Manifest: m}, nil
}

// Label is how the run is named to people: "build/run-id".
func (r *Run) Label() string { return r.Manifest.Build.Label + "/" + r.Manifest.RunID }

// ScanRows streams entities.csv through fn and checks it against the manifest: every
// row's collection is a manifest collection, per-collection and total row counts
// equal the manifest's, and each collection's upsert times add up to its manifest
// upsert_ns (within half the stated resolution). A row that would take a collection
// past that sum is refused where it stands, so no sum of rows can overflow. fn may be
// nil (validation only).
func (r *Run) ScanRows(fn func(Row) error) error {
	path := filepath.Join(r.Dir, EntitiesFile)
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return ScanAgainst(f, path, filepath.Join(r.Dir, ManifestFile), r.Manifest, fn)
}

// ScanAgainst streams a CSV from rd and checks it against m (see Run.ScanRows).
func ScanAgainst(rd io.Reader, csvName, manifestName string, m *Manifest, fn func(Row) error) error {
	cr, err := NewCSVReader(rd, csvName)
	if err != nil {
		return err
	}
	index := make(map[string]int, len(m.Collections))
	for i, c := range m.Collections {
		index[c.Name] = i
	}
	counts := make([]int64, len(m.Collections))
	sums := make([]int64, len(m.Collections))
	half := m.Timings.ResolutionNs / 2
	var total int64
	lastName, last := "", -1
	for {
		row, err := cr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if row.Collection != lastName {
			i, ok := index[row.Collection]
			if !ok {
				return perr(csvName, cr.Line(), ColCollection, "%q is not a collection of %s", row.Collection, manifestName)
			}
			lastName, last = row.Collection, i
		}
		c := &m.Collections[last]
		if row.UpsertNs > addSat(c.UpsertNs, half)-sums[last] {
			return perr(csvName, cr.Line(), ColUpsertNs, "%d ns takes the upserts of %q past the %s %s records for them (collections[%d].upsert_ns): an overflowed figure, or a row of another run?",
				row.UpsertNs, c.Name, Duration(c.UpsertNs), manifestName, last)
		}
		sums[last] += row.UpsertNs
		counts[last]++
		total++
		if fn != nil {
			if err := fn(row); err != nil {
				return err
			}
		}
	}
	if total != m.Entities {
		return perr(csvName, cr.Line(), "", "%d rows, but %s says entities=%d (file cut short, or the wrong CSV?)", total, manifestName, m.Entities)
	}
	for i, c := range m.Collections {
		if counts[i] != c.Entities {
			return perr(csvName, cr.Line(), ColCollection, "%d rows of %q, but %s says %d", counts[i], c.Name, manifestName, c.Entities)
		}
		if sums[i] < c.UpsertNs-half {
			return perr(csvName, cr.Line(), ColUpsertNs, "the upserts of %q add up to %s, but %s records %s (collections[%d].upsert_ns): the CSV of another run?",
				c.Name, Duration(sums[i]), manifestName, Duration(c.UpsertNs), i)
		}
	}
	return nil
}

// Staged is a run directory being written: everything goes into a sibling temporary
// directory that warmstat created, and Commit renames it into place, so a reader never
// sees half a run and a failed write never touches anything it did not create.
type Staged struct {
	final, tmp string
}

// Stage prepares to write a run directory at final, which must be absent or an empty
// directory (a non-empty one is refused and left untouched).
func Stage(final string) (*Staged, error) {
	if err := mustBeAbsentOrEmpty(final); err != nil {
		return nil, err
	}
	parent := filepath.Dir(filepath.Clean(final))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(parent, staging.Pattern(final))
	if err != nil {
		return nil, err
	}
	// MkdirTemp makes it private (0700); a run directory is read like any other output
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	return &Staged{final: final, tmp: tmp}, nil
}

func mustBeAbsentOrEmpty(dir string) error {
	st, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s exists and is not a directory; refusing to write a run there", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(ents) > 0 {
		return fmt.Errorf("%s exists and is not empty; refusing to overwrite it (choose another directory)", dir)
	}
	return nil
}

// CheckOut refuses an output directory that exists and is not empty, before any work
// (Stage would refuse it too, but only when the run is written).
func CheckOut(dir string) error { return mustBeAbsentOrEmpty(dir) }

// Dir is where files are written until Commit.
func (s *Staged) Dir() string { return s.tmp }

// Commit moves the staged directory into place.
func (s *Staged) Commit() error {
	commits.Lock() // held for good once FreezeCommits was called
	defer commits.Unlock()
	if err := mustBeAbsentOrEmpty(s.final); err != nil {
		return err
	}
	if err := os.Remove(s.final); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err // os.Remove only removes an empty directory
	}
	return os.Rename(s.tmp, s.final)
}

// Abort removes the staged directory (which Stage created).
func (s *Staged) Abort() { _ = os.RemoveAll(s.tmp) }

// commits orders run commits against FreezeCommits.
var commits sync.Mutex

// FreezeCommits stops this process from moving any further run into place, for good:
// a commit under way finishes first, every later one blocks. A process that is about
// to exit at once (a second Ctrl-C) calls it, so that no run appears complete after
// it was stopped.
func FreezeCommits() { commits.Lock() }

// WriteCanary writes a load's canary samples into run directory dir as CanaryFile;
// none, nothing.
func WriteCanary(dir string, samples []canary.Sample) error {
	if len(samples) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("at_ns,alu_ns,l3_ns,dram_ns\n")
	for _, x := range samples {
		fmt.Fprintf(&b, "%d,%d,%d,%d\n", x.AtNs, x.ALUNs, x.L3Ns, x.DRAMNs)
	}
	return os.WriteFile(filepath.Join(dir, CanaryFile), []byte(b.String()), 0o644)
}
