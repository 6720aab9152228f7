package profile

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/warmstat/warmstat/runfmt"
)

// ErrNotProfiled: a run's writer was not profiled.
var ErrNotProfiled = errors.New("was not profiled")

// Refusal is a profile comparison warmstat will not make: samples of different
// profilers, events or intervals do not measure the same thing.
type Refusal struct{ Msg string }

func (e *Refusal) Error() string { return "refused: " + e.Msg }

// Run is one profiled run: its manifest and each phase's profile.
type Run struct {
	Dir      string
	Manifest *runfmt.Manifest
	Phases   map[string]*profile.Profile
	// Digests are each phase's pprof file's SHA-256: the same samples are the same run,
	// whatever directory it is given as and whatever its manifest was edited to say.
	Digests map[string]string
}

// OpenRun reads a run's manifest and the pprof profile of each of its phases.
func OpenRun(dir string) (*Run, error) {
	m, err := runfmt.ReadManifest(filepath.Join(dir, runfmt.ManifestFile))
	if err != nil {
		return nil, err
	}
	w := m.WriterProfile
	if w == nil {
		return nil, fmt.Errorf("run %s: its writer %w", dir, ErrNotProfiled)
	}
	if len(w.Phases) == 0 {
		return nil, fmt.Errorf("run %s: its writer profile has no phases: %s", dir, w.Error)
	}
	r := &Run{Dir: dir, Manifest: m, Phases: map[string]*profile.Profile{}, Digests: map[string]string{}}
	for _, ph := range w.Phases {
		p, digest, err := readPprof(filepath.Join(dir, filepath.FromSlash(ph.Pprof)))
		if err != nil {
			return nil, err
		}
		if len(p.SampleType) == 0 {
			return nil, fmt.Errorf("%s: no sample types", filepath.Join(dir, ph.Pprof))
		}
		if err := samplesAsRecorded(p, ph.Name, w.Mode); err != nil {
			return nil, fmt.Errorf("%s: %v", filepath.Join(dir, ph.Pprof), err)
		}
		r.Phases[ph.Name] = p
		r.Digests[ph.Name] = digest
	}
	return r, nil
}

// samplesAsRecorded refuses a phase's profile whose own labels contradict the manifest:
// another phase's file, or another event's samples (a cpu share computed from bytes
// allocated would be a silently wrong number). warmstat writes both labels; a profile
// made otherwise that carries none is taken as the manifest says.
func samplesAsRecorded(p *profile.Profile, phase, mode string) error {
	for _, c := range p.Comments {
		if got, ok := strings.CutPrefix(c, "phase: "); ok && got != phase {
			return fmt.Errorf("the manifest's %s phase, but the profile says it is of phase %s", phase, got)
		}
	}
	if want := kindOf(mode).value; p.SampleType[len(p.SampleType)-1].Type != want {
		return fmt.Errorf("a %s profile should hold %s samples, but it holds %s", mode, want, p.SampleType[len(p.SampleType)-1].Type)
	}
	// a sample counts time, bytes or occurrences: a negative one is a damaged file, and
	// would make shares that need not lie between 0 and 100 %
	for i, s := range p.Sample {
		for j, v := range s.Value {
			if v < 0 {
				return fmt.Errorf("sample %d holds a negative %s (%d): not a profile as recorded", i+1, p.SampleType[j].Type, v)
			}
		}
	}
	return nil
}

// readPprof parses a pprof file and returns its bytes' SHA-256, hashed as they are read.
func readPprof(path string) (*profile.Profile, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	h := sha256.New()
	p, err := profile.Parse(io.TeeReader(f, h))
	if err != nil {
		return nil, "", fmt.Errorf("%s: not a pprof profile: %v", path, err)
	}
	return p, hex.EncodeToString(h.Sum(nil)), nil
}

// Frame is one function's share of a phase: Self where it was the leaf (running its
// own code), Total where it was anywhere on the stack (itself and what it called).
type Frame struct {
	Name     string  `json:"name"`
	Self     int64   `json:"self"`
	Total    int64   `json:"total"`
	SelfPct  float64 `json:"self_pct"`
	TotalPct float64 `json:"total_pct"`
}

// PhaseTop is the hottest frames of one phase.
type PhaseTop struct {
	Phase   string  `json:"phase"`
	Value   string  `json:"value"` // what is summed: cpu, wall, alloc_space, delay
	Unit    string  `json:"unit"`  // nanoseconds or bytes
	Samples int64   `json:"samples"`
	Total   int64   `json:"total"`
	BySelf  []Frame `json:"by_self"`
	ByTotal []Frame `json:"by_total"`
}

// Top is a run's hottest frames, by phase.
type Top struct {
	Run     string     `json:"run"`
	Build   string     `json:"build"`
	Profile string     `json:"profile"` // the profiler as a condition
	Error   string     `json:"error,omitempty"`
	Phases  []PhaseTop `json:"phases"`
}

// frameSums are a profile's per-function self and total values.
type frameSums struct {
	self, total  map[string]int64
	all, samples int64
	value, unit  string
}

// sums folds a profile's samples by function, on its last sample type (the value).
func sums(p *profile.Profile) frameSums {
	vi := len(p.SampleType) - 1
	s := frameSums{self: map[string]int64{}, total: map[string]int64{}, value: p.SampleType[vi].Type, unit: p.SampleType[vi].Unit}
	seen := map[string]bool{}
	names := map[*profile.Function]string{} // normalised once per function
	for _, smp := range p.Sample {
		v := smp.Value[vi]
		s.all += v
		if len(smp.Value) > 1 {
			s.samples += smp.Value[0]
		}
		clear(seen)
		for i, loc := range smp.Location {
			for j, ln := range loc.Line {
				name := "?"
				if ln.Function != nil {
					var ok bool
					if name, ok = names[ln.Function]; !ok {
						name = normalizeName(ln.Function.Name)
						names[ln.Function] = name
					}
				}
				if i == 0 && j == 0 {
					s.self[name] += v
				}
				if !seen[name] { // a recursive frame counts once per sample
					seen[name] = true
					s.total[name] += v
				}
			}
		}
	}
	return s
}

// TopFrames are the n hottest frames of each phase of the run in dir, by self and by
// total value.
func TopFrames(dir string, n int) (*Top, error) {
	if n <= 0 {
		return nil, &OptionError{"Top", fmt.Sprintf("top %d: must be positive", n)}
	}
	r, err := OpenRun(dir)
	if err != nil {
		return nil, err
	}
	w := r.Manifest.WriterProfile
	t := &Top{Run: dir, Build: r.Manifest.Build.Label, Profile: w.Describe(), Error: w.Error}
	for _, ph := range w.Phases {
		s := sums(r.Phases[ph.Name])
		pt := PhaseTop{Phase: ph.Name, Value: s.value, Unit: s.unit, Samples: s.samples, Total: s.all}
		pt.BySelf = topBy(s, s.self, n)
		pt.ByTotal = topBy(s, s.total, n)
		t.Phases = append(t.Phases, pt)
	}
	return t, nil
}

func topBy(s frameSums, key map[string]int64, n int) []Frame {
	var fs []Frame
	for name, v := range key {
		if v == 0 {
			continue
		}
		fs = append(fs, Frame{Name: name, Self: s.self[name], Total: s.total[name], SelfPct: pct(s.self[name], s.all), TotalPct: pct(s.total[name], s.all)})
	}
	slices.SortFunc(fs, func(a, b Frame) int {
		return cmp.Or(cmp.Compare(key[b.Name], key[a.Name]), strings.Compare(a.Name, b.Name))
	})
	return fs[:min(n, len(fs))]
}

func pct(v, of int64) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(v) / float64(of)
}

// Group is the profiled runs of one build.
type Group struct {
	Path     string   `json:"path"`
	Build    string   `json:"build"`
	Runs     []string `json:"runs"`
	Entities int64    `json:"entities"` // upserts, over all its runs
	runs     []*Run
}

// openGroup reads path as one run or a directory of runs. Failed runs are refused, as
// compare refuses them: their profile covers a load that did not happen as measured.
func openGroup(path string) (*Group, error) {
	dirs, _, err := runfmt.RunDirs(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	g := &Group{Path: path}
	for _, d := range dirs {
		r, err := OpenRun(d)
		if err != nil {
			return nil, err
		}
		if r.Manifest.ExitCode == 1 {
			return nil, fmt.Errorf("run %s failed (exit 1) and is never used; remove it from %s", d, path)
		}
		if g.Build == "" {
			g.Build = r.Manifest.Build.Label
		} else if g.Build != r.Manifest.Build.Label {
			return nil, &Refusal{fmt.Sprintf("%s mixes builds %s and %s", path, g.Build, r.Manifest.Build.Label)}
		}
		g.runs = append(g.runs, r)
		g.Runs = append(g.Runs, d)
		g.Entities += r.Manifest.Entities
	}
	if len(g.runs) == 0 {
		return nil, fmt.Errorf("%s: no runs", path)
	}
	if g.Entities == 0 {
		return nil, fmt.Errorf("%s: its runs upserted no entity, nothing to normalise by", path)
	}
	return g, nil
}

// DiffRow is one frame's value per upsert in A and B, and its share of the change.
type DiffRow struct {
	Name  string  `json:"name"`
	A     float64 `json:"a"` // per upsert, in the phase's unit
	B     float64 `json:"b"`
	Delta float64 `json:"delta"`
	// SharePct is Delta as a share of the phase's whole change (signed: a frame that
	// shrank while the whole grew has a negative share); null when the whole did not change.
	SharePct *float64 `json:"share_pct"`
}

// PhaseDiff is one phase's change between the groups.
type PhaseDiff struct {
	Phase    string    `json:"phase"`
	Value    string    `json:"value"`
	Unit     string    `json:"unit"`
	A        float64   `json:"a"` // whole phase per upsert
	B        float64   `json:"b"`
	Delta    float64   `json:"delta"`
	DeltaPct *float64  `json:"delta_pct"`
	BySelf   []DiffRow `json:"by_self"`  // self values: they add up to the whole change
	ByTotal  []DiffRow `json:"by_total"` // total values: overlap (a caller holds its callees' change)
}

// Diff is which frames grew or shrank between two builds' profiles.
type Diff struct {
	A       *Group      `json:"a"`
	B       *Group      `json:"b"`
	Profile string      `json:"profile"`
	Phases  []PhaseDiff `json:"phases"`
}

// DiffGroups compares the profiles of groups a and b (each a run or a directory of
// runs), phase by phase. Values are normalised per upsert: a group's frame value is
// the sum over its runs divided by the upserts over its runs, so runs and groups of
// different length compare. goLive is normalised by the same count (its work grows
// with the catalog). The n largest changes are listed, by self and by total value.
func DiffGroups(a, b string, n int) (*Diff, error) {
	if n <= 0 {
		return nil, &OptionError{"Top", fmt.Sprintf("top %d: must be positive", n)}
	}
	ga, err := openGroup(a)
	if err != nil {
		return nil, err
	}
	gb, err := openGroup(b)
	if err != nil {
		return nil, err
	}
	want := ga.runs[0].Manifest.WriterProfile.Describe()
	for _, g := range []*Group{ga, gb} {
		for _, r := range g.runs {
			if got := r.Manifest.WriterProfile.Describe(); got != want {
				return nil, &Refusal{fmt.Sprintf("profiles differ: %s was profiled with %s, %s with %s", ga.runs[0].Dir, want, r.Dir, got)}
			}
		}
	}
	d := &Diff{A: ga, B: gb, Profile: want}
	for _, phase := range []string{runfmt.PhaseLoad, runfmt.PhaseGoLive} {
		sa, okA := groupSums(ga, phase)
		sb, okB := groupSums(gb, phase)
		if !okA || !okB {
			continue // a phase not profiled in every run is not compared
		}
		d.Phases = append(d.Phases, phaseDiff(phase, sa, sb, float64(ga.Entities), float64(gb.Entities), n))
	}
	if len(d.Phases) == 0 {
		return nil, fmt.Errorf("no phase was profiled in every run of %s and %s", a, b)
	}
	return d, nil
}

// groupSums adds a phase's frame sums over a group's runs.
func groupSums(g *Group, phase string) (frameSums, bool) {
	out := frameSums{self: map[string]int64{}, total: map[string]int64{}}
	for _, r := range g.runs {
		p, ok := r.Phases[phase]
		if !ok {
			return out, false
		}
		s := sums(p)
		out.value, out.unit = s.value, s.unit
		out.all += s.all
		out.samples += s.samples
		for k, v := range s.self {
			out.self[k] += v
		}
		for k, v := range s.total {
			out.total[k] += v
		}
	}
	return out, true
}

func phaseDiff(phase string, a, b frameSums, na, nb float64, n int) PhaseDiff {
	pd := PhaseDiff{Phase: phase, Value: a.value, Unit: a.unit, A: float64(a.all) / na, B: float64(b.all) / nb}
	pd.Delta = pd.B - pd.A
	if pd.A > 0 {
		v := 100 * pd.Delta / pd.A
		pd.DeltaPct = &v
	}
	rows := func(ka, kb map[string]int64) []DiffRow {
		var out []DiffRow
		for _, name := range union(ka, kb) {
			r := DiffRow{Name: name, A: float64(ka[name]) / na, B: float64(kb[name]) / nb}
			r.Delta = r.B - r.A
			if pd.Delta != 0 {
				s := 100 * r.Delta / pd.Delta
				r.SharePct = &s
			}
			out = append(out, r)
		}
		slices.SortFunc(out, func(x, y DiffRow) int {
			return cmp.Or(cmp.Compare(math.Abs(y.Delta), math.Abs(x.Delta)), strings.Compare(x.Name, y.Name))
		})
		return out[:min(n, len(out))]
	}
	pd.BySelf = rows(a.self, b.self)
	pd.ByTotal = rows(a.total, b.total)
	return pd
}

func union(a, b map[string]int64) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}
