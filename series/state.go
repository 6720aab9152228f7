// Package series runs an interleaved A/B series of loads and stops as soon as its
// answer is known. Runs come in ABBA order (A B, then B A, ...), optionally after
// warm-up runs kept out of the analysis; after every pair the gated metrics are
// analysed with the sequential interval of analyze.SequentialPlan, and the series ends
// when every gate is resolved (faster, slower or equivalent) or at the maximum. Every
// run is an ordinary run directory (DIR/A/run-N, DIR/B/run-N), so report, compare,
// table and plot work on a series unchanged; DIR/series.json holds the plan, the order,
// every run's health and the machine around it, and every look, and is rewritten
// (atomically) after each change, so that running the same command again continues a
// series that stopped. A run that did not finish, or failed, is moved to DIR/excluded
// with its reason and run again.
package series

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/runfmt"
)

// Schema is series.json's schema.
const Schema = "warmstat.series/v1"

// File is the series' state file in its directory.
const File = "series.json"

// Plan is what a series was asked to do. Running the same command again must give
// the same plan: a series cannot change course halfway.
type Plan struct {
	A            Build    `json:"a"`
	B            Build    `json:"b"`
	Pristine     string   `json:"pristine"`
	Catalog      string   `json:"catalog"`
	ServerHeap   int64    `json:"server_heap_bytes"`
	ReaderHeap   int64    `json:"reader_heap_bytes"`
	Conditions   string   `json:"conditions"` // the run conditions, rendered (compress, batch, prefetch, cap, profiler ...)
	MinRuns      int      `json:"min_runs"`
	MaxRuns      int      `json:"max_runs"`
	Warmup       int      `json:"warmup"`
	ThresholdPct float64  `json:"threshold_pct"`
	AlphaPct     float64  `json:"alpha_pct"`
	Gates        []string `json:"gates"`
	// Watch are metrics judged at every look and shown in the answer, not waited for
	// (analyze.SequentialPlan.Watch)
	Watch         []string `json:"watch,omitempty"`
	RerunOutliers bool     `json:"rerun_outliers"`
	// Replay: every run replays the series' workload file (extracted once, when the
	// series starts, from the pristine snapshot by side A's build): no reader server.
	Replay bool `json:"replay,omitempty"`
	// Workload is the workload file replayed when the series was given one (ab
	// --workload): only read, never extracted; "" when the series extracts its own.
	Workload string `json:"workload,omitempty"`
	// TargetMode "embedded": every run's writer is warmstat's embedded writer (a replay
	// series only); "" is remote.
	TargetMode string `json:"target_mode,omitempty"`
	// Unpaired analyses the two sides as independent groups (welch-t); by default a
	// series is analysed by its pairs (paired-t, analyze.SequentialPlan.Paired).
	Unpaired bool `json:"unpaired,omitempty"`
	// Pairs, when set, is a fixed-size series: exactly this many pairs (MinRuns =
	// MaxRuns = Pairs, one look at the end), as every machine of a fleet runs them so
	// that their series can be combined (analyze.CombineFleet) without machines that
	// stopped at different looks biasing the combined figure.
	Pairs int `json:"pairs,omitempty"`
	// Duet: every pair is one duet, both builds' runs at once in lock-step, each writer
	// on a CPU set of its own, the slots alternating pair by pair (Config.RunDuet).
	Duet bool `json:"duet,omitempty"`
	// CatalogLine: every run's catalog is written for this evitaDB line (runfmt.
	// Conditions.CatalogLine), set when a side is of the 2026.1 line; "" as the source
	// holds it.
	CatalogLine string `json:"catalog_line,omitempty"`
}

// Method is the interval the series is analysed with.
func (p Plan) Method() analyze.Method {
	if p.Unpaired {
		return analyze.Unpaired
	}
	return analyze.Paired
}

// Build is one side's server as named and as identified when the series started.
type Build struct {
	Spec     string `json:"spec"`     // as given (--a / --b)
	Label    string `json:"label"`    // the build label of its runs
	Identity string `json:"identity"` // version@commit and classpath digest: a changed build is refused
}

// String names the build for people: "2026.2.3 (label A-2026.2.3, 2026.2.3@a32cf68 classpath-sha256 822c…)".
func (b Build) String() string {
	return fmt.Sprintf("%s (label %s, %s)", b.Spec, b.Label, b.Identity)
}

// Run statuses.
const (
	Planned = "planned"
	Running = "running"
	Done    = "done"
	Failed  = "failed" // moved to excluded/, run again
	// Interrupted: stopped by the user (Ctrl-C) before it finished; moved to excluded/
	// and run again when the series resumes. Not a failure: it never stops a series.
	Interrupted = "interrupted"
	Replaced    = "replaced" // an outlier re-run on request, moved to replaced/
)

// Kinds of run.
const (
	Measured = "measured"
	Warmup   = "warmup"
)

// Entry is one run of the series, in the order run.
type Entry struct {
	Seq     int                `json:"seq"`
	Side    string             `json:"side"` // "A" or "B"
	Kind    string             `json:"kind"`
	Dir     string             `json:"dir"` // relative to the series directory
	Status  string             `json:"status"`
	Reason  string             `json:"reason,omitempty"`
	Started *time.Time         `json:"started,omitempty"`
	Ended   *time.Time         `json:"ended,omitempty"`
	Machine *Machine           `json:"machine,omitempty"`
	Health  *analyze.RunHealth `json:"health,omitempty"`
	Rerun   bool               `json:"rerun,omitempty"` // it replaces a run that failed or stood out
	// Slot and Partner (a duet series): the run's slot (1 or 2) and its partner run's seq
	Slot     int    `json:"slot,omitempty"`
	Partner  int    `json:"partner_seq,omitempty"`
	Excluded string `json:"moved_to,omitempty"`
}

// LookRecord is one interim analysis.
type LookRecord struct {
	At    time.Time     `json:"at"`
	Runs  int           `json:"runs_per_side"`
	Look  *analyze.Look `json:"look"`
	Error string        `json:"error,omitempty"` // a refusal or failure of the analysis
}

// Outcome is how the series ended (nil while it runs).
type Outcome struct {
	Reason   string             `json:"reason"` // "resolved", "max-runs", "fixed-size", "refused", "failed"
	Verdicts map[string]string  `json:"verdicts"`
	Runs     int                `json:"runs_per_side"`
	Saved    int                `json:"runs_saved_per_side"` // against MaxRuns
	Gates    []analyze.GateLook `json:"gates,omitempty"`
	Detail   string             `json:"detail,omitempty"`
}

// State is series.json.
type State struct {
	Schema    string       `json:"schema"`
	Plan      Plan         `json:"plan"`
	Started   time.Time    `json:"started"`
	Checksums []Checksum   `json:"pristine_checksums"` // at every start and end of an invocation
	Entries   []Entry      `json:"runs"`
	Looks     []LookRecord `json:"looks"`
	Outcome   *Outcome     `json:"outcome"`
	// Owed counts, per side, runs that failed or were replaced and are still to be run
	// again: the next measured run of that side is marked as the re-run.
	Owed map[string]int `json:"owed_reruns,omitempty"`
}

// Checksum is the pristine snapshot's digest at one moment.
type Checksum struct {
	At     time.Time `json:"at"`
	When   string    `json:"when"` // "start" or "end" of an invocation
	SHA256 string    `json:"sha256"`
}

// ErrPlanDiffers is a series directory holding another plan than the one asked for.
var ErrPlanDiffers = errors.New("the series was started with other arguments")

// planDiffers is ErrPlanDiffers with its whole message: which directory, which field.
type planDiffers string

func (e planDiffers) Error() string        { return string(e) }
func (e planDiffers) Is(target error) bool { return target == ErrPlanDiffers }

// Read reads the series in dir (its series.json); (nil, nil) when dir holds none.
func Read(dir string) (*State, error) { return load(dir) }

// load reads dir's state; (nil, nil) when there is none yet.
func load(dir string) (*State, error) {
	var s State
	if found, err := runfmt.ReadJSONStrict(filepath.Join(dir, File), &s); !found || err != nil {
		return nil, err
	}
	if s.Schema != Schema {
		return nil, fmt.Errorf("%s: schema %q, this warmstat reads %q", filepath.Join(dir, File), s.Schema, Schema)
	}
	return &s, nil
}

// save writes the state atomically.
func (s *State) save(dir string) error {
	return runfmt.WriteJSONAtomic(filepath.Join(dir, File), s)
}

// differs names the first plan field that differs, "" when none does.
func (p Plan) differs(q Plan) string {
	if p.Conditions != q.Conditions { // a long rendered line: name the settings that differ
		then, now := strings.Fields(p.Conditions), strings.Fields(q.Conditions)
		var d []string
		for _, t := range then {
			if !slices.Contains(now, t) {
				d = append(d, t+" then")
			}
		}
		for _, t := range now {
			if !slices.Contains(then, t) {
				d = append(d, t+" now")
			}
		}
		return "conditions: " + strings.Join(d, ", ")
	}
	a, b := reflect.ValueOf(p), reflect.ValueOf(q)
	for i := range a.NumField() {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Kind() == reflect.Slice && fa.Len() == 0 && fb.Len() == 0 {
			continue // none, as the state file reads it back (omitted) or as the flags give it (empty)
		}
		if !reflect.DeepEqual(fa.Interface(), fb.Interface()) {
			name, _, _ := strings.Cut(a.Type().Field(i).Tag.Get("json"), ",")
			return fmt.Sprintf("%s: %v then, %v now", name, a.Field(i).Interface(), b.Field(i).Interface())
		}
	}
	return ""
}

// Done counts the finished runs of a side and kind ("" counts every side, or kind): a
// run that failed, was stopped or replaced is not one, its re-run is.
func (s *State) Done(side, kind string) int {
	n := 0
	for _, e := range s.Entries {
		if (side == "" || e.Side == side) && (kind == "" || e.Kind == kind) && e.Status == Done {
			n++
		}
	}
	return n
}

// Pairs are the series' pairs: the k-th finished measured run of A with the k-th of
// B, in the order they ran — in an ABBA series the two runs of each A B or B A
// (a run that failed and ran again later pairs with its slot's partner). dir is the
// series directory; the pairs name run directories under it.
func (s *State) Pairs(dir string) []analyze.Pair {
	var a, b []Entry
	for _, e := range s.Entries {
		if e.Kind != Measured || e.Status != Done {
			continue
		}
		if e.Side == "A" {
			a = append(a, e)
		} else {
			b = append(b, e)
		}
	}
	var out []analyze.Pair
	for k := range min(len(a), len(b)) {
		first := "A"
		if b[k].Seq < a[k].Seq {
			first = "B"
		}
		out = append(out, analyze.Pair{A: filepath.Join(dir, a[k].Dir), B: filepath.Join(dir, b[k].Dir), First: first})
	}
	return out
}
