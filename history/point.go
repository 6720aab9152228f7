package history

import (
	"context"
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
	"time"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/bisect"
	"github.com/warmstat/warmstat/runfmt"
)

// ErrNoCommit: a run whose build names no commit, added without a checkout to find it
// in or an order given.
var ErrNoCommit = errors.New("the run's build names no commit")

// Placement says where the runs being added stand: a checkout to find their commits
// in (their build's own commit, or Rev), or an order given by hand.
type Placement struct {
	Repo  string // an evitaDB checkout (only read)
	Rev   string // the commit the runs are of, when their build does not say (a jar built elsewhere)
	Order *int   // the order, when there is no checkout
	Ref   string // what names the build to a series, when the run does not say
}

// PointOf is one run as a history point: its conditions, figures and build.
func PointOf(ctx context.Context, run *runfmt.Run, where Placement) (Point, error) {
	m := run.Manifest
	var p Point
	if m.ExitCode != 0 {
		return p, fmt.Errorf("run %s: exit code %d (%s): a history keeps complete, verified runs", run.Dir, m.ExitCode, m.Outcome.Status)
	}
	digest, err := runDigest(run.Dir)
	if err != nil {
		return p, err
	}
	p.Run.ID, p.Run.Dir, p.Run.Digest, p.Run.Start = m.RunID, run.Dir, digest, m.StartedAt
	p.Conditions = map[string]string{}
	for _, f := range analyze.LineFields() {
		p.Conditions[f] = analyze.ConditionValue(m, f)
	}
	if w := workloadOf(m); w != "" {
		// the very file replayed: two workloads of the same counts are not one line
		p.Conditions["workload-sha256"] = w
	}
	p.Line = LineKey(p.Conditions)
	if p.Figures, p.Collection, err = figuresOf(run); err != nil {
		return p, err
	}
	if p.Build, err = buildOf(ctx, m, where); err != nil {
		return p, fmt.Errorf("run %s: %w", run.Dir, err)
	}
	return p, nil
}

// runDigest is the SHA-256 of a run's manifest and entities.csv: a run's identity,
// whatever directory holds it.
func runDigest(dir string) (string, error) {
	h := sha256.New()
	for _, f := range []string{runfmt.ManifestFile, runfmt.EntitiesFile} {
		r, err := os.Open(filepath.Join(dir, f))
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, r)
		r.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// figuresOf is what a point keeps of a run: its dominant collection's mean, CPU and
// allocation, its publishing time and goLive, and the machine's speed; and which
// collection is dominant.
func figuresOf(run *runfmt.Run) (map[string]float64, string, error) {
	s, err := analyze.Summarize(run, analyze.QuantilesJava)
	if err != nil {
		return nil, "", err
	}
	m := run.Manifest
	f := map[string]float64{FigureLoad: float64(m.Timings.LoadWallNs) / 1e9}
	if s.TotalNs != nil {
		f[FigurePublishing] = float64(*s.TotalNs) / 1e9
	}
	if g := m.GoLive; g.Status == runfmt.GoLiveOK && g.Ns != nil {
		f[FigureGoLive] = float64(*g.Ns) / 1e9
	}
	dom := analyze.DominantOf(s)
	for _, c := range s.Collections {
		if c.Name != dom || c.Count == 0 {
			continue
		}
		f[FigureProductMean] = c.MeanNs / 1e3
		if c.Cost != nil && c.Cost.CPUMeanNs > 0 {
			f[FigureProductCPU] = c.Cost.CPUMeanNs / 1e3
		}
		if c.Cost != nil && c.Cost.AllocMeanBytes > 0 {
			f[FigureProductAlloc] = c.Cost.AllocMeanBytes / 1e3
		}
	}
	if x, ok := analyze.MachineSpeed(m); ok {
		f[FigureMachine] = x / 1e3
	}
	for k, v := range f {
		if !(v > 0) || math.IsInf(v, 0) {
			delete(f, k)
		}
	}
	return f, dom, nil
}

// buildOf is the run's build: its commit — where.Rev, or from its manifest: a
// checkout's HEAD, the commit its jars were built from, or the one the run was told
// (load --commit) — placed in where.Repo.
func buildOf(ctx context.Context, m *runfmt.Manifest, where Placement) (Build, error) {
	b := Build{Label: m.Build.Label, Ref: where.Ref}
	var commit string // what the run records
	if sb := m.Server.Build; sb != nil {
		b.Source = sb.Source
		if sb.Checkout != nil {
			commit = sb.Checkout.Commit
		}
		if commit == "" && sb.BuildCommit != "" && sb.BuildCommit != "unknown" {
			commit = sb.BuildCommit
		}
		if b.Ref == "" {
			switch sb.Source {
			case runfmt.ServerFromRelease, runfmt.ServerFromClasspath:
				b.Ref = sb.Ref
			case runfmt.ServerFromJar:
				b.Ref = "jar:" + sb.Ref
			case runfmt.ServerFromCheckout:
				b.Ref = "checkout:" + sb.Ref
			}
		}
	}
	if commit == "" {
		commit = m.Build.Commit // what the run was told (load --commit)
	}
	if where.Rev != "" && commit != "" {
		// --rev is for a run that records no commit; one that does is not moved
		same := strings.HasPrefix(where.Rev, commit) || strings.HasPrefix(commit, where.Rev)
		if where.Repo != "" {
			a, errA := bisect.Locate(ctx, where.Repo, where.Rev)
			c, errC := bisect.Locate(ctx, where.Repo, commit)
			same = errA == nil && errC == nil && a.Hash == c.Hash
		}
		if !same {
			return b, fmt.Errorf("it records its build's commit %s, and the commit given for it, %s, is another: a commit is given only for runs that record none", commit, where.Rev)
		}
	}
	if commit == "" {
		commit = where.Rev
	}
	switch {
	case where.Repo != "" && commit != "":
		pl, err := bisect.Locate(ctx, where.Repo, commit)
		if err != nil {
			return b, err
		}
		b.Placed = "checkout"
		b.Commit, b.Order, b.Title = pl.Hash, pl.Order, pl.Subject
		if t, err := time.Parse(time.RFC3339, pl.CommitDate); err == nil {
			b.Date = t.UTC()
		}
		for _, t := range pl.Tags {
			if strings.HasPrefix(t, "v") || b.Tag == "" {
				b.Tag = t
			}
		}
		return b, nil
	case where.Order != nil:
		b.Commit, b.Order, b.Placed = commit, *where.Order, "order"
		return b, nil
	case where.Repo != "":
		return b, fmt.Errorf("%w (its server's build records none): give the commit it was built from", ErrNoCommit)
	}
	return b, fmt.Errorf("%w in a checkout, and no order was given: give the checkout the build came from, or its order", ErrNoCommit)
}

// Line is the points of one set of conditions, in their builds' order.
type Line struct {
	Key        string
	Conditions map[string]string
	Points     []Point
	Builds     []BuildPoints // the points grouped by build, in order
}

// BuildPoints is one build's points in a line.
type BuildPoints struct {
	Build  Build
	Points []Point
}

// Lines groups points by their conditions, each line's points in their builds' order
// (then by run start); the line with the most builds first.
func Lines(points []Point) []Line {
	byKey := map[string]*Line{}
	var keys []string
	for _, p := range points {
		l, ok := byKey[p.Line]
		if !ok {
			l = &Line{Key: p.Line, Conditions: p.Conditions}
			byKey[p.Line] = l
			keys = append(keys, p.Line)
		}
		l.Points = append(l.Points, p)
	}
	var out []Line
	for _, k := range keys {
		l := byKey[k]
		// by place in the branch; commits of two branches merged later can share a place
		// (their ancestors' count): then by commit date
		slices.SortStableFunc(l.Points, func(a, b Point) int {
			if a.Build.Order != b.Build.Order {
				return a.Build.Order - b.Build.Order
			}
			if c := a.Build.Date.Compare(b.Build.Date); c != 0 {
				return c
			}
			if c := strings.Compare(a.Build.Commit+a.Build.Label, b.Build.Commit+b.Build.Label); c != 0 {
				return c
			}
			return runStart(a).Compare(runStart(b))
		})
		for _, p := range l.Points {
			n := len(l.Builds)
			if n > 0 && sameBuild(l.Builds[n-1].Build, p.Build) {
				l.Builds[n-1].Points = append(l.Builds[n-1].Points, p)
				continue
			}
			l.Builds = append(l.Builds, BuildPoints{Build: p.Build, Points: []Point{p}})
		}
		out = append(out, *l)
	}
	slices.SortStableFunc(out, func(a, b Line) int { return len(b.Builds) - len(a.Builds) })
	return out
}

func sameBuild(a, b Build) bool {
	if a.Commit != "" || b.Commit != "" {
		return a.Commit == b.Commit
	}
	return a.Label == b.Label && a.Order == b.Order
}

func runStart(p Point) time.Time {
	if p.Run.Start != nil {
		return *p.Run.Start
	}
	return time.Time{}
}

// Reorder puts a line's builds in the order positions gives their commits (a
// topological order of the checkout: bisect.TopoPositions); builds without a position
// keep their place after those with one.
func (l *Line) Reorder(positions map[string]int) {
	pos := func(b BuildPoints) int {
		if p, ok := positions[b.Build.Commit]; ok {
			return p
		}
		return math.MaxInt
	}
	slices.SortStableFunc(l.Builds, func(a, b BuildPoints) int { return pos(a) - pos(b) })
}

// workloadOf is the SHA-256 of the workload file a run replayed ("" for a live load).
func workloadOf(m *runfmt.Manifest) string {
	if m.Source == nil {
		return ""
	}
	return m.Source.WorkloadSHA256
}
