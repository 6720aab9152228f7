package method

import (
	"io"

	"github.com/warmstat/warmstat/loader"
)

// DefaultScale is the scale of the default catalog a series with no source of its own
// asks its question of: the smallest at which the release's measured effect is
// production's (docs/measuring.md, "the cheapest faithful scale").
const DefaultScale = 0.1

// Options are what a series is asked to do, as its caller gives them. Zero values are
// the defaults: no source (the default catalog), the faithful method.
type Options struct {
	// The source: a pristine snapshot (Pristine and Catalog), a workload file, or
	// neither (the built-in default catalog at DefaultScale, cached).
	Pristine, Catalog string
	// SnapshotCompress is a snapshot's storage.compress when it has no metadata of
	// warmstat's (a production export); nil otherwise.
	SnapshotCompress *bool
	Workload         string

	// Remote asks the older way: a remote writer (and a reader in every run unless
	// Replay). Without it every run's writer is the embedded one, replaying.
	Remote bool
	Replay bool
	// Duet: both builds' writers at once in every pair; Split pins each to half the CPUs.
	Duet, Split bool

	// Gates and Watch as given (none: the method's own).
	Gates, Watch []string

	// Heaps as given (nil: chosen), and the conditions recorded with every run.
	ServerHeap, ReaderHeap *int64
	Compress               *bool // storage.compress of the writer (nil: true)
	Cache, Record          *bool

	// Reading a source server (the older way, or the series' extraction).
	BatchSize, MaxPerCollection int
	Prefetch                    bool

	// The writer's JVM.
	WriterJVMOptions []string
	NoClassArchive   bool
	WriterWarmUp     int
	// CatalogLine writes the catalog for this evitaDB line ("2026.1") on both sides,
	// though neither build needs it; a side of that line sets it by itself.
	CatalogLine string
	// Profiler makes a fresh writer profiler for a run's work directory (nil: none);
	// ProfileCondition is its setting as the plan records it ("mode/interval").
	Profiler         func(workDir string) (loader.Profiler, error)
	ProfileCondition string

	// The sequential plan.
	MinRuns, MaxRuns, Warmup int
	ThresholdPct, AlphaPct   float64
	Unpaired, RerunOutliers  bool

	// Version is warmstat's own, recorded in every run's manifest.
	Version string
	// Log takes what the method says as it works (compiling a writer, extracting);
	// Progress the live progress lines of long work.
	Log, Progress io.Writer
}
