package history

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/bisect"
	"github.com/warmstat/warmstat/runfmt"
)

// RunDirs is a run directory, or the run directories of a series (SERIES/A, SERIES/B)
// or of a group: what a user hands to a history is whatever holds the runs.
func RunDirs(path string) ([]string, error) {
	if runfmt.IsRunDir(path) {
		return []string{path}, nil
	}
	var out []string
	for _, sub := range []string{"A", "B", ""} {
		d := filepath.Join(path, sub)
		runs, _, err := runfmt.RunDirs(d)
		if err == nil && len(runs) > 0 {
			out = append(out, runs...)
			if sub == "" {
				break
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s is no run directory, and holds none (nor a series' A/ and B/)", path)
	}
	return out, nil
}

// ManyBuildsError is runs of more than one build placed by a commit or an order given
// by hand: either names one build, so the others would be placed wrongly.
type ManyBuildsError struct{ Builds []string } // the builds' labels, sorted

func (e *ManyBuildsError) Error() string {
	return fmt.Sprintf("the runs are of %d builds (%s): a commit or an order given by hand places one build",
		len(e.Builds), strings.Join(e.Builds, ", "))
}

// Added is a point added to a history, and whether it began a line the history had
// no run of (the first run of an empty history begins none: there was nothing to differ from).
type Added struct {
	Point
	NewLine bool
}

// AddRuns adds the runs under paths (each a run, a series or a group, as RunDirs
// reads it) to the history in dir, made when new, each run placed by where. Nothing
// is written unless every run can be placed and none is in the history already. A
// history that cannot be read is its store's error (a *HeldTwiceError for a run held
// twice).
func AddRuns(ctx context.Context, dir string, paths []string, where Placement, now time.Time) ([]Added, error) {
	var dirs []string
	for _, p := range paths {
		runs, err := RunDirs(p)
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, runs...)
	}
	var points []Point
	builds := map[string]bool{}
	for _, d := range dirs {
		run, err := runfmt.Open(d)
		if err != nil {
			return nil, err
		}
		builds[run.Manifest.Build.Label] = true
		p, err := PointOf(ctx, run, where)
		if err != nil {
			return nil, err
		}
		points = append(points, p)
	}
	if (where.Rev != "" || where.Order != nil) && len(builds) > 1 {
		return nil, &ManyBuildsError{Builds: slices.Sorted(maps.Keys(builds))}
	}
	st, err := Open(dir, true)
	if err != nil {
		return nil, err
	}
	had, err := st.Points()
	if err != nil {
		return nil, err
	}
	lines := map[string]bool{}
	for _, p := range had {
		lines[p.Line] = true
	}
	added, err := st.Add(points, now)
	out := make([]Added, len(added))
	for i, p := range added {
		out[i] = Added{Point: p, NewLine: !lines[p.Line] && len(lines) > 0}
		lines[p.Line] = true
	}
	return out, err
}

// AnalyseAll reads the history in dir and analyses every line of it, with what
// confirmed and bisected its change points. With a checkout (repo), each line's builds
// stand in its topological order, branches kept together rather than interleaved by
// their commits' counts.
func AnalyseAll(ctx context.Context, dir, repo string, o analyze.ChangePointOptions) (*Store, []Analysis, error) {
	st, err := Open(dir, false)
	if err != nil {
		return nil, nil, err
	}
	points, err := st.Points()
	if err != nil {
		return nil, nil, err
	}
	var out []Analysis
	for _, l := range Lines(points) {
		if repo != "" {
			var commits []string
			for _, b := range l.Builds {
				if b.Build.Commit != "" {
					commits = append(commits, b.Build.Commit)
				}
			}
			pos, err := bisect.TopoPositions(ctx, repo, commits)
			if err != nil {
				return nil, nil, err
			}
			l.Reorder(pos)
		}
		a := Analyze(l, o)
		if a.Confirmations, err = st.Confirmations(l.Key); err != nil {
			return nil, nil, err
		}
		if a.Bisections, err = st.Bisections(l.Key); err != nil {
			return nil, nil, err
		}
		out = append(out, a)
	}
	return st, out, nil
}
