package bisect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/warmstat/warmstat/runfmt"
)

// Schema is bisect.json's schema.
const Schema = "warmstat.bisect/v1"

// File is a bisect's state file in its directory.
const File = "bisect.json"

// Plan is what a bisect was asked to do; running the same command again must give
// the same plan.
type Plan struct {
	Root         string `json:"root"`
	Good         string `json:"good"` // resolved: a branch that moves does not change the plan
	Bad          string `json:"bad"`
	BuildCommand string `json:"build_command"`
	JarPath      string `json:"jar_path"`
	Gate         string `json:"gate"`
	// Faster: the bisect looks for the commit that made publishing faster (a speed-up a
	// history found), not slower
	Faster bool `json:"faster,omitempty"`
	// Series is every probe's series plan apart from its two builds, rendered by the
	// caller (source, heaps, conditions, threshold, runs): a bisect cannot change how
	// it measures halfway.
	Series string `json:"series"`
}

// State is bisect.json.
type State struct {
	Schema  string           `json:"schema"`
	Plan    Plan             `json:"plan"`
	Started time.Time        `json:"started"`
	Good    Commit           `json:"good"`
	Commits []Commit         `json:"commits"` // after good, oldest first, bad last
	Builds  map[string]Build `json:"builds"`  // by commit
	Probes  []Probe          `json:"probes"`  // every finished series, in the order run
	Outcome *Record          `json:"outcome"`
}

// Probe is one finished series of b against a.
type Probe struct {
	Result
	Started   time.Time `json:"started"`
	Ended     time.Time `json:"ended"`
	MachineNs int64     `json:"machine_ns"` // the series' runs, wall-clock
}

// Record is how the bisect ended.
type Record struct {
	Kind     string    `json:"kind"`
	Culprits []Culprit `json:"culprits,omitempty"`
	Open     []string  `json:"open_range,omitempty"`
	Skipped  []Skip    `json:"skipped,omitempty"`
	Detail   string    `json:"detail,omitempty"`
}

// ErrPlanDiffers is a bisect directory holding another plan than the one asked for.
var ErrPlanDiffers = errors.New("the bisect was started with other arguments")

// Open reads dir's bisect, or starts one with plan, good and commits when there is
// none. Another plan in dir is refused, naming the field.
func Open(dir string, plan Plan, good Commit, commits []Commit, now time.Time) (*State, error) {
	s, err := Read(dir)
	if err != nil {
		return nil, err
	}
	if s == nil {
		s = &State{Schema: Schema, Plan: plan, Started: now.UTC(), Good: good, Commits: commits, Builds: map[string]Build{}}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		return s, s.Save(dir)
	}
	if d := differs(s.Plan, plan); d != "" {
		return nil, fmt.Errorf("%w (%s): use another directory", ErrPlanDiffers, d)
	}
	if s.Good.Hash != good.Hash || !reflect.DeepEqual(s.Commits, commits) {
		return nil, fmt.Errorf("%w (the commits of %s..%s are not those it bisects: a branch moved?): use another directory", ErrPlanDiffers, plan.Good, plan.Bad)
	}
	if s.Builds == nil {
		s.Builds = map[string]Build{}
	}
	return s, nil
}

// Read reads dir's bisect; (nil, nil) when there is none.
func Read(dir string) (*State, error) {
	var s State
	if found, err := runfmt.ReadJSONStrict(filepath.Join(dir, File), &s); !found || err != nil {
		return nil, err
	}
	if s.Schema != Schema {
		return nil, fmt.Errorf("%s: schema %q, this warmstat reads %q", filepath.Join(dir, File), s.Schema, Schema)
	}
	return &s, nil
}

// Save writes the state atomically.
func (s *State) Save(dir string) error {
	return runfmt.WriteJSONAtomic(filepath.Join(dir, File), s)
}

func differs(p, q Plan) string {
	a, b := reflect.ValueOf(p), reflect.ValueOf(q)
	for i := range a.NumField() {
		was, is := a.Field(i).Interface(), b.Field(i).Interface()
		if was == is {
			continue
		}
		name, _, _ := strings.Cut(a.Type().Field(i).Tag.Get("json"), ",")
		switch name {
		case "good", "bad":
			return fmt.Sprintf("%s: %.12s then, %.12s now; to continue it, give --%s %.12s", name, was, is, name, was)
		case "series":
			return "its series settings: " + settingsDiffer(was.(string), is.(string))
		default:
			return fmt.Sprintf("%s: %v then, %v now", name, was, is)
		}
	}
	return ""
}

// settingsDiffer names the settings of two rendered series plans (JSON objects) that
// differ, each with its two values.
func settingsDiffer(was, is string) string {
	var a, b map[string]any
	if json.Unmarshal([]byte(was), &a) != nil || json.Unmarshal([]byte(is), &b) != nil {
		return fmt.Sprintf("%s then, %s now", was, is)
	}
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var d []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		x, _ := json.Marshal(a[k])
		y, _ := json.Marshal(b[k])
		if string(x) != string(y) {
			d = append(d, fmt.Sprintf("%s %s then, %s now", k, x, y))
		}
	}
	return strings.Join(d, "; ")
}

// Probe is the finished series of b against a, if the bisect has one.
func (s *State) Probe(a, b string) (Probe, bool) {
	for _, p := range s.Probes {
		if p.A == a && p.B == b {
			return p, true
		}
	}
	return Probe{}, false
}

// Remembering is o answered from the state's finished probes where it can, every
// new answer recorded and saved: a resumed bisect asks the same questions and
// redoes no finished series. A skip is not recorded: a failed build is in the build
// cache, and runs that failed are in the probe's series.
func (s *State) Remembering(dir string, o Oracle, now func() time.Time) Oracle {
	return func(ctx context.Context, a, b string) (Result, error) {
		if p, ok := s.Probe(a, b); ok {
			return p.Result, nil
		}
		began := now()
		r, err := o(ctx, a, b)
		if err != nil {
			return r, err
		}
		s.Probes = append(s.Probes, Probe{Result: r, Started: began.UTC(), Ended: now().UTC(), MachineNs: now().Sub(began).Nanoseconds()})
		return r, s.Save(dir)
	}
}

// Finish records the outcome.
func (s *State) Finish(dir string, o *Outcome) error {
	rec := &Record{Kind: o.Kind, Culprits: o.Culprits, Detail: o.Detail}
	if o.Open[1] != "" {
		rec.Open = o.Open[:]
	}
	for _, k := range o.Skipped {
		rec.Skipped = append(rec.Skipped, *k)
	}
	s.Outcome = rec
	return s.Save(dir)
}

// ExpectedSeries is how many series a bisect of n commits expects: a confirmation and
// ⌈log₂ n⌉ probes.
func ExpectedSeries(n int) int { return 1 + int(math.Ceil(math.Log2(float64(max(n, 1))))) }

// Remaining is the time the series still expected would take at the mean machine time of
// those done so far (at least one more); false before the first is done.
func (s *State) Remaining(commits int) (time.Duration, bool) {
	if len(s.Probes) == 0 {
		return 0, false
	}
	var total int64
	for _, p := range s.Probes {
		total += p.MachineNs
	}
	left := max(ExpectedSeries(commits)-len(s.Probes), 1)
	return time.Duration(total/int64(len(s.Probes))) * time.Duration(left), true
}
