package history

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/bisect"
	"github.com/warmstat/warmstat/series"
)

// # Following a change point up
//
// A change point is a claim about a line of builds measured once or a few times
// each; it is followed up twice over: confirmed by an ab series between the builds on
// either side of it (many interleaved runs of just those two), and bisected into the
// commits between them. The rules of both live here, decided once: which record is of
// which change point (FollowUpOf), when a series confirms one (Confirms), what a
// bisect named (BisectOutcome), and what either is gated on (GateOf). Running a series
// or a bisect is not this package's: the caller injects it (Runner).

// FollowUp is what has been done about one change point: the series that confirmed
// (or did not confirm) it and the bisection of its commits; nil when not done yet.
type FollowUp struct {
	Confirmation *Confirmation
	Bisection    *Bisection
}

// FollowUpOf is the one rule for whether a change point of metric between the builds
// before and after has been followed up: a record is of it when it names the same
// metric and the same builds on either side, a build being the same as the line counts
// it (its commit; for a build without one, its label and order), so a build whose runs
// carry another label is not confirmed twice. With several records of one change point
// (a history merged from two copies), the last one read stands.
func FollowUpOf(cs []Confirmation, bs []Bisection, metric string, before, after Build) FollowUp {
	var f FollowUp
	for i, c := range cs {
		if c.Metric == metric && sameBuild(c.Before, before) && sameBuild(c.After, after) {
			f.Confirmation = &cs[i]
		}
	}
	for i, b := range bs {
		if b.Metric == metric && sameBuild(b.Before, before) && sameBuild(b.After, after) {
			f.Bisection = &bs[i]
		}
	}
	return f
}

// FollowUpOf is what has been done about a change point of a's metric between before
// and after (the package's FollowUpOf over a's records).
func (a Analysis) FollowUpOf(metric string, before, after Build) FollowUp {
	return FollowUpOf(a.Confirmations, a.Bisections, metric, before, after)
}

// Confirms is the verdict rule: a series confirms a change point when it found the
// change the history shows, in its direction — faster for a change point that lowered
// the figure, slower for one that raised it. Unresolved, equivalent or the other way
// confirms nothing.
func Confirms(changePct float64, v analyze.Verdict) bool {
	return changePct < 0 && v == analyze.Faster || changePct > 0 && v == analyze.Slower
}

// Judge records in c what the series st found on c's gate, and whether that confirms
// a change point of changePct (Confirms). A series that did not judge the gate (it
// ended before an answer, or has no such gate) leaves c unconfirmed with no verdict.
func (c *Confirmation) Judge(st *series.State, changePct float64) error {
	if st == nil {
		return fmt.Errorf("%s: no series there (series.json): the series left no state", c.Series)
	}
	c.Verdict, c.DeltaPct, c.CILowPct, c.CIHighPct, c.Confirmed = "", nil, nil, nil, false
	if st.Outcome == nil {
		return nil
	}
	for _, g := range st.Outcome.Gates {
		if g.Gate == c.Gate {
			c.Verdict, c.DeltaPct, c.CILowPct, c.CIHighPct = g.Verdict, g.DeltaPct, g.LowPct, g.HighPct
			c.Confirmed = Confirms(changePct, g.Verdict)
		}
	}
	return nil
}

// BisectOutcome is what a bisect concluded, in words (its kind, and its detail when it
// has one), and the commits it named, each with its subject and the change its probe
// measured on the gate; "" and none while the bisect has not ended.
func BisectOutcome(st *bisect.State) (string, []Culprit) {
	if st == nil || st.Outcome == nil {
		return "", nil
	}
	o := st.Outcome
	words := o.Kind
	if o.Detail != "" {
		words += ": " + o.Detail
	}
	subject := map[string]string{}
	for _, c := range st.Commits {
		subject[c.Hash] = c.Subject
	}
	var culprits []Culprit
	for _, c := range o.Culprits {
		culprits = append(culprits, Culprit{Commit: c.Commit, Title: subject[c.Commit], DeltaPct: c.Change.Gate.DeltaPct})
	}
	return words, culprits
}

// GateOf is the ab gate that judges a history figure, on a line whose dominant
// collection is dominant (Line.Dominant): the per-upsert figures are that
// collection's, the run's times the whole run's ("*").
func GateOf(figure, dominant string) string {
	if dominant == "" {
		dominant = legacyDominant
	}
	switch figure {
	case FigurePublishing:
		return "*/ingest_adj"
	case FigureGoLive:
		return "*/golive"
	case FigureProductAlloc:
		return dominant + "/alloc"
	}
	return dominant + "/mean_adj"
}

// legacyDominant is the collection a point recorded before points named theirs: what
// every history was gated on then.
const legacyDominant = "Product"

// Dominant is the line's dominant collection, the one its per-upsert figures
// (FigureProductMean, FigureProductAlloc) are of: as its points record it (the runs of
// a line replay one catalog, so they agree; should they not, the most points' stands).
// A line whose points predate the record is Product's, as it was judged then.
func (l Line) Dominant() string {
	votes := map[string]int{}
	best := ""
	for _, p := range l.Points {
		if p.Collection == "" {
			continue
		}
		votes[p.Collection]++
		if best == "" || votes[p.Collection] > votes[best] || votes[p.Collection] == votes[best] && p.Collection < best {
			best = p.Collection
		}
	}
	if best == "" {
		return legacyDominant
	}
	return best
}

// ConfirmRequest is an ab series asked for between the builds on either side of a
// change point, into Dir.
type ConfirmRequest struct {
	Line          string
	Metric        Metric
	Change        analyze.ChangePoint
	Before, After Build // each with its Ref: what names its server to a series
	Gate          string
	Dir           string
}

// BisectRequest is a bisect asked for over the commits Good..Bad, into Dir.
type BisectRequest struct {
	Line          string
	Metric        Metric
	Change        analyze.ChangePoint
	Before, After Build
	// Good is the commit the search starts from: Before's, or the merge base of the two
	// when Before lies on another branch (bisect.BisectFrom); Bad is After's
	Good, Bad string
	// Faster: the change point lowered the figure (the bisect looks for a speed-up)
	Faster bool
	Gate   string
	Dir    string
}

// Runner runs what following up needs: the caller's, so that this package names no
// command line (today a child warmstat, later a library call).
type Runner struct {
	// Confirm runs the series req asks for and returns its state (series.Read of
	// req.Dir): a series that ended without an answer is a state, not an error.
	Confirm func(ctx context.Context, req ConfirmRequest) (*series.State, error)
	// Bisect runs the bisect req asks for and returns its state (bisect.Read of
	// req.Dir): a bisect that ended without a culprit is a state, not an error.
	Bisect func(ctx context.Context, req BisectRequest) (*bisect.State, error)
}

// FollowOptions say which change points to follow up, and how.
type FollowOptions struct {
	Metric  string // the figure whose change points are followed (Figure*)
	Confirm bool   // run a series for each change point not confirmed yet
	Bisect  bool   // bisect each change point not bisected yet
	Repo    string // the checkout the builds' commits are in (needed to bisect)
	Log     io.Writer
	Now     func() time.Time // nil: time.Now
}

// ErrNoRef is a change point whose builds cannot be run again: a build added without
// what names its server to a series (a version, jar:FILE, checkout:DIR).
var ErrNoRef = errors.New("a series needs each build's server (a version, jar:FILE, checkout:DIR), and a build added without one names none")

// followedDir is where a history keeps the series and bisections of its change points.
const followedDir = "followed"

// Follow confirms and bisects each change point of o.Metric in lines that has not been
// confirmed or bisected yet (FollowUpOf), through r, and records what each found in
// st. The series and bisections are ordinary directories under HISTORY/followed/.
func Follow(ctx context.Context, st *Store, lines []Analysis, o FollowOptions, r Runner) error {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	for _, a := range lines {
		for _, s := range a.Series {
			if s.Metric.Figure != o.Metric || s.Seg == nil {
				continue
			}
			for _, cp := range s.Seg.ChangePoints {
				bi, ai := s.Span(cp)
				before, after := a.Line.Builds[bi].Build, a.Line.Builds[ai].Build
				done := a.FollowUpOf(s.Metric.Figure, before, after)
				base := filepath.Join(st.Dir, followedDir, a.Line.Key, fmt.Sprintf("%s-%s-vs-%s", s.Metric.Figure, before.Short(), after.Short()))
				gate := GateOf(s.Metric.Figure, a.Line.Dominant())
				if o.Confirm && done.Confirmation == nil {
					req := ConfirmRequest{Line: a.Line.Key, Metric: s.Metric, Change: cp, Before: before, After: after, Gate: gate, Dir: filepath.Join(base, "confirm")}
					if err := confirm(ctx, st, req, o, r); err != nil {
						return err
					}
				}
				if o.Bisect && done.Bisection == nil {
					req := BisectRequest{Line: a.Line.Key, Metric: s.Metric, Change: cp, Before: before, After: after, Bad: after.Commit,
						Faster: cp.DeltaPct < 0, Gate: gate, Dir: filepath.Join(base, "bisect")}
					if err := bisectInto(ctx, st, req, o, r); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// confirm runs req's series and records its confirmation.
func confirm(ctx context.Context, st *Store, req ConfirmRequest, o FollowOptions, r Runner) error {
	if req.Before.Ref == "" || req.After.Ref == "" {
		return fmt.Errorf("the builds %s and %s: %w", req.Before.Short(), req.After.Short(), ErrNoRef)
	}
	c := Confirmation{Line: req.Line, Metric: req.Metric.Figure, Before: req.Before, After: req.After, Series: req.Dir, Gate: req.Gate, At: o.Now().UTC()}
	ss, err := r.Confirm(ctx, req)
	if err != nil {
		return err
	}
	if err := c.Judge(ss, req.Change.DeltaPct); err != nil {
		return err
	}
	c.Series = InHistory(st.Dir, c.Series)
	return st.SaveConfirmation(c)
}

// bisectInto finds where req's search starts, runs it when there is more than one
// commit to search, and records what it found.
func bisectInto(ctx context.Context, st *Store, req BisectRequest, o FollowOptions, r Runner) error {
	before, after := req.Before, req.After
	if before.Commit == "" || after.Commit == "" {
		fmt.Fprintf(o.Log, "history: the change point between %s and %s: a build without a commit cannot be bisected\n", before.Short(), after.Short())
		return nil
	}
	good, err := bisect.BisectFrom(ctx, o.Repo, before.Commit, after.Commit)
	if err != nil {
		return err
	}
	between, err := bisect.Between(ctx, o.Repo, good, after.Commit)
	if err != nil {
		return err
	}
	if len(between) < 2 {
		fmt.Fprintf(o.Log, "history: the change point between %s and %s: no commit between them, nothing to bisect: %s is the commit\n",
			before.Short(), after.Short(), after.Short())
		return nil
	}
	if good != before.Commit {
		fmt.Fprintf(o.Log, "history: %s is not an ancestor of %s (two branches, merged later): bisecting from their merge base %.10s\n",
			before.Short(), after.Short(), good)
	}
	req.Good = good
	b := Bisection{Line: req.Line, Metric: req.Metric.Figure, Before: before, After: after, Dir: req.Dir, At: o.Now().UTC()}
	bs, err := r.Bisect(ctx, req)
	if err != nil {
		return err
	}
	if bs == nil {
		return fmt.Errorf("%s: no bisect there (bisect.json): the bisect left no state", req.Dir)
	}
	b.Outcome, b.Culprits = BisectOutcome(bs)
	b.Dir = InHistory(st.Dir, b.Dir)
	return st.SaveBisection(b)
}

// InHistory is a directory under the history as the history records it: relative to
// it, so that a history moved, cloned or published names no path of this machine.
func InHistory(hist, dir string) string {
	if rel, err := filepath.Rel(hist, dir); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return dir
}
