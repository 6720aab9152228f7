package analyze

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/warmstat/warmstat/runfmt"
)

// Group is the runs of one build under one set of conditions.
type Group struct {
	Name     string // "A" or "B"
	Path     string
	Runs     []*runfmt.Run
	Excluded []string // runs left out, with the reason (unverified runs by default)
	Included []string // notes about runs included despite a flag (unverified)
}

// Label is the group's build label (all runs share it once validated).
func (g *Group) Label() string {
	if len(g.Runs) == 0 {
		return ""
	}
	return g.Runs[0].Manifest.Build.Label
}

// InputError is bad input: a run that must never be used, or a path that holds no runs.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// LoadGroup opens path as one run directory, or as a directory of run directories
// (one build, repeated runs; ordered by start time, then name). A run whose
// verification failed (exit 1) is refused: it must never be used. Unverified runs
// (exit 2) are left out unless includeUnverified.
func LoadGroup(name, path string, includeUnverified bool) (*Group, error) {
	g := &Group{Name: name, Path: path}
	dirs, _, err := runfmt.RunDirs(path)
	if err != nil {
		return nil, &InputError{fmt.Sprintf("%s: %v", name, err)}
	}
	var runs []*runfmt.Run
	for _, d := range dirs {
		r, err := runfmt.Open(d)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	sort.SliceStable(runs, func(i, j int) bool {
		a, b := runs[i].Manifest.StartedAt, runs[j].Manifest.StartedAt
		if a != nil && b != nil && !a.Equal(*b) {
			return a.Before(*b)
		}
		return runs[i].Dir < runs[j].Dir
	})
	for _, r := range runs {
		m := r.Manifest
		switch {
		case m.ExitCode == 1:
			why := m.Verification.Status
			if m.Outcome.Status != runfmt.OutcomeComplete {
				why = m.Outcome.Status
			}
			return nil, &InputError{fmt.Sprintf("%s: run %s failed (%s, exit 1) and is never used; remove it from %s", name, r.Dir, why, path)}
		case m.ExitCode == 2 && !includeUnverified:
			g.Excluded = append(g.Excluded, fmt.Sprintf("%s (unverified, exit 2; --include-unverified to use it)", r.Dir))
			continue
		case m.ExitCode == 2:
			g.Included = append(g.Included, fmt.Sprintf("%s is UNVERIFIED (exit 2): completeness unproven", r.Dir))
		}
		g.Runs = append(g.Runs, r)
	}
	if len(g.Runs) == 0 {
		return nil, &InputError{fmt.Sprintf("%s: no usable runs in %s (%s)", name, path, strings.Join(g.Excluded, "; "))}
	}
	return g, nil
}

// Mismatch is one condition that differs between or within groups.
type Mismatch struct {
	Field string `json:"field"`
	A     string `json:"a"`
	B     string `json:"b"`
	// Within is "A" or "B" when the runs of one group disagree among themselves.
	Within string `json:"within,omitempty"`
}

func (m Mismatch) String() string {
	if m.Within != "" {
		return fmt.Sprintf("%s differs within %s: %s, %s", m.Field, m.Within, m.A, m.B)
	}
	return fmt.Sprintf("%s differs: A=%s, B=%s", m.Field, m.A, m.B)
}

// ContractField is one condition of the comparability contract.
type ContractField struct {
	Name string
	// Between: must also be equal between A and B (false for the server version,
	// which changes with the build under test).
	Between bool
	Value   func(*runfmt.Manifest) string
}

func heap(b *int64) string { return runfmt.FormatBytes(b) }

// BoolStr renders an optional flag: true, false or unknown.
func BoolStr(b *bool) string {
	if b == nil {
		return "unknown"
	}
	return fmt.Sprint(*b)
}

func intStr(v *int) string {
	if v == nil {
		return "unknown"
	}
	return fmt.Sprint(*v)
}

// Contract lists every recorded condition that changes a measurement. The build
// label is the treatment: expected to differ between groups, never within one.
var Contract = []ContractField{
	{"build", false, func(m *runfmt.Manifest) string { return m.Build.Label }},
	{"server-heap", true, func(m *runfmt.Manifest) string { return heap(m.Server.MaxHeapBytes) }},
	{"reader-heap", true, func(m *runfmt.Manifest) string { return heap(m.Reader.MaxHeapBytes) }},
	{"server-version", false, func(m *runfmt.Manifest) string { return OrUnknown(m.Server.Version) }},
	{"loader", true, func(m *runfmt.Manifest) string { return m.Loader.Name }},
	{"target-mode", true, func(m *runfmt.Manifest) string { return m.TargetMode }},
	{"storage-compress", true, func(m *runfmt.Manifest) string { return BoolStr(m.Conditions.StorageCompress) }},
	{"cache", true, func(m *runfmt.Manifest) string { return BoolStr(m.Conditions.CacheEnabled) }},
	{"traffic-recording", true, func(m *runfmt.Manifest) string { return BoolStr(m.Conditions.TrafficRecording) }},
	{"batch-size", true, func(m *runfmt.Manifest) string { return fmt.Sprint(m.Conditions.BatchSize) }},
	{"cap", true, func(m *runfmt.Manifest) string { return fmt.Sprint(m.Conditions.MaxPerCollection) }},
	{"collections", true, func(m *runfmt.Manifest) string {
		if len(m.Conditions.CollectionSubset) == 0 {
			return "all"
		}
		s := slices.Clone(m.Conditions.CollectionSubset)
		slices.Sort(s)
		return strings.Join(s, ",")
	}},
	{"prefetch", true, func(m *runfmt.Manifest) string { return fmt.Sprint(m.Conditions.Prefetch) }},
	{"dataset", true, func(m *runfmt.Manifest) string { return OrUnknown(m.Dataset.Fingerprint) }},
	{"cores", true, func(m *runfmt.Manifest) string { return intStr(m.Machine.Cores) }},
	{"memory-limit", true, func(m *runfmt.Manifest) string {
		if m.Machine.CgroupMemoryLimitBytes != nil {
			return heap(m.Machine.CgroupMemoryLimitBytes)
		}
		return heap(m.Machine.MemoryBytes)
	}},
}

// OrUnknown renders an empty string as "unknown".
func OrUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// ConditionValue renders one contract field of a manifest ("" for an unknown field name).
func ConditionValue(m *runfmt.Manifest, field string) string {
	for _, f := range Contract {
		if f.Name == field {
			return f.Value(m)
		}
	}
	return ""
}

// ContractFieldNames are the names --allow-mismatch accepts.
func ContractFieldNames() []string {
	var n []string
	for _, f := range Contract {
		n = append(n, f.Name)
	}
	return n
}

// runsOf describes which runs (1-based, in group order) carry each value:
// "23g (runs 1-3)".
func runsOf(vals []string) []string {
	var order []string
	idx := map[string][]int{}
	for i, v := range vals {
		if _, ok := idx[v]; !ok {
			order = append(order, v)
		}
		idx[v] = append(idx[v], i+1)
	}
	out := make([]string, len(order))
	for i, v := range order {
		out[i] = fmt.Sprintf("%s (%s)", v, ranges(idx[v]))
	}
	return out
}

func ranges(ns []int) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		if i == j {
			parts = append(parts, fmt.Sprint(ns[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", ns[i], ns[j]))
		}
		i = j + 1
	}
	word := "runs "
	if len(ns) == 1 {
		word = "run "
	}
	return word + strings.Join(parts, ",")
}

// CheckContract returns every field that differs within a group, or between the
// groups where the contract says it must not. Unknown on both sides counts as equal;
// unknown against known is a difference (nothing proves they match).
func CheckContract(a, b *Group) []Mismatch {
	var out []Mismatch
	for _, f := range Contract {
		va := values(a, f)
		vb := values(b, f)
		okA, okB := uniform(va), uniform(vb)
		if !okA {
			d := runsOf(va)
			out = append(out, Mismatch{Field: f.Name, A: d[0], B: strings.Join(d[1:], ", "), Within: "A"})
		}
		if !okB {
			d := runsOf(vb)
			out = append(out, Mismatch{Field: f.Name, A: d[0], B: strings.Join(d[1:], ", "), Within: "B"})
		}
		if f.Between && okA && okB && va[0] != vb[0] {
			out = append(out, Mismatch{Field: f.Name, A: runsOf(va)[0], B: runsOf(vb)[0]})
		}
	}
	return out
}

func values(g *Group, f ContractField) []string {
	v := make([]string, len(g.Runs))
	for i, r := range g.Runs {
		v[i] = f.Value(r.Manifest)
	}
	return v
}

func uniform(v []string) bool {
	for _, x := range v[1:] {
		if x != v[0] {
			return false
		}
	}
	return true
}
