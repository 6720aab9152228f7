package history

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/runfmt"
)

// Metric is one figure a history follows.
type Metric struct {
	Figure string // the points' figure (Figure*)
	Name   string // as people read it
	Unit   string
	// Adjusted: the change points are found with the machine's speed set aside (the
	// figure is a time the machine's speed moves)
	Adjusted bool
}

// Metrics are the figures a line is analysed by, in the order a page shows them.
var Metrics = []Metric{
	{FigureProductMean, "Product mean upsert", "µs", true},
	{FigurePublishing, "publishing (load + goLive)", "s", true},
	{FigureGoLive, "goLive", "s", true},
	{FigureProductAlloc, "Product allocation per upsert", "KB", false},
}

// IsMetric says whether figure is one a history follows (one of Metrics).
func IsMetric(figure string) bool {
	return slices.ContainsFunc(Metrics, func(m Metric) bool { return m.Figure == figure })
}

// MetricNames lists the figures a history follows, for people choosing one.
func MetricNames() string {
	var n []string
	for _, m := range Metrics {
		n = append(n, m.Figure)
	}
	return strings.Join(n, ", ")
}

// Series is one metric of a line: per build, the geometric mean of its points'
// figures (and of their machine speeds), and the change points found in them.
type Series struct {
	Metric Metric
	Builds []int     // indices into Line.Builds of the builds that have the figure
	Values []float64 // their figures
	Runs   []int     // how many runs each rests on
	Speeds []float64 // their machine speeds (nil when some build has none: then not adjusted)
	Seg    *analyze.Segmentation
	Why    string // non-empty: no change points were looked for
}

// Analysis is a line's series and what has been confirmed and bisected of it.
type Analysis struct {
	Line          Line
	Series        []Series
	Confirmations []Confirmation
	Bisections    []Bisection
}

// Analyze finds the change points of every metric of l.
func Analyze(l Line, o analyze.ChangePointOptions) Analysis {
	a := Analysis{Line: l}
	for _, m := range Metrics {
		s := Series{Metric: m}
		var speeds []float64
		allSpeeds := true
		for i, b := range l.Builds {
			var v, x []float64
			for _, p := range b.Points {
				if f, ok := p.Figures[m.Figure]; ok {
					v = append(v, f)
					if sp, ok := p.Figures[FigureMachine]; ok {
						x = append(x, sp)
					}
				}
			}
			if len(v) == 0 {
				continue
			}
			s.Builds, s.Values, s.Runs = append(s.Builds, i), append(s.Values, analyze.GeoMean(v)), append(s.Runs, len(v))
			if len(x) == len(v) {
				speeds = append(speeds, analyze.GeoMean(x))
			} else {
				allSpeeds = false
			}
		}
		if m.Adjusted && allSpeeds && len(speeds) == len(s.Values) {
			s.Speeds = speeds
		}
		switch {
		case len(s.Values) == 0:
			s.Why = "no build of the line has this figure"
		case len(s.Values) < 2*max(o.MinSegment, 3):
			s.Why = fmt.Sprintf("%d build%s: a change point needs %d on each side", len(s.Values), map[bool]string{true: "", false: "s"}[len(s.Values) == 1], max(o.MinSegment, 3))
		default:
			seg, err := analyze.ChangePoints(s.Values, s.Speeds, o)
			if err != nil {
				s.Why = err.Error()
			} else {
				s.Seg = seg
			}
		}
		a.Series = append(a.Series, s)
	}
	return a
}

// Span is the builds on either side of a change point: the last build before it and
// the first after it (indices into the line's builds).
func (s Series) Span(cp analyze.ChangePoint) (before, after int) {
	return s.Builds[cp.Index-1], s.Builds[cp.Index]
}

// Confirmation is a series run between the builds on either side of a change point.
type Confirmation struct {
	Schema    string          `json:"schema"`
	Line      string          `json:"line"`
	Metric    string          `json:"metric"`
	Before    Build           `json:"before"`
	After     Build           `json:"after"`
	Series    string          `json:"series"` // its directory
	Gate      string          `json:"gate"`
	Verdict   analyze.Verdict `json:"verdict"`
	DeltaPct  *float64        `json:"delta_pct"`
	CILowPct  *float64        `json:"ci_low_pct"`
	CIHighPct *float64        `json:"ci_high_pct"`
	// Confirmed: the series found the change the history shows, in its direction
	Confirmed bool      `json:"confirmed"`
	At        time.Time `json:"at"`
}

// Bisection is a bisect run over the commits between the builds on either side of a
// change point.
type Bisection struct {
	Schema   string    `json:"schema"`
	Line     string    `json:"line"`
	Metric   string    `json:"metric"`
	Before   Build     `json:"before"`
	After    Build     `json:"after"`
	Dir      string    `json:"dir"`
	Outcome  string    `json:"outcome"` // what the bisect concluded, in words
	Culprits []Culprit `json:"culprits"`
	At       time.Time `json:"at"`
}

// Culprit is a commit a bisection named, with its change.
type Culprit struct {
	Commit   string   `json:"commit"`
	Title    string   `json:"title,omitempty"`
	DeltaPct *float64 `json:"delta_pct,omitempty"`
}

const (
	ConfirmationSchema = "warmstat.history-confirmation/v1"
	BisectionSchema    = "warmstat.history-bisection/v1"
	confirmDir         = "confirmations"
	bisectDir          = "bisections"
)

// SaveConfirmation records c (one file per change point and metric; a later one of
// the same replaces it).
func (s *Store) SaveConfirmation(c Confirmation) error {
	c.Schema = ConfirmationSchema
	return saveJSON(filepath.Join(s.Dir, confirmDir, c.Line, fmt.Sprintf("%s-%s-%s.json", c.Metric, c.Before.Short(), c.After.Short())), c)
}

// SaveBisection records b.
func (s *Store) SaveBisection(b Bisection) error {
	b.Schema = BisectionSchema
	return saveJSON(filepath.Join(s.Dir, bisectDir, b.Line, fmt.Sprintf("%s-%s-%s.json", b.Metric, b.Before.Short(), b.After.Short())), b)
}

// saveJSON writes v whole into path, making its directory (a line's first record).
func saveJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return runfmt.WriteJSONAtomic(path, v)
}

// Confirmations and Bisections read what was recorded for line.
func (s *Store) Confirmations(line string) ([]Confirmation, error) {
	return readAll[Confirmation](filepath.Join(s.Dir, confirmDir, line), ConfirmationSchema)
}

func (s *Store) Bisections(line string) ([]Bisection, error) {
	return readAll[Bisection](filepath.Join(s.Dir, bisectDir, line), BisectionSchema)
}

func readAll[T any](dir, schema string) ([]T, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	slices.Sort(files)
	var out []T
	for _, f := range files {
		var v T
		if _, err := runfmt.ReadJSONStrict(f, &v); err != nil {
			return nil, err
		}
		if sc := schemaOf(v); sc != schema {
			return nil, fmt.Errorf("%s: field schema: %q, want %s", f, sc, schema)
		}
		out = append(out, v)
	}
	return out, nil
}

func schemaOf(v any) string {
	switch x := v.(type) {
	case Confirmation:
		return x.Schema
	case Bisection:
		return x.Schema
	}
	return ""
}
