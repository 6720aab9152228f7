package method

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/embedded"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/series"
)

// ErrNoDominant: the source records no collections, so the faithful method has no
// dominant collection to gate on; the caller must name the gate.
var ErrNoDominant = errors.New("no collections recorded to choose the gate from")

// Method is a series' question as Prepare settled it: its source, how its runs are made,
// its heaps and its gates. Every field is decided; the caller reads them to say what
// will be asked, then builds the plan and the series' configuration from it.
type Method struct {
	o      Options
	Source Source
	// Embedded: every run's writer is the embedded one (the faithful method, or the
	// older way's embedded replay); Replay: every run replays a workload.
	Embedded, Replay bool
	// Faithful: gated on the dominant collection's adjusted mean and watching its
	// allocation, as the method chose (Embedded, one series at a time, no gate given).
	Faithful bool
	// Dominant is the catalog's dominant collection (analyze.Dominant) when Faithful.
	Dominant string
	Heaps    Heaps
	Machine  evitaserver.Machine
	// CPUs are a duet's slots' CPU sets (nil: both writers on every CPU).
	CPUs [2][]int
}

// Prepare settles the method for o: it reads the source (generating the default
// catalog the first time), chooses the gates and the heaps, and checks them against
// the machine — all before any server starts or any directory is made, so that a bad
// setting costs no run.
func Prepare(ctx context.Context, o Options) (*Method, error) {
	mach, err := evitaserver.ReadMachine()
	if err != nil {
		return nil, err
	}
	given := map[string]int64{} // a setting no run can have, before the source is read
	if o.ServerHeap != nil {
		given["writer"] = *o.ServerHeap
	}
	if o.ReaderHeap != nil && o.Workload == "" && (o.Pristine != "" || o.Catalog != "") {
		given["reader"] = *o.ReaderHeap
	}
	if err := evitaserver.CheckHeapsFit(mach, given); err != nil {
		return nil, err
	}
	m := &Method{o: o, Machine: mach, Embedded: !o.Remote}
	if m.Source, err = readSource(ctx, o); err != nil {
		return nil, err
	}
	m.Replay = m.Source.Workload != nil || o.Replay || m.Embedded
	if o.Duet && o.Split {
		cpus, err := evitaserver.AvailableCPUs()
		if err == nil {
			m.CPUs, err = evitaserver.SplitCPUs(cpus)
		}
		if err != nil {
			return nil, err
		}
	}
	m.Faithful = m.Embedded && !o.Duet && len(o.Gates) == 0
	if m.Faithful {
		m.Dominant = analyze.Dominant(m.Source.Counts())
	}
	if m.Heaps, err = chooseHeaps(o, m.Source, mach, m.Embedded); err != nil {
		return nil, err
	}
	if m.Faithful && m.Dominant == "" {
		return nil, fmt.Errorf("%s %s: %w", m.Source.Name(), m.Source.Path(), ErrNoDominant)
	}
	if err := checkFit(mach, m.Heaps, o.Duet); err != nil {
		return nil, err
	}
	return m, nil
}

// Gates are the gates given, or the faithful method's: the dominant collection's mean
// with the machine's speed set aside.
func (m *Method) Gates() []string {
	if !m.Faithful {
		return m.o.Gates
	}
	return []string{m.Dominant + "/mean_adj"}
}

// Watch are the watched metrics given, or with the faithful method's gate what an
// upsert of the dominant collection allocates.
func (m *Method) Watch() []string {
	if !m.Faithful {
		return m.o.Watch
	}
	return []string{m.Dominant + "/alloc"}
}

// WorkloadFile is the workload a series (or a bisect's series) in dir replays: the
// source's, or the one extracted into dir.
func (m *Method) WorkloadFile(dir string) string {
	if m.Source.Workload != nil {
		return m.Source.Workload.Path
	}
	return dir + string(os.PathSeparator) + "workload.wsw"
}

// Side is one build of a series.
type Side struct {
	Src   evitaserver.Source
	Label string
	Spec  string               // the build as given, recorded in the plan
	ID    evitaserver.Identity // ID.Line: its evitaDB line when not 2026.2
}

// Side identifies src as one side of the series — and, for the embedded writer,
// compiles the writer against it — before any run; labelled label, else by its
// version, else by fallback. say takes what the compiler says it does.
func (m *Method) Side(src evitaserver.Source, spec, label, fallback string, say func(string)) (*Side, error) {
	id, err := src.Identify()
	if err != nil {
		return nil, err
	}
	if m.Embedded { // refused, or compiled, before any run
		if _, err := embedded.Build(src, id, say); err != nil {
			return nil, err
		}
	}
	return &Side{Src: src, Label: cmp.Or(label, id.Version, fallback), Spec: spec, ID: id}, nil
}

// CatalogLine is the evitaDB line both sides' catalog is written for: a side's own
// when it is of an older line, else the one asked for (Options.CatalogLine).
func (m *Method) CatalogLine(a, b *Side) string {
	if a == nil || b == nil {
		return m.o.CatalogLine
	}
	return cmp.Or(a.ID.Line, b.ID.Line, m.o.CatalogLine)
}

// Plan is the series of B against A (nil sides: a plan without its builds, as a
// bisect records the plan every probe shares).
func (m *Method) Plan(a, b *Side) series.Plan {
	o := m.o
	var wl string
	if m.Source.Workload != nil {
		wl = m.Source.Workload.Path
	}
	p := series.Plan{Pristine: m.Source.Pristine, Catalog: m.Source.Catalog, Workload: wl, ServerHeap: m.Heaps.Writer, ReaderHeap: m.Heaps.Reader,
		Conditions: m.conditions(), MinRuns: o.MinRuns, MaxRuns: o.MaxRuns, Warmup: o.Warmup, ThresholdPct: o.ThresholdPct,
		AlphaPct: o.AlphaPct, Gates: m.Gates(), Watch: m.Watch(), RerunOutliers: o.RerunOutliers, Replay: m.Replay,
		Unpaired: o.Unpaired, Duet: o.Duet}
	if m.Embedded {
		p.TargetMode = runfmt.TargetEmbedded
	}
	p.CatalogLine = m.CatalogLine(a, b)
	for _, s := range []struct {
		side *Side
		to   *series.Build
	}{{a, &p.A}, {b, &p.B}} {
		if s.side != nil {
			id := s.side.ID
			*s.to = series.Build{Spec: s.side.Spec, Label: s.side.Label,
				Identity: fmt.Sprintf("%s@%s classpath-sha256 %.16s", cmp.Or(id.Version, "unknown"), cmp.Or(id.BuildCommit, "unknown"), id.ClasspathSHA256)}
		}
	}
	return p
}

// conditions renders the run conditions of the plan: a resumed series must run under
// the same ones. The JVM settings appear only when they differ from the defaults, so
// that a series started before they existed continues unchanged.
func (m *Method) conditions() string {
	o := m.o
	compress := o.Compress == nil || *o.Compress
	batch := o.BatchSize
	out := fmt.Sprintf("storage.compress=%t batch=%d cap=%d prefetch=%t writer-profile=%s", compress, batch, o.MaxPerCollection, o.Prefetch, cmp.Or(o.ProfileCondition, "/"))
	if len(o.WriterJVMOptions) > 0 {
		out += " writer-jvm-options=" + strings.Join(o.WriterJVMOptions, ",")
	}
	// what every JVM of the series takes from this shell (a resumed series must not
	// change it unseen)
	for _, v := range evitaserver.JavaOptionsVariables {
		if s, ok := os.LookupEnv(v); ok && s != "" {
			out += " " + v + "=" + strings.ReplaceAll(s, " ", ",")
		}
	}
	if o.NoClassArchive {
		out += " class-archive=false"
	}
	if o.WriterWarmUp > 0 {
		out += fmt.Sprintf(" writer-warm-up=%d", o.WriterWarmUp)
	}
	if o.SnapshotCompress != nil {
		out += fmt.Sprintf(" snapshot-compress=%t", *o.SnapshotCompress)
	}
	if o.Duet { // how, not which CPUs: those are the machine's, and a fleet's differ
		out += " duet-placement=" + map[bool]string{true: "split", false: "shared"}[o.Split]
	}
	return out
}

// GateError is a gate naming a collection the source does not hold.
type GateError struct {
	Gate, Collection, Source string
	Have                     []string // the source's collections, sorted
}

func (e *GateError) Error() string {
	hint := ""
	for _, n := range e.Have {
		if strings.EqualFold(n, e.Collection) {
			hint = fmt.Sprintf("; names are case-sensitive: did you mean %s/%s?", n, strings.TrimPrefix(e.Gate, e.Collection+"/"))
		}
	}
	return fmt.Sprintf("%s has no collection %q (it has %s or *)%s", e.Source, e.Collection, strings.Join(e.Have, ", "), hint)
}

// CheckGates refuses a gate or watched metric naming a collection the source does not
// hold, before any run (a comparison refuses it too, but only once runs exist). A
// source that records no collections is checked by the first look.
func (m *Method) CheckGates() error {
	counts := m.Source.Counts()
	if len(counts) == 0 {
		return nil
	}
	have := slices.Sorted(maps.Keys(counts))
	for _, g := range append(m.Gates(), m.Watch()...) {
		coll, _, _ := strings.Cut(g, "/")
		if coll != "*" && !slices.Contains(have, coll) {
			return &GateError{Gate: g, Collection: coll, Source: m.Source.Name(), Have: have}
		}
	}
	return nil
}

// DefaultDir is a series' directory when none is given: ab-A-vs-B, each label kept to
// the characters a file name takes everywhere.
func DefaultDir(a, b string) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
				return r
			}
			return '_'
		}, s)
	}
	return "ab-" + clean(a) + "-vs-" + clean(b)
}
