package runfmt

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// HarnessImport is one Java-harness run to import: its directory (stdout.log and
// per-entity.csv), the run directory to write and what the harness's files do not hold.
type HarnessImport struct {
	Dir, Out string
	Options  HarnessImportOptions
	Machine  Machine // the machine it ran on, as far as it is known
	// Amend, if set, completes the manifest once the log is read, with what packages
	// above this one read (the writer's GC log, the JVMs); its error ends the import
	// with nothing written.
	Amend func(m *Manifest) error
	// Check, if set, proves the staged run before it is moved into place: its CSV must
	// reproduce every figure the harness printed (analyze.CheckHarnessRun).
	Check func(rep *HarnessReport, staged string) error
}

// ImportHarness imports h: the harness's log read into a manifest, the CSV converted
// and checked (WriteHarnessRun), nothing left at h.Out on any error. It returns the
// manifest written.
func ImportHarness(h HarnessImport) (*Manifest, error) {
	logPath, csvPath := filepath.Join(h.Dir, "stdout.log"), filepath.Join(h.Dir, "per-entity.csv")
	rep, err := ParseHarnessLog(logPath)
	if err != nil {
		return nil, err
	}
	src := h.Dir
	if abs, err := filepath.Abs(h.Dir); err == nil {
		src = abs // the manifest names where it came from wherever it is read
	}
	m := rep.Manifest(src, h.Options)
	m.Machine = h.Machine
	if h.Amend != nil {
		if err := h.Amend(m); err != nil {
			return nil, err
		}
	}
	var check func(string) error
	if h.Check != nil {
		check = func(staged string) error { return h.Check(rep, staged) }
	}
	return m, WriteHarnessRun(h.Out, m, csvPath, logPath, check)
}

// WriteHarnessRun writes an imported run directory at out: the harness CSV converted
// to entities.csv (checked row by row against m), the harness log kept as
// harness-stdout.log, and the manifest with exact upsert sums from the CSV. It refuses
// a CSV whose rows disagree with the report (count, collections, or upsert sums beyond
// the report's 0.1 s rounding). On any error nothing is left at out.
// check, if not nil, runs on the staged directory before it is moved into place.
func WriteHarnessRun(out string, m *Manifest, csvPath, logPath string, check func(dir string) error) (err error) {
	// refuse before staging: an error must name what the user gave, never the staging
	// directory
	if err := m.validate(); err != nil {
		return fmt.Errorf("%s: the run it describes is invalid: %w", logPath, err)
	}
	st, err := Stage(out)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			st.Abort()
		}
	}()
	in, err := os.Open(csvPath)
	if err != nil {
		return err
	}
	defer in.Close()
	f, err := os.Create(filepath.Join(st.Dir(), EntitiesFile))
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := NewCSVWriter(f)
	if err != nil {
		return err
	}
	sums := map[string]int64{}
	err = ScanAgainst(in, csvPath, logPath+" (report)", m, func(r Row) error {
		sums[r.Collection] += r.UpsertNs
		r.StartNs, r.Batch = -1, 0
		return w.Write(r)
	})
	if err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	var total int64
	for i, c := range m.Collections {
		exact := sums[c.Name]
		if d := exact - c.UpsertNs; d > 5e7 || d < -5e7 {
			return perr(csvPath, 0, ColUpsertNs, "upsert times of %q add up to %.3f s, but the report says %.1f s (a CSV from another run?)", c.Name, float64(exact)/1e9, float64(c.UpsertNs)/1e9)
		}
		m.Collections[i].UpsertNs = exact
		total += exact
	}
	if d := total - m.Timings.UpsertNs; d > 5e7 || d < -5e7 {
		return perr(csvPath, 0, ColUpsertNs, "upsert times add up to %.3f s, but the report's upsert (pure) is %.1f s", float64(total)/1e9, float64(m.Timings.UpsertNs)/1e9)
	}
	m.Timings.UpsertNs = total
	if err := m.validate(); err != nil {
		return fmt.Errorf("%s with the exact upsert times of %s: %w", logPath, csvPath, err)
	}
	if err := copyFile(logPath, filepath.Join(st.Dir(), HarnessStdoutFile)); err != nil {
		return err
	}
	if err := WriteManifest(filepath.Join(st.Dir(), ManifestFile), m); err != nil {
		return err
	}
	if check != nil {
		if err := check(st.Dir()); err != nil {
			return err
		}
	}
	return st.Commit()
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copying %s: %w", from, err)
	}
	return out.Close()
}
