package analyze

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/warmstat/warmstat/runfmt"
)

// Group is the runs of one build under one set of conditions.
type Group struct {
	Name     string // "A" or "B" in a comparison
	Path     string
	Build    string // the build label of its runs (a comparison refuses a mix)
	Runs     []*runfmt.Run
	Excluded []RunNote // runs left out of the whole group, with the reason
	Included []RunNote // runs used although they carry a warning (unverified)
}

// RunNote is a run left out (of a group, or of some rows only) or included with a
// caveat, and why.
type RunNote struct {
	Group  string   `json:"group,omitempty"` // "A" or "B" in a comparison
	Run    string   `json:"run"`             // its directory
	Rows   []string `json:"rows,omitempty"`  // COLLECTION/METRIC it is left out of; empty = all
	Reason string   `json:"reason"`
}

// LoadOptions say which runs a group takes. A failed run (exit 1) is an error unless
// IncludeFailed; an unverified run (exit 2) is left out (and listed) unless
// IncludeUnverified.
type LoadOptions struct {
	IncludeUnverified bool
	IncludeFailed     bool
}

// inputError is input that must not be used: a failed run, a path without runs.
type inputError struct{ msg string }

func (e *inputError) Error() string { return e.msg }

// LoadGroup opens path as one run directory, or as a directory of run directories
// (one build, repeated runs; ordered by start time, then name). A folder that looks
// like a run but has no manifest (a killed load) is listed in Excluded. A run that
// appears twice (a copied directory) is a *Refusal.
func LoadGroup(name, path string, o LoadOptions) (*Group, error) {
	g := &Group{Name: name, Path: path}
	dirs, incomplete, err := runfmt.RunDirs(path)
	if err != nil {
		return nil, &inputError{fmt.Sprintf("%s: %v", name, err)}
	}
	for _, in := range incomplete {
		g.Excluded = append(g.Excluded, RunNote{Group: name, Run: in.Dir, Reason: in.Reason})
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
		case m.ExitCode == 1 && !o.IncludeFailed:
			why := m.Verification.Status
			if m.Outcome.Status != runfmt.OutcomeComplete {
				why = m.Outcome.Status
			}
			return nil, &inputError{fmt.Sprintf("%s: run %s failed (%s, exit 1) and is never used; remove it from %s", name, r.Dir, why, path)}
		case m.ExitCode == 2 && !o.IncludeUnverified:
			g.Excluded = append(g.Excluded, RunNote{Group: name, Run: r.Dir, Reason: "unverified (exit 2): target counts unknown"})
			continue
		case m.ExitCode == 2:
			g.Included = append(g.Included, RunNote{Group: name, Run: r.Dir, Reason: "UNVERIFIED (exit 2): completeness unproven"})
		}
		g.Runs = append(g.Runs, r)
	}
	if len(g.Runs) == 0 {
		var why []string
		for _, e := range g.Excluded {
			why = append(why, e.Run+" "+e.Reason)
		}
		return nil, &inputError{fmt.Sprintf("%s: no usable runs in %s (%s)", name, path, strings.Join(why, "; "))}
	}
	g.Build = g.Runs[0].Manifest.Build.Label
	if d := duplicates(g); len(d) > 0 {
		return nil, &Refusal{Duplicates: d}
	}
	return g, nil
}

// Duplicate is one run found more than once: a directory copied under another name
// is not another independent run.
type Duplicate struct {
	RunID string   `json:"run_id"`
	Runs  []string `json:"runs"` // "A: dir" for each place it appears
	// SameDirectory: every place is one directory, given more than once (not a copy).
	SameDirectory bool `json:"same_directory"`
}

// identity is what makes a run that run: every clock it recorded, to the nanosecond,
// and when it started. Two loads never agree on all of them; a copy always does,
// whatever its run_id and directory name.
func identity(m *runfmt.Manifest) string {
	h := sha256.New()
	t := m.Timings
	fmt.Fprintf(h, "%d %d %d %d %d\n", m.Entities, t.LoadWallNs, t.UpsertNs, t.SourceReadNs, t.ResolutionNs)
	if m.StartedAt != nil {
		fmt.Fprintln(h, m.StartedAt.UnixNano())
	}
	if m.GoLive.Ns != nil {
		fmt.Fprintln(h, m.GoLive.Status, *m.GoLive.Ns)
	}
	for _, c := range m.Collections {
		fmt.Fprintf(h, "%s %d %d %d %d\n", c.Name, c.Entities, c.WallNs, c.ReadNs, c.UpsertNs)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// RefuseDuplicates is a *Refusal when a run appears more than once across the groups
// (the same directory given twice, a copy, or a run also inside a group given beside
// it): one run is not two rows of a table, nor two curves of a plot.
func RefuseDuplicates(groups ...*Group) error {
	if d := duplicates(groups...); len(d) > 0 {
		return &Refusal{Duplicates: d}
	}
	return nil
}

// duplicates finds runs that appear more than once across groups.
func duplicates(groups ...*Group) []Duplicate {
	seen := map[string]*Duplicate{}
	dirs := map[string]map[string]bool{} // by identity: the directories it was found in
	var order []string
	for _, g := range groups {
		for _, r := range g.Runs {
			id := identity(r.Manifest)
			d, ok := seen[id]
			if !ok {
				d = &Duplicate{RunID: r.Manifest.RunID}
				seen[id], dirs[id] = d, map[string]bool{}
				order = append(order, id)
			}
			d.Runs = append(d.Runs, g.Name+": "+r.Dir)
			dirs[id][realDir(r.Dir)] = true
		}
	}
	var out []Duplicate
	for _, id := range order {
		if d := seen[id]; len(d.Runs) > 1 {
			d.SameDirectory = len(dirs[id]) == 1
			out = append(out, *d)
		}
	}
	return out
}

// realDir is a directory as the file system knows it: absolute, links resolved.
func realDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return dir
}

// Mismatch is one condition that differs between the groups, or within one.
type Mismatch struct {
	Field string
	// Within is "A" or "B" when the runs of one group disagree among themselves;
	// then that group's Settings are A (or B) and the other side is empty.
	Within string
	A, B   []Setting
	// Detail says what the difference changes in what is timed, where that is known.
	Detail string
}

// Setting is one value of a condition and the runs (1-based, in group order) that
// carry it.
type Setting struct {
	Value string
	Runs  []int
}

// Refusal is a comparison warmstat will not make: conditions that change the
// measurement differ, or a run is counted twice.
type Refusal struct {
	Mismatches []Mismatch
	Duplicates []Duplicate
}

func (r *Refusal) Error() string {
	var parts []string
	for _, m := range r.Mismatches {
		parts = append(parts, m.Field+" differs")
	}
	for _, d := range r.Duplicates {
		parts = append(parts, "run "+d.RunID+" counted "+fmt.Sprint(len(d.Runs))+" times")
	}
	return "refused: " + strings.Join(parts, ", ")
}

// contractField is one condition of the comparability contract.
type contractField struct {
	name string
	// between: must also be equal between A and B (false for the build and the server
	// version, which change with the build under test).
	between bool
	value   func(*runfmt.Manifest) string
}

func optional[T any](p *T) string {
	if p == nil {
		return "unknown"
	}
	return fmt.Sprint(*p)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// contract lists every recorded condition that changes a measurement. The build
// label is the treatment: expected to differ between groups, never within one.
var contract = []contractField{
	{"build", false, func(m *runfmt.Manifest) string { return m.Build.Label }},
	{"server-heap", true, func(m *runfmt.Manifest) string { return runfmt.FormatBytesExact(m.Server.MaxHeapBytes) }},
	{"reader-heap", true, func(m *runfmt.Manifest) string { return noReader(m, runfmt.FormatBytesExact(m.Reader.MaxHeapBytes)) }},
	{"server-version", false, func(m *runfmt.Manifest) string { return orUnknown(string(m.Server.Version)) }},
	{"server-build", false, func(m *runfmt.Manifest) string { return serverBuild(m.Server.Build) }},
	{"writer-jvm", true, func(m *runfmt.Manifest) string { return jvm(m.Server.JVM) }},
	{"writer-gc", true, func(m *runfmt.Manifest) string { return gcName(m.Server.JVM) }},
	{"reader-jvm", true, func(m *runfmt.Manifest) string { return noReader(m, jvm(m.Reader.JVM)) }},
	{"reader-gc", true, func(m *runfmt.Manifest) string { return noReader(m, gcName(m.Reader.JVM)) }},
	// the loader, with warmstat's own Go runtime where recorded: how many threads it may
	// spin beside the servers, how often it collects
	{"loader", true, func(m *runfmt.Manifest) string {
		if m.Loader.GOMAXPROCS == nil || m.Loader.GOGC == nil {
			return m.Loader.Name
		}
		return fmt.Sprintf("%s (GOMAXPROCS=%d GOGC=%d)", m.Loader.Name, *m.Loader.GOMAXPROCS, *m.Loader.GOGC)
	}},
	{"target-mode", true, func(m *runfmt.Manifest) string { return m.TargetMode }},
	// a replayed run reads no source server during the load: its clocks are not a live run's
	{"source-mode", true, func(m *runfmt.Manifest) string { return m.SourceMode() }},
	{"storage-compress", true, func(m *runfmt.Manifest) string { return optional(m.Conditions.StorageCompress) }},
	{"cache", true, func(m *runfmt.Manifest) string { return optional(m.Conditions.CacheEnabled) }},
	{"traffic-recording", true, func(m *runfmt.Manifest) string { return optional(m.Conditions.TrafficRecording) }},
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
	// the options given to the writer, and those its JVM took from the environment
	// (JDK_JAVA_OPTIONS=...): a shell's variable changes the JVM as much as a flag does
	{"writer-jvm-options", true, func(m *runfmt.Manifest) string {
		o := slices.Clone(m.Conditions.WriterJVMOptions)
		if m.Server.JVM != nil {
			o = append(o, m.Server.JVM.EnvOptions...)
		}
		if len(o) == 0 {
			return "none"
		}
		return strings.Join(o, " ")
	}},
	// a warm writer runs compiled code where a fresh one also compiles it: not comparable
	{"writer-warm-up", true, func(m *runfmt.Manifest) string {
		if m.Conditions.WarmUpLoads == 1 {
			return "1 load"
		}
		return fmt.Sprintf("%d loads", m.Conditions.WarmUpLoads)
	}},
	{"dataset", true, func(m *runfmt.Manifest) string { return orUnknown(m.Dataset.Fingerprint) }},
	// the catalog written for evitaDB 2026.1 lacks what that line lacks: another workload
	{"catalog-line", true, func(m *runfmt.Manifest) string {
		if m.Conditions.CatalogLine == "" {
			return "as the source holds it"
		}
		return "written for " + m.Conditions.CatalogLine
	}},
	{"cores", true, func(m *runfmt.Manifest) string { return optional(m.Machine.Cores) }},
	{"cpu", true, func(m *runfmt.Manifest) string { return orUnknown(m.Machine.CPUModel) }},
	{"memory-limit", true, func(m *runfmt.Manifest) string {
		if m.Machine.CgroupMemoryLimitBytes != nil {
			return runfmt.FormatBytesExact(m.Machine.CgroupMemoryLimitBytes)
		}
		return runfmt.FormatBytesExact(m.Machine.MemoryBytes)
	}},
	// a profiler costs the writer time: profiled runs compare only with runs profiled
	// the same way (profiler, mode, engine, interval); "none" when unprofiled
	{"writer-profile", true, func(m *runfmt.Manifest) string { return m.WriterProfile.Describe() }},
	// a duet's writer shares the machine with its partner's, on half its CPUs: its
	// figures are a duet's, not comparable with a run made alone (its slot is not a
	// condition: a series alternates it and analyses it as a factor)
	{"duet", true, func(m *runfmt.Manifest) string {
		if m.Duet == nil {
			return "no (alone)"
		}
		// how the writers were placed, not how many CPUs each had: that follows from the
		// machine, which a fleet's machines may differ in (cores)
		if m.Duet.CPUs == "" {
			return "yes (writers sharing the CPUs)"
		}
		return "yes (writers pinned apart)"
	}},
}

// noReader is a reader's condition, "none" for a replayed run: it had no reader.
func noReader(m *runfmt.Manifest, v string) string {
	if m.SourceMode() == runfmt.SourceReplay {
		return "none (replay)"
	}
	return v
}

// serverBuild is the version and commit the server's own jars name.
func serverBuild(b *runfmt.ServerBuild) string {
	if b == nil || b.Version == "" {
		return "unknown"
	}
	if b.BuildCommit == "" {
		return b.Version
	}
	return b.Version + "@" + b.BuildCommit
}

func jvm(j *runfmt.JVM) string {
	if j == nil {
		return "unknown"
	}
	return j.Vendor + " " + j.Version
}

func gcName(j *runfmt.JVM) string {
	if j == nil {
		return "unknown"
	}
	return j.GC
}

// ContractFields names the conditions of the comparability contract, in the order
// refusals list them; the first, "build", may differ between groups but never within
// one, and cannot be allowed to.
func ContractFields() []string {
	n := make([]string, len(contract))
	for i, f := range contract {
		n[i] = f.name
	}
	return n
}

// ConditionValue is a run's value of one contract field as the contract compares it
// ("23g", "true", "unknown"; "" for a name that is not a field).
func ConditionValue(m *runfmt.Manifest, field string) string {
	for _, f := range contract {
		if f.name == field {
			return f.value(m)
		}
	}
	return ""
}

// settings groups a group's values with the runs that carry them, in order of first
// appearance.
func settings(vals []string) []Setting {
	var out []Setting
	for i, v := range vals {
		k := slices.IndexFunc(out, func(s Setting) bool { return s.Value == v })
		if k < 0 {
			out = append(out, Setting{Value: v})
			k = len(out) - 1
		}
		out[k].Runs = append(out[k].Runs, i+1)
	}
	return out
}

// checkContract returns every field that differs within a group, or between the
// groups where the contract says it must not. Unknown on both sides counts as equal;
// unknown against known is a difference (nothing proves they match).
func checkContract(a, b *Group) []Mismatch {
	var out []Mismatch
	for _, f := range contract {
		sa, sb := settings(values(a, f)), settings(values(b, f))
		if len(sa) > 1 {
			out = append(out, Mismatch{Field: f.name, Within: a.Name, A: sa})
		}
		if len(sb) > 1 {
			out = append(out, Mismatch{Field: f.name, Within: b.Name, B: sb})
		}
		if f.between && len(sa) == 1 && len(sb) == 1 && sa[0].Value != sb[0].Value {
			out = append(out, Mismatch{Field: f.name, A: sa, B: sb, Detail: detail(f.name, sa[0].Value, sb[0].Value)})
		}
	}
	return out
}

func values(g *Group, f contractField) []string {
	v := make([]string, len(g.Runs))
	for i, r := range g.Runs {
		v[i] = f.value(r.Manifest)
	}
	return v
}

// detail says what a difference changes in what is timed, where that is known.
func detail(field, a, b string) string {
	if field == "target-mode" {
		return "remote and embedded runs of one build (the same build label) are compared as the transport's cost; " +
			"runs of different builds in different target modes are not comparable"
	}
	if field == "duet" && strings.HasPrefix(a, "yes") && strings.HasPrefix(b, "yes") {
		return "duets whose writers were pinned apart and duets whose writers shared the CPUs (--duet-placement) run on different machines, in effect: compare duets placed alike"
	}
	if field == "duet" {
		return "a duet's run shares the machine with its partner's (ab --duet) and a run made alone has it to itself: " +
			"compare duet runs with duet runs and sequential runs with sequential runs"
	}
	if field == "writer-profile" {
		return "a profiler samples the writer while it works, and its cost is in every figure of a profiled run; " +
			"compare profiled runs only with runs profiled the same way"
	}
	if field == "loader" && a != b && slices.Contains([]string{a, b}, runfmt.LoaderJavaHarness) && slices.Contains([]string{a, b}, runfmt.LoaderWarmstat) {
		return "the loaders time different things: the Java harness's upsert clock runs around upsertEntity(builder), " +
			"which builds the entity's mutation inside the timed call (about 15 µs per Voucher, 270 µs per Product), " +
			"while warmstat builds the mutation before its clock starts and times the gRPC call alone; " +
			"every upsert latency, the upsert sum, ingest and the load wall-clock differ by that work, not by the build"
	}
	return ""
}

// LineFields are the contract fields that must agree between the groups of a
// comparison — every condition but the build itself: what the points of one history
// line share.
func LineFields() []string {
	var out []string
	for _, f := range contract {
		if f.between {
			out = append(out, f.name)
		}
	}
	return out
}
