package report

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/history"
)

// HistorySchema is the JSON form of warmstat history.
const HistorySchema = "warmstat.history-report/v1"

// HistoryJSON is every line of a history with its builds, series and change points.
type HistoryJSON struct {
	Schema string     `json:"schema"`
	Dir    string     `json:"dir"`
	Lines  []LineJSON `json:"lines"`
}

// LineJSON is one line: its conditions, its builds, and per metric its change points.
type LineJSON struct {
	Key           string                 `json:"key"`
	Conditions    map[string]string      `json:"conditions"`
	Builds        []BuildJSON            `json:"builds"`
	Series        []SeriesJSON           `json:"series"`
	Confirmations []history.Confirmation `json:"confirmations"`
	Bisections    []history.Bisection    `json:"bisections"`
}

// BuildJSON is one build of a line with its figures (geometric means of its runs).
type BuildJSON struct {
	history.Build
	Runs    int                `json:"runs"`
	Figures map[string]float64 `json:"figures"`
	// RunFigures are each run's own figures
	RunFigures []map[string]float64 `json:"run_figures"`
}

// SeriesJSON is one metric of a line.
type SeriesJSON struct {
	Figure       string                `json:"figure"`
	Name         string                `json:"name"`
	Unit         string                `json:"unit"`
	Builds       []int                 `json:"builds"` // indices into the line's builds
	Values       []float64             `json:"values"`
	Adjusted     []float64             `json:"adjusted,omitempty"` // the values the change points were found in: at one machine speed (when adjusted)
	Slope        *float64              `json:"adjust_slope,omitempty"`
	NoisePct     *float64              `json:"noise_pct,omitempty"`
	Levels       []float64             `json:"levels,omitempty"` // the segments' levels between the change points
	ChangePoints []analyze.ChangePoint `json:"change_points"`
	Why          string                `json:"why,omitempty"`
}

// BuildHistory assembles the report of analysed lines.
func BuildHistory(dir string, lines []history.Analysis) *HistoryJSON {
	out := &HistoryJSON{Schema: HistorySchema, Dir: dir}
	for _, a := range lines {
		l := LineJSON{Key: a.Line.Key, Conditions: a.Line.Conditions, Confirmations: a.Confirmations, Bisections: a.Bisections,
			Builds: []BuildJSON{}, Series: []SeriesJSON{}}
		if l.Confirmations == nil {
			l.Confirmations = []history.Confirmation{}
		}
		if l.Bisections == nil {
			l.Bisections = []history.Bisection{}
		}
		for i, b := range a.Line.Builds {
			bj := BuildJSON{Build: b.Build, Runs: len(b.Points), Figures: map[string]float64{}}
			for _, pt := range b.Points {
				bj.RunFigures = append(bj.RunFigures, pt.Figures)
			}
			for _, s := range a.Series {
				if k := slices.Index(s.Builds, i); k >= 0 {
					bj.Figures[s.Metric.Figure] = s.Values[k]
				}
			}
			l.Builds = append(l.Builds, bj)
		}
		for _, s := range a.Series {
			sj := SeriesJSON{Figure: s.Metric.Figure, Name: s.Metric.Name, Unit: s.Metric.Unit, Builds: s.Builds, Values: s.Values,
				ChangePoints: []analyze.ChangePoint{}, Why: s.Why}
			if s.Seg != nil {
				sj.ChangePoints = append(sj.ChangePoints, s.Seg.ChangePoints...)
				sj.Slope, sj.NoisePct, sj.Levels = s.Seg.Slope, s.Seg.NoisePct, s.Seg.Levels
				sj.Adjusted = s.Adjusted()
			}
			l.Series = append(l.Series, sj)
		}
		out.Lines = append(out.Lines, l)
	}
	return out
}

// WriteHistory renders the report as text, markdown or JSON.
func WriteHistory(w io.Writer, h *HistoryJSON, f Format) error {
	if f == JSON {
		return WriteJSON(w, h)
	}
	md := f == Markdown
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	if len(h.Lines) == 0 {
		p("history %s: no points yet (warmstat history add %s RUN...)\n", h.Dir, h.Dir)
		return nil
	}
	for li, l := range h.Lines {
		runs := 0
		for _, b := range l.Builds {
			runs += b.Runs
		}
		head := fmt.Sprintf("line %d of %d: %s, %s (conditions %s)", li+1, len(h.Lines), Plural(len(l.Builds), "build"), Plural(runs, "run"), l.Key)
		if md {
			p("### %s\n\n", MDEscape(head))
		} else {
			p("== %s\n", head)
		}
		p("%s\n", conditionsLine(l.Conditions))
		if li > 0 {
			p("%s\n", differsLine(h.Lines[0].Conditions, l.Conditions))
		}
		p("\n")
		for _, s := range l.Series {
			for _, line := range seriesWords(l, s) {
				if md {
					p("- %s\n", MDEscape(strings.TrimSpace(line)))
				} else {
					p("%s\n", line)
				}
			}
		}
		p("\n")
		if md {
			p("Each build's figures as measured (the geometric mean of its runs; the change points above are looked for with the machine's speed set aside where they say so):\n\n")
		} else {
			p("each build's figures as measured (the geometric mean of its runs; the change points above are looked for with the machine's speed set aside where they say so):\n")
		}
		if err := buildTable(w, l, f); err != nil {
			return err
		}
		p("\n")
	}
	return nil
}

// conditionsLine lists a line's conditions, the ones every run has in the same way.
func conditionsLine(c map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(c)) {
		parts = append(parts, k+"="+c[k])
	}
	return "conditions: " + strings.Join(parts, ", ")
}

// differsLine names the conditions that set a line apart from the first.
func differsLine(first, c map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(c)) {
		if first[k] != c[k] {
			parts = append(parts, fmt.Sprintf("%s=%s (line 1: %s)", k, c[k], cmp.Or(first[k], "none")))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(first)) {
		if _, ok := c[k]; !ok {
			parts = append(parts, fmt.Sprintf("%s none (line 1: %s)", k, first[k]))
		}
	}
	return "another line than line 1 by: " + strings.Join(parts, ", ")
}

// seriesWords is a metric's change points in words, each with what confirmed and
// bisected it.
func seriesWords(l LineJSON, s SeriesJSON) []string {
	name := s.Name
	if s.Slope != nil {
		name += fmt.Sprintf(" (the machine's speed set aside, slope %s)", Fixed(*s.Slope, 2))
	}
	noise := ""
	if s.NoisePct != nil {
		noise = fmt.Sprintf("; one build's noise %s %%", Fixed(*s.NoisePct, 1))
	}
	if s.Why != "" {
		return []string{fmt.Sprintf("%s: no change points looked for: %s", name, s.Why)}
	}
	if len(s.ChangePoints) == 0 {
		return []string{fmt.Sprintf("%s: no change point in %s%s", name, Plural(len(s.Values), "build"), noise)}
	}
	out := []string{fmt.Sprintf("%s: %s in %s%s", name, Plural(len(s.ChangePoints), "change point"), Plural(len(s.Values), "build"), noise)}
	for _, c := range s.ChangePoints {
		b, a := l.Builds[s.Builds[c.Index-1]], l.Builds[s.Builds[c.Index]]
		out = append(out, fmt.Sprintf("  between %s and %s (builds %d and %d): %s %% [%s %%, %s %%], p %s; %s before, %s after",
			buildName(b.Build), buildName(a.Build), s.Builds[c.Index-1]+1, s.Builds[c.Index]+1, SignedPct(c.DeltaPct), SignedPct(c.CILowPct),
			SignedPct(c.CIHighPct), Fixed(c.P, 3), Plural(c.Before[1]-c.Before[0], "build"), Plural(c.After[1]-c.After[0], "build")))
		done := history.FollowUpOf(l.Confirmations, l.Bisections, s.Figure, b.Build, a.Build)
		if cf := done.Confirmation; cf != nil {
			state := "not confirmed"
			if cf.Confirmed {
				state = "confirmed"
			}
			out = append(out, fmt.Sprintf("    %s by a series (%s %s: %s; %s)", state, cf.Gate, cf.Verdict, confirmationInterval(cf), cf.Series))
		}
		if bi := done.Bisection; bi != nil {
			if len(bi.Culprits) == 0 {
				out = append(out, fmt.Sprintf("    bisected: %s (%s)", bi.Outcome, bi.Dir))
			}
			for _, c := range bi.Culprits {
				ch := ""
				if c.DeltaPct != nil {
					ch = fmt.Sprintf(" %s %%", SignedPct(*c.DeltaPct))
				}
				out = append(out, fmt.Sprintf("    bisected: %.12s%s %q (%s)", c.Commit, ch, c.Title, bi.Dir))
			}
		}
	}
	return out
}

// confirmationInterval is a confirming series' change and interval on its gate.
func confirmationInterval(cf *history.Confirmation) string {
	if cf.DeltaPct == nil || cf.CILowPct == nil || cf.CIHighPct == nil {
		return "no interval"
	}
	return fmt.Sprintf("%s %% [%s %%, %s %%]", SignedPct(*cf.DeltaPct), SignedPct(*cf.CILowPct), SignedPct(*cf.CIHighPct))
}

func buildName(b history.Build) string {
	s := b.Short()
	if b.Tag != "" {
		s += " (" + b.Tag + ")"
	}
	return s
}

// buildTable is a line's builds with their figures.
func buildTable(w io.Writer, l LineJSON, f Format) error {
	header := []string{"#", "commit", "date", "tag", "runs"}
	for _, s := range l.Series {
		header = append(header, s.Name+" "+s.Unit)
	}
	var rows [][]string
	for i, b := range l.Builds {
		date := ""
		if !b.Date.IsZero() {
			date = b.Date.Format(time.DateOnly)
		}
		row := []string{fmt.Sprint(i + 1), b.Short(), date, b.Tag, fmt.Sprint(b.Runs)}
		for _, s := range l.Series {
			v, ok := b.Figures[s.Figure]
			if !ok {
				row = append(row, "-")
				continue
			}
			row = append(row, Fixed(v, 1))
		}
		rows = append(rows, row)
	}
	tf := Text
	if f == Markdown {
		tf = Markdown
	}
	return Table(w, tf, 4, header, rows)
}
