package loader

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/workload"
)

// This file holds the entry points the command layer calls: a load or an extraction
// wherever its source and servers are, and the rules its settings must satisfy before
// any server starts (a bad setting must not cost a run).

// Servers is where a load's servers are: started by warmstat (Spawn) or already
// running at SourceAddr and TargetAddr (attach mode; a replay has no source server).
type Servers struct {
	Spawn                  *SpawnConfig
	SourceAddr, TargetAddr string
}

// NewManifest starts a run's manifest with what its caller knows (the build, the run
// id, warmstat's version) and the machine the load runs on, which is a condition runs
// are compared on (left unknown when it cannot be read).
func NewManifest(b runfmt.Build, runID, version string) runfmt.Manifest {
	m := runfmt.Manifest{Build: b, RunID: runID, Loader: runfmt.Loader{Version: runfmt.UnknownText(version)}}
	if mach, err := evitaserver.ReadMachine(); err == nil {
		m.Machine = mach.Record()
	}
	return m
}

// Load runs the load c on s's servers. Like Run and Spawn, a nil Result means nothing
// was measured and nothing written; the error then says why it could not start.
func Load(ctx context.Context, c Config, s Servers) (*Result, error) {
	if s.Spawn != nil {
		return Spawn(ctx, *s.Spawn, c)
	}
	if c.Replay == nil {
		src, err := evita.Dial(ctx, s.SourceAddr, evita.Options{})
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", s.SourceAddr, err)
		}
		defer src.Close() // closed after the target (deferred first)
		c.Source = src
	}
	dst, err := evita.Dial(ctx, s.TargetAddr, evita.Options{})
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", s.TargetAddr, err)
	}
	defer dst.Close()
	c.Target = dst
	return Run(ctx, c)
}

// OpenReplay makes the workload file at path c's source. The whole file is verified
// first, so a damaged one is refused before any server starts; its SHA-256 goes in the
// run's manifest. The caller closes c.Replay.
func (c *Config) OpenReplay(path string) error {
	path, err := filepath.Abs(path) // the manifest names it wherever the run is read
	if err != nil {
		return err
	}
	info, err := workload.Verify(path)
	if err != nil {
		return err
	}
	r, err := workload.Open(path)
	if err != nil {
		return err
	}
	c.Replay, c.ReplayPath, c.ReplaySHA256 = r, path, info.SHA256
	return nil
}

// WorkDir is spawn mode's working directory for a run or workload at out: work when
// given, else out's own beside it.
func WorkDir(out, work string) string { return cmp.Or(work, out+".work") }

// ErrNested: the run directory and the work directory lie one inside the other; the
// work directory is emptied before every run, so the run would be destroyed.
var ErrNested = errors.New("one inside the other (the work directory is emptied before every run)")

// CheckNesting refuses a run directory out and a work directory work one inside the
// other (ErrNested).
func CheckNesting(out, work string) error {
	out, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	if work, err = filepath.Abs(work); err != nil {
		return err
	}
	within := func(a, b string) bool { return a == b || strings.HasPrefix(a, b+string(filepath.Separator)) }
	if within(out, work) || within(work, out) {
		return ErrNested
	}
	return nil
}

// JVMOptionError is a writer JVM option warmstat refuses: not an option at all, or a
// heap size, which warmstat pins itself (-Xms = -Xmx) and records.
type JVMOptionError struct{ Option string }

func (e *JVMOptionError) Error() string {
	return fmt.Sprintf("%q: a JVM option (starting with -), not a heap size", e.Option)
}

// CheckWriterJVMOptions refuses the first option of opts the writer cannot be given
// (a *JVMOptionError).
func CheckWriterJVMOptions(opts []string) error {
	for _, o := range opts {
		if !strings.HasPrefix(o, "-") || strings.HasPrefix(o, "-Xm") || strings.Contains(o, "HeapSize") {
			return &JVMOptionError{Option: o}
		}
	}
	return nil
}

// ExtractSource is where an extraction reads: a pristine snapshot, by a reader warmstat
// starts (Spawn), or a running server's catalog (SourceAddr, SourceCatalog).
type ExtractSource struct {
	Spawn                     *SpawnConfig
	SourceAddr, SourceCatalog string
}

// ExtractFrom reads src into the workload file ec.Out (Extract, or SpawnExtract for a
// snapshot, whose work directory defaults to WorkDir's) and says, as a person names
// it, where the workload came from.
func ExtractFrom(ctx context.Context, src ExtractSource, ec ExtractConfig) (info *workload.Info, from string, err error) {
	if sc := src.Spawn; sc != nil {
		s := *sc
		s.WorkDir = WorkDir(ec.Out, s.WorkDir)
		if info, err = SpawnExtract(ctx, s, ec); err != nil {
			return nil, "", err
		}
		return info, s.Pristine + "/" + s.Catalog, nil
	}
	c, err := evita.Dial(ctx, src.SourceAddr, evita.Options{})
	if err != nil {
		return nil, "", fmt.Errorf("source %s: %w", src.SourceAddr, err)
	}
	defer c.Close()
	ec.Source, ec.SourceCatalog, ec.SourceMode = c, src.SourceCatalog, "attach"
	if info, err = Extract(ctx, ec); err != nil {
		return nil, "", err
	}
	return info, src.SourceAddr + " catalog " + src.SourceCatalog, nil
}

// LeanRuntime tunes Go's runtime for a process that measures servers on the same
// machine (a load, a series): its own CPU is taken from them. GOGC or GOMAXPROCS in
// the environment win.
func LeanRuntime() {
	if os.Getenv("GOGC") == "" {
		// the loader's live heap is one fetched batch; collecting at 5x instead of 2x
		// it costs a few MB and saves most of warmstat's own GC work during the load
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMAXPROCS") == "" {
		// the load is one sequence of calls: a second P only lets the scheduler spin
		// a thread looking for work whenever the loader waits for an answer, on the
		// cores the servers need
		runtime.GOMAXPROCS(1)
	}
}
