package method

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/base/cachedir"
	"github.com/warmstat/warmstat/bisect"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/series"
)

// Bisection is a bisect to run with the method: the commits good..bad of the checkout
// Root, each built by Builder, every probe a series of the method judged on Gate.
type Bisection struct {
	Dir     string // the bisect's directory (bisect.json, probes/, work/)
	Root    string
	Good    bisect.Commit
	Commits []bisect.Commit // good's descendants up to bad, oldest first
	Gate    string
	Faster  bool // the commit that made publishing faster
	Builder *bisect.Builder
	// Hooks shows each probe's series as it goes (OnRun, OnLook), OnProbe each probe's
	// result; Hint is the series' hint for a failed run (Config).
	Hooks   func(c *series.Config, began time.Time)
	OnProbe func(r bisect.Result, a, b bisect.Commit)
	Hint    func(error) error
}

// BisectGate is the one gate a bisect judges every probe on: the gate given, else the
// method's own (the dominant collection's adjusted mean), else with the older way the
// dominant collection's (analyze.Dominant) mean.
func (m *Method) BisectGate(given []string) (string, error) {
	if len(given) == 1 {
		return given[0], nil // checked against the source by CheckGates
	}
	if m.Faithful {
		return m.Gates()[0], nil
	}
	dom := analyze.Dominant(m.Source.Counts())
	if dom == "" {
		return "", fmt.Errorf("%s records no collections to choose the default gate from: %w", m.Source.Name(), ErrNoDominant)
	}
	return dom + "/mean", nil
}

// DirError is a bisect's directory that cannot be used (it is the checkout, inside it,
// or another's).
type DirError struct{ Err error }

func (e *DirError) Error() string { return e.Err.Error() }
func (e *DirError) Unwrap() error { return e.Err }

// RangeError is a commit range the checkout does not have, or not in that order.
type RangeError struct{ Err error }

func (e *RangeError) Error() string { return e.Err.Error() }
func (e *RangeError) Unwrap() error { return e.Err }

// NewBisection is the bisect of the commits good..bad of the checkout home into dir,
// judged on gate, every commit built by builder (its Root and WorkDir set here; Cache
// defaulted to warmstat's cache): all checked before anything is built.
func NewBisection(ctx context.Context, home, good, bad, dir, gate string, faster bool, builder bisect.Builder) (Bisection, error) {
	b := Bisection{Gate: gate, Faster: faster}
	root, err := filepath.Abs(home)
	if err != nil {
		return b, err
	}
	if r, err := filepath.EvalSymlinks(root); err == nil { // one checkout, one plan, however it is reached
		root = r
	}
	b.Root = root
	if b.Dir, err = filepath.Abs(dir); err != nil {
		return b, err
	}
	if err := bisect.DirUsable(b.Dir, root); err != nil {
		return b, &DirError{err}
	}
	if builder.Cache == "" {
		builder.Cache = filepath.Join(cachedir.Root(), "builds")
	}
	if err := bisect.Writable(builder.Cache); err != nil {
		return b, fmt.Errorf("build cache %s: %w", builder.Cache, err)
	}
	if b.Good, b.Commits, err = bisect.Range(ctx, root, good, bad); err != nil {
		return b, &RangeError{err}
	}
	builder.Root, builder.WorkDir = root, filepath.Join(b.Dir, "work")
	b.Builder = &builder
	return b, nil
}

// BisectPlan is the bisect's plan: its range, build and gate, and the series every probe
// runs, its two builds aside.
func (m *Method) BisectPlan(b Bisection) bisect.Plan {
	probe := m.Plan(nil, nil)
	probe.Gates = []string{b.Gate}
	rendered, _ := json.Marshal(probe)
	return bisect.Plan{Root: b.Root, Good: b.Good.Hash, Bad: b.Commits[len(b.Commits)-1].Hash, BuildCommand: b.Builder.Command,
		JarPath: b.Builder.JarPath, Gate: b.Gate, Faster: b.Faster, Series: string(rendered)}
}

// Bisect searches b's commits with st (opened on BisectPlan), one series of the method
// per probe, and records the outcome in st. An end that cannot be measured ends it with
// the outcome recorded and a *bisect.Skip.
func (m *Method) Bisect(ctx context.Context, b Bisection, st *bisect.State) (*bisect.Outcome, error) {
	p := prober{m: m, b: b, st: st, began: time.Now(), subject: map[string]bisect.Commit{b.Good.Hash: b.Good}}
	for _, c := range b.Commits {
		p.subject[c.Hash] = c
	}
	hashes := make([]string, len(b.Commits))
	for i, c := range b.Commits {
		hashes[i] = c.Hash
	}
	o, err := bisect.SearchFor(ctx, b.Good.Hash, hashes, st.Remembering(b.Dir, p.measure, time.Now), b.Faster)
	var sk *bisect.Skip
	if err == nil || errors.As(err, &sk) {
		if ferr := st.Finish(b.Dir, o); ferr != nil {
			return o, ferr
		}
	}
	return o, err
}

// Subjects are b's commits (good's too) by hash.
func (b Bisection) Subjects() map[string]bisect.Commit {
	s := map[string]bisect.Commit{b.Good.Hash: b.Good}
	for _, c := range b.Commits {
		s[c.Hash] = c
	}
	return s
}

// prober measures one probe of a bisect: a series of commit bc against a.
type prober struct {
	m       *Method
	b       Bisection
	st      *bisect.State
	began   time.Time
	subject map[string]bisect.Commit
}

func (p prober) measure(ctx context.Context, a, bc string) (bisect.Result, error) {
	sides := map[string]*Side{}
	for _, s := range []string{"A", "B"} {
		side, err := p.side(ctx, s, map[string]string{"A": a, "B": bc}[s])
		if err != nil {
			return bisect.Result{}, err
		}
		sides[s] = side
	}
	log := p.m.o.Log
	rel := filepath.Join("probes", p.subject[bc].Short()+"-vs-"+p.subject[a].Short())
	sp := p.m.Plan(sides["A"], sides["B"])
	sp.Gates = []string{p.b.Gate}
	done, n := len(p.st.Probes), len(p.b.Commits)
	fmt.Fprintf(log, "%s series %d (about %d in all%s): %s against %s, in %s\n", time.Now().Format("15:04:05"), done+1,
		max(done+1, bisect.ExpectedSeries(n)), etaWords(p.st, n), p.subject[bc].Short(), p.subject[a].Short(), rel)
	c := p.m.Config(filepath.Join(p.b.Dir, rel), p.m.WorkloadFile(p.b.Dir), sides, sp, p.b.Hint)
	if p.b.Hooks != nil {
		p.b.Hooks(&c, p.began)
	}
	s, err := series.Execute(ctx, c)
	if errors.Is(err, series.ErrRunFailedTwice) {
		if e, ok := lastFailed(s); ok {
			c := map[string]string{"A": a, "B": bc}[e.Side]
			return bisect.Result{}, &bisect.Skip{Commit: c, Reason: "its runs failed twice: " + e.Reason}
		}
	}
	if err != nil {
		return bisect.Result{}, err
	}
	r := bisect.Result{A: a, B: bc, Verdict: analyze.Unresolved, Series: rel, Runs: s.Outcome.Runs}
	for _, g := range s.Outcome.Gates {
		if g.Gate == p.b.Gate {
			r.Gate, r.Verdict = g, g.Verdict
		}
	}
	if p.b.OnProbe != nil {
		p.b.OnProbe(r, p.subject[a], p.subject[bc])
	}
	return r, nil
}

// side is commit c built (once, recorded in the bisect's state) as side s; a commit
// that does not build or whose server cannot start is skipped.
func (p prober) side(ctx context.Context, s, c string) (*Side, error) {
	bld, err := p.b.Builder.Build(ctx, c)
	if err != nil {
		return nil, err
	}
	if _, ok := p.st.Builds[c]; !ok {
		p.st.Builds[c] = bld
		if err := p.st.Save(p.b.Dir); err != nil {
			return nil, err
		}
	}
	if bld.Failed() {
		return nil, &bisect.Skip{Commit: c, Reason: "its build failed: " + bld.Error + " (log " + bld.Log + ")"}
	}
	src, err := evitaserver.ParseSource("jar:" + bld.Jar)
	var side *Side
	if err == nil {
		side, err = p.m.Side(src, "commit:"+c, p.subject[c].Short(), s, func(msg string) { fmt.Fprintln(p.m.o.Log, msg) })
	}
	if err != nil {
		return nil, &bisect.Skip{Commit: c, Reason: "its server jar: " + err.Error()}
	}
	return side, nil
}

func lastFailed(s *series.State) (series.Entry, bool) {
	if s == nil {
		return series.Entry{}, false
	}
	for i := len(s.Entries) - 1; i >= 0; i-- {
		if e := s.Entries[i]; e.Status == series.Failed {
			return e, true
		}
	}
	return series.Entry{}, false
}

// etaWords is ", ETA 4m0s" from the series done so far ("" before the first).
func etaWords(st *bisect.State, commits int) string {
	if d, ok := st.Remaining(commits); ok {
		return ", ETA " + d.Round(time.Minute).String()
	}
	return ""
}
