package profile

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/warmstat/warmstat/runfmt"
)

// DefaultWithin is the factor a main entry's share may differ from the reference's
// and still count as faithful.
const DefaultWithin = 1.5

// Fidelity is a workload's writer profile held against a reference profile: for each
// reference entry, the run's share of the same samples beside the reference's.
//
// "Write-path CPU" (or allocation) is every sample of the writer JVM in the load
// window — all its threads, the collector's and the kernel's on its behalf — as the
// published production shares are of the writer JVM's samples, but for the JIT
// compiler's: a production load runs for a quarter of an hour, where the compiler's
// share is negligible, while a small load after one warm-up still compiles for a fifth
// of its CPU, which would dilute every share by the run's length rather than by its
// workload. The compiler's share is reported apart. A remote run's writer is the server
// (its gRPC transport included, as production's was); an embedded run's writer is
// warmstat's embedded program, whose decoding of the workload replaces the transport.
// goLive is another code path and is left out.
type Fidelity struct {
	Reference *Reference      `json:"reference"`
	Within    float64         `json:"within"`
	Runs      []FidelityRun   `json:"runs"`
	Entries   []FidelityRow   `json:"entries"`
	Summary   FidelitySummary `json:"summary"`
	GC        []FidelityGC    `json:"gc,omitempty"`
}

// FidelityRun is one run whose load-window samples the report uses.
type FidelityRun struct {
	Dir      string `json:"dir"`
	Build    string `json:"build"`
	Event    string `json:"event"` // cpu | alloc
	Profile  string `json:"profile"`
	Entities int64  `json:"entities"`
	Samples  int64  `json:"samples"`
	// JITPct is the JIT compiler's share of the run's load-window value, left out of
	// every share.
	JITPct float64 `json:"jit_pct"`
}

// FidelityRow is one reference entry against the runs.
type FidelityRow struct {
	RefEntry
	// RunShare is the runs' share in percent; nil when no run was profiled for Event.
	RunShare *float64 `json:"run_share_pct"`
	// RunShares are each pooled run's own share, in the order its runs are listed, when
	// two or more runs of Event were pooled: how much one run's answer can be trusted
	// (a small allocation site falls in or out of one run's samples).
	RunShares []RunShare `json:"run_shares,omitempty"`
	// Ratio is RunShare / Share; nil without a run share.
	Ratio *float64 `json:"ratio"`
	// Faithful: Ratio within [1/Within, Within].
	Faithful *bool `json:"faithful"`
	// Callers are where the entry's samples come from: the frames above its frame,
	// nearest first, with their share of all samples (the largest, when asked for).
	Callers []Caller `json:"callers,omitempty"`
}

// RunShare is one pooled run's own share of an entry.
type RunShare struct {
	Dir      string  `json:"dir"`
	SharePct float64 `json:"share_pct"`
}

// Caller is one call path into an entry's frames and its share of all samples.
type Caller struct {
	Path     string  `json:"path"` // caller ← its caller ← …, as Class.method
	SharePct float64 `json:"share_pct"`
}

// CallerDepth is how many frames above an entry's frame a caller path names.
const CallerDepth = 3

// FidelitySummary is the report in one line's worth of numbers.
type FidelitySummary struct {
	Main         int      `json:"main"`          // main entries in the reference
	MainMeasured int      `json:"main_measured"` // of them, with a run share
	MainFaithful int      `json:"main_faithful"` // of them, within the factor
	GeoMeanRatio *float64 `json:"geo_mean_ratio"`
	Worst        string   `json:"worst,omitempty"` // the main entry furthest from 1×
	WorstRatio   *float64 `json:"worst_ratio"`
	Missing      []string `json:"missing_events,omitempty"` // events the reference needs that no run gave
	// Floored counts the main ratios below ×0.001 that the geometric mean took as ×0.001.
	Floored int `json:"ratios_floored,omitempty"`
	// Unsettled are the main entries of which at least one pooled run, alone, would have
	// given another verdict than the pool (within where the pool is outside, or outside
	// where it is within — the runs on both sides of the factor, or all of them outside
	// while their pool is inside): the verdict is the pool's, but not every run's.
	Unsettled []string `json:"unsettled,omitempty"`
}

// FidelityGC is a run's writer collector over the run, for the reader to set beside
// production's (no full collection, 0.38 % of the wall in pauses).
type FidelityGC struct {
	Dir         string  `json:"dir"`
	FullPauses  *int64  `json:"full_pauses"`
	PauseWallPc float64 `json:"pause_share_of_wall_pct"`
}

// eventOf is the reference event a profile mode's samples measure.
func eventOf(mode string) string {
	switch mode {
	case "cpu", "alloc":
		return mode
	}
	return ""
}

// FidelityReport holds the load-window samples of the runs at paths (each a run or a
// directory of runs; cpu and alloc profiles may be mixed, each entry uses the runs of
// its event, pooled) against ref.
//
// With callers > 0 each measured entry lists its callers: the largest call paths into
// its frames (CallerDepth frames above the frame matched), which say why a share is
// what it is.
func FidelityReport(ref *Reference, within float64, callers int, paths ...string) (*Fidelity, error) {
	if !(within > 1) || math.IsInf(within, 1) {
		return nil, &OptionError{"Within", fmt.Sprintf("within %g: a finite factor above 1", within)}
	}
	if len(paths) == 0 {
		return nil, &OptionError{"Runs", "no run given"}
	}
	f := &Fidelity{Reference: ref, Within: within}
	pool := &fidelityPool{ref: ref, f: f, byEvent: map[string]*pooledEvent{}, given: map[string]string{}}
	for _, p := range paths {
		dirs, _, err := runfmt.RunDirs(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", p, err)
		}
		if len(dirs) == 0 {
			return nil, fmt.Errorf("%s: no runs", p)
		}
		for _, d := range dirs {
			if err := pool.add(d); err != nil {
				return nil, err
			}
		}
	}
	pool.compare(within, callers)
	return f, nil
}

// pooledRun is one run's shares: its samples in all, and those under each entry.
type pooledRun struct {
	dir string
	all int64
	hit []int64 // per entry
}

// pooledEvent is the runs profiled for one event (cpu or alloc).
type pooledEvent struct {
	runs    []pooledRun        // each run's own, in the order given; pooled, their sums
	callers []map[string]int64 // per entry: path -> value
}

// fidelityPool gathers the runs of a fidelity report, refusing those that cannot be
// pooled with the first (another build or workload, another profiling interval, the
// same samples twice).
type fidelityPool struct {
	ref     *Reference
	f       *Fidelity
	byEvent map[string]*pooledEvent
	given   map[string]string // a run's load profile digest -> the directory it was first given as
	first   *runfmt.Manifest
}

// add pools the run in directory d: its load profile's shares of the reference's
// entries, its record and its GC.
func (p *fidelityPool) add(d string) error {
	ref, f := p.ref, p.f
	r, err := OpenRun(d)
	if err != nil {
		return err
	}
	if r.Manifest.ExitCode == 1 {
		return fmt.Errorf("run %s failed (exit 1): its profile covers a load that did not happen as measured", d)
	}
	if p.first == nil {
		p.first = r.Manifest
	} else if why := notPoolable(p.first, r.Manifest); why != "" {
		return &Refusal{fmt.Sprintf("%s and %s %s: a fidelity report is of one build's writer on one workload", f.Runs[0].Dir, d, why)}
	}
	w := r.Manifest.WriterProfile
	ev := eventOf(w.Mode)
	if ev == "" {
		return &Refusal{fmt.Sprintf("run %s was profiled in %s mode; a fidelity reference holds cpu and alloc shares", d, w.Mode)}
	}
	load, ok := r.Phases[runfmt.PhaseLoad]
	if !ok {
		return fmt.Errorf("run %s: its writer profile has no load phase", d)
	}
	// the same samples are the same run, whatever directory it is given as (a copy
	// included) and whatever its manifest was edited to say
	if prev, ok := p.given[r.Digests[runfmt.PhaseLoad]]; ok {
		return &Refusal{fmt.Sprintf("run %s is given twice (also as %s, the same load profile): pooled twice, it would weigh double", d, prev)}
	}
	p.given[r.Digests[runfmt.PhaseLoad]] = d
	for _, fr := range f.Runs {
		if b := w.Describe(); fr.Event == ev && fr.Profile != b {
			// pooled by value, a run sampled ten times as coarsely weighs as much with a tenth of the samples
			return &Refusal{fmt.Sprintf("run %s was profiled %s and %s %s: pool runs profiled alike (--writer-profile-interval)", d, b, fr.Dir, fr.Profile)}
		}
	}
	pl := p.byEvent[ev]
	if pl == nil {
		pl = &pooledEvent{callers: make([]map[string]int64, len(ref.Entries))}
		for i := range pl.callers {
			pl.callers[i] = map[string]int64{}
		}
		p.byEvent[ev] = pl
	}
	hit := make([]int64, len(ref.Entries))
	all, jit, samples := shares(load, ref, ev, hit, pl.callers)
	if all == 0 {
		return fmt.Errorf("run %s: its %s profile of the load holds no sample outside the JIT compiler's (%d in all): nothing to hold against the reference", d, ev, samples)
	}
	pl.runs = append(pl.runs, pooledRun{d, all, hit})
	f.Runs = append(f.Runs, FidelityRun{Dir: d, Build: r.Manifest.Build.Label, Event: ev, Profile: w.Describe(),
		Entities: r.Manifest.Entities, Samples: samples, JITPct: pct(jit, all+jit)})
	if gc := r.Manifest.WriterGC; gc != nil {
		f.GC = append(f.GC, FidelityGC{Dir: d, FullPauses: gc.FullPauses, PauseWallPc: gc.ShareOfWallPc})
	}
	return nil
}

// compare holds the pooled shares against each reference entry (faithful within a
// factor of within; the top callers of each) and sums the main entries up.
func (p *fidelityPool) compare(within float64, callers int) {
	f := p.f
	faithful := func(ratio float64) bool { return ratio >= 1/within && ratio <= within }
	logSum, worst, n := 0.0, 0.0, 0
	for i, e := range p.ref.Entries {
		row := FidelityRow{RefEntry: e}
		if pl, ok := p.byEvent[e.Event]; ok {
			var hit, all int64
			for _, r := range pl.runs {
				hit, all = hit+r.hit[i], all+r.all
			}
			s := 100 * float64(hit) / float64(all)
			ratio := s / e.Share
			ok := faithful(ratio)
			row.RunShare, row.Ratio, row.Faithful = &s, &ratio, &ok
			row.Callers = topCallers(pl.callers[i], all, callers)
			if len(pl.runs) > 1 {
				differs := false
				for _, r := range pl.runs {
					rs := 100 * float64(r.hit[i]) / float64(r.all)
					row.RunShares = append(row.RunShares, RunShare{r.dir, rs})
					differs = differs || faithful(rs/e.Share) != ok
				}
				if e.Main && differs {
					f.Summary.Unsettled = append(f.Summary.Unsettled, e.ID)
				}
			}
		}
		if e.Main {
			f.Summary.Main++
			if row.Ratio != nil {
				f.Summary.MainMeasured++
				if *row.Faithful {
					f.Summary.MainFaithful++
				}
				// a share of zero would make the mean zero and the distance infinite: it counts as
				// ×0.001, and the summary says so
				if *row.Ratio < ratioFloor {
					f.Summary.Floored++
				}
				l := math.Log(max(*row.Ratio, ratioFloor))
				logSum += l
				n++
				if f.Summary.WorstRatio == nil || math.Abs(l) > worst {
					worst, f.Summary.Worst, f.Summary.WorstRatio = math.Abs(l), e.ID, row.Ratio
				}
			} else if !slices.Contains(f.Summary.Missing, e.Event) {
				f.Summary.Missing = append(f.Summary.Missing, e.Event)
			}
		}
		f.Entries = append(f.Entries, row)
	}
	if n > 0 {
		g := math.Exp(logSum / float64(n))
		f.Summary.GeoMeanRatio = &g
	}
}

// ratioFloor is the least ratio the geometric mean counts: a share of zero is
// "far below", not "infinitely far".
const ratioFloor = 1e-3

// notPoolable says why two runs' samples may not be pooled ("" when they may): another
// server build (by its jars, whatever its label), a remote writer and an embedded one,
// another workload, or one replayed and one not.
func notPoolable(a, b *runfmt.Manifest) string {
	jars := func(m *runfmt.Manifest) (id, text string) {
		if m.Server.Build == nil || m.Server.Build.ClasspathSHA256 == "" {
			return "label " + m.Build.Label, "build " + m.Build.Label // no digests recorded: the label is all there is
		}
		d := m.Server.Build.ClasspathSHA256
		return d, fmt.Sprintf("build %s, jars %s", m.Build.Label, shortID(d))
	}
	ja, ta := jars(a)
	jb, tb := jars(b)
	if ja != jb {
		return fmt.Sprintf("ran different server builds (%s; %s)", ta, tb)
	}
	if a.TargetMode != b.TargetMode {
		// a remote writer's samples include its transport's, which dilute every share
		return fmt.Sprintf("ran different writers (%s, %s)", a.TargetMode, b.TargetMode)
	}
	if a.SourceMode() != b.SourceMode() {
		return fmt.Sprintf("read their entities differently (%s, %s)", a.SourceMode(), b.SourceMode())
	}
	if a.Source != nil && b.Source != nil && a.Source.WorkloadSHA256 != b.Source.WorkloadSHA256 {
		return fmt.Sprintf("replayed different workloads (%s, %s)", shortID(a.Source.WorkloadSHA256), shortID(b.Source.WorkloadSHA256))
	}
	return ""
}

// shortID is a digest's first 12 digits, as a person compares them.
func shortID(s string) string {
	if len(s) == 64 {
		return s[:12]
	}
	return s
}

// jitFrame marks a sample of the JIT compiler's threads (HotSpot's CompileBroker).
const jitFrame = "CompileBroker::"

// shares adds, for each entry of ref measuring event ev, the value of p's samples the
// entry's frames take (hit[i]) and by which call path (callers[i]), and returns p's
// whole value but the JIT compiler's, the compiler's, and the sample count. Each
// function's match against each entry is decided once.
func shares(p *profile.Profile, ref *Reference, ev string, hit []int64, callers []map[string]int64) (all, jit, samples int64) {
	vi := len(p.SampleType) - 1
	memo := map[*profile.Function][]bool{}
	match := func(fn *profile.Function) []bool {
		if m, ok := memo[fn]; ok {
			return m
		}
		name := "?"
		if fn != nil {
			name = normalizeName(fn.Name)
		}
		m := make([]bool, len(ref.Entries))
		for i, e := range ref.Entries {
			m[i] = e.Event == ev && matches(e.Frames, name)
		}
		memo[fn] = m
		return m
	}
	seen := make([]bool, len(ref.Entries))
	isJIT := map[*profile.Function]bool{}
	var stack []*profile.Function // leaf first, inlined frames included
	for _, smp := range p.Sample {
		v := smp.Value[vi]
		if len(smp.Value) > 1 {
			samples += smp.Value[0]
		}
		stack = stack[:0]
		compiling := false
		for _, loc := range smp.Location {
			for _, ln := range loc.Line {
				stack = append(stack, ln.Function)
				j, ok := isJIT[ln.Function]
				if !ok {
					j = ln.Function != nil && strings.HasPrefix(ln.Function.Name, jitFrame)
					isJIT[ln.Function] = j
				}
				compiling = compiling || j
			}
		}
		if compiling {
			jit += v
			continue
		}
		all += v
		clear(seen)
		for k, fn := range stack {
			m := match(fn)
			for i, e := range ref.Entries {
				if !m[i] || seen[i] || (e.Measure == MeasureSelf && k > 0) {
					continue
				}
				seen[i] = true
				hit[i] += v
				// the callers of the innermost matching frame, above the entry's own frames
				up := k + 1
				for up < len(stack) && match(stack[up])[i] {
					up++
				}
				callers[i][callerPath(stack[up:min(up+CallerDepth, len(stack))])] += v
			}
		}
	}
	return all, jit, samples
}

// callerPath names frames nearest first as Class.method.
func callerPath(fns []*profile.Function) string {
	if len(fns) == 0 {
		return "(root)"
	}
	parts := make([]string, len(fns))
	for i, fn := range fns {
		name := "?"
		if fn != nil {
			name = shortName(normalizeName(fn.Name))
		}
		parts[i] = name
	}
	return strings.Join(parts, " ← ")
}

// shortName drops a Java frame's package: io.evitadb.x.Y.m becomes Y.m.
func shortName(name string) string {
	dot := strings.LastIndexByte(name, '.')
	if dot < 0 {
		return name
	}
	if pkg := strings.LastIndexByte(name[:dot], '.'); pkg >= 0 {
		return name[pkg+1:]
	}
	return name
}

// topCallers are the n largest call paths, with their shares of all.
func topCallers(paths map[string]int64, all int64, n int) []Caller {
	if n <= 0 || all == 0 {
		return nil
	}
	var out []Caller
	for p, v := range paths {
		out = append(out, Caller{Path: p, SharePct: 100 * float64(v) / float64(all)})
	}
	slices.SortFunc(out, func(a, b Caller) int {
		return cmp.Or(cmp.Compare(b.SharePct, a.SharePct), strings.Compare(a.Path, b.Path))
	})
	return out[:min(n, len(out))]
}

// Line is the report in one sentence.
func (f *Fidelity) Line() string {
	s := f.Summary
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d main entries within ×%g of %s", s.MainFaithful, s.Main, f.Within, f.Reference.Name)
	if s.MainMeasured < s.Main {
		fmt.Fprintf(&b, " (%d not measured: no %s profile given)", s.Main-s.MainMeasured, strings.Join(s.Missing, " or "))
	}
	if s.GeoMeanRatio != nil {
		fmt.Fprintf(&b, "; geometric mean of the ratios ×%.2f", *s.GeoMeanRatio)
		if s.Floored > 0 {
			fmt.Fprintf(&b, " (%d ratio(s) of ×0.00 counted as ×%g)", s.Floored, ratioFloor)
		}
		fmt.Fprintf(&b, ", furthest %s at ×%.2f", s.Worst, *s.WorstRatio)
	}
	if len(s.Unsettled) > 0 {
		fmt.Fprintf(&b, "; one run alone would have judged otherwise: %s", strings.Join(s.Unsettled, ", "))
	}
	return b.String()
}
