package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/warmstat/warmstat/analyze"
)

// CompareSchema is the JSON contract of `warmstat compare --format json`.
const CompareSchema = "warmstat.compare/v1"

// GroupJSON names one side.
type GroupJSON struct {
	Label    string   `json:"label"`
	Runs     int      `json:"runs"`
	Path     string   `json:"path"`
	RunDirs  []string `json:"run_dirs"`
	Excluded []string `json:"excluded"`
}

// CompareJSON is the stable JSON shape of a comparison (or of a refusal: comparable
// false, mismatches set, no rows).
type CompareJSON struct {
	Schema            string             `json:"schema"`
	Comparable        bool               `json:"comparable"`
	Mismatches        []analyze.Mismatch `json:"mismatches"`
	AllowedMismatches []string           `json:"allowed_mismatches"`
	A                 GroupJSON          `json:"a"`
	B                 GroupJSON          `json:"b"`
	Rows              []analyze.Row      `json:"rows"`
	ThresholdPct      float64            `json:"threshold_pct"`
	Method            string             `json:"method"`
	Resamples         int                `json:"resamples"`
	Seed              uint64             `json:"seed"`
	Quantiles         string             `json:"quantiles"`
	Dominant          string             `json:"dominant_collection"`
	Notes             []string           `json:"notes"`
	Footnotes         []string           `json:"footnotes"`
}

func groupJSON(g *analyze.Group) GroupJSON {
	j := GroupJSON{Label: g.Label(), Runs: len(g.Runs), Path: g.Path, Excluded: append([]string{}, g.Excluded...)}
	for _, r := range g.Runs {
		j.RunDirs = append(j.RunDirs, r.Dir)
	}
	return j
}

// CompareView selects what a comparison shows.
type CompareView struct {
	All        bool     // every collection, not just the dominant one and the overall rows
	Allowed    []string // contract fields the user let differ (--allow-mismatch)
	Mismatches []analyze.Mismatch
}

// BuildCompare assembles the JSON form (used by every format).
func BuildCompare(c *analyze.Comparison, v CompareView) *CompareJSON {
	j := &CompareJSON{Schema: CompareSchema, Comparable: len(v.Allowed) == 0, Mismatches: v.Mismatches, AllowedMismatches: v.Allowed,
		A: groupJSON(c.A), B: groupJSON(c.B), ThresholdPct: c.Options.ThresholdPct, Method: string(c.Options.Method),
		Resamples: c.Options.Resamples, Seed: c.Options.Seed, Quantiles: string(c.Options.Quantiles), Dominant: c.Dominant}
	if j.Mismatches == nil {
		j.Mismatches = []analyze.Mismatch{}
	}
	if j.AllowedMismatches == nil {
		j.AllowedMismatches = []string{}
	}
	j.Notes = append(j.Notes, c.Notes...)
	for _, g := range []*analyze.Group{c.A, c.B} {
		for _, e := range g.Excluded {
			j.Notes = append(j.Notes, fmt.Sprintf("%s: excluded %s", g.Name, e))
		}
		j.Notes = append(j.Notes, prefixAll(g.Name+": ", g.Included)...)
	}
	for _, r := range c.Rows {
		if v.All || r.Collection == analyze.Overall || r.Collection == c.Dominant {
			j.Rows = append(j.Rows, r)
		}
	}
	j.Footnotes = footnotes(c)
	return j
}

func prefixAll(p string, s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = p + x
	}
	return out
}

// footnotes explain what the run counts can and cannot resolve, from the observed
// between-run variation of the dominant collection's mean (else the load wall-clock).
func footnotes(c *analyze.Comparison) []string {
	var ref *analyze.Row
	for i := range c.Rows {
		r := &c.Rows[i]
		if r.CVPct != nil && ((r.Collection == c.Dominant && r.Metric == analyze.MetricMean) || (ref == nil && r.Metric == analyze.MetricLoadWall)) {
			ref = r
		}
	}
	na, nb := len(c.A.Runs), len(c.B.Runs)
	var out []string
	out = append(out, fmt.Sprintf("runs are the unit of replication (%d in A, %d in B); entities inside one run are not independent evidence", na, nb))
	if na < 2 || nb < 2 {
		out = append(out, "fewer than 2 runs on a side: figures only, no interval and no verdict (take at least 2 runs per build, better 3-5)")
	}
	if ref == nil {
		return out
	}
	name := ref.Collection + " " + string(ref.Metric)
	if ref.Collection == analyze.Overall {
		name = string(ref.Metric)
	}
	cv := *ref.CVPct
	th := c.Options.ThresholdPct
	out = append(out, fmt.Sprintf("observed between-run variation (%s): %.2f %%; with 2 runs per build a 95 %% interval is about ±%.1f %% wide, with 3 runs ±%.1f %%, with 5 runs ±%.1f %%",
		name, cv, analyze.HalfWidthPct(cv, 2), analyze.HalfWidthPct(cv, 3), analyze.HalfWidthPct(cv, 5)))
	var parts []string
	for _, e := range []float64{5, 10} {
		if r := analyze.RunsToResolve(cv, e, th); r > 0 {
			parts = append(parts, fmt.Sprintf("a %.0f %% change needs %d runs per build", e, r))
		}
	}
	if len(parts) > 0 {
		out = append(out, "to clear the ±"+Fixed(th, 1)+" % noise threshold at this variation, "+strings.Join(parts, ", "))
	}
	return out
}

var metricNames = map[analyze.Metric]string{
	analyze.MetricMean: "mean upsert", analyze.MetricMedian: "median upsert", analyze.MetricP95: "p95 upsert", analyze.MetricP99: "p99 upsert",
	analyze.MetricLoadWall: "load wall-clock", analyze.MetricIngest: "ingest (load - read)", analyze.MetricUpsert: "upsert (pure)",
	analyze.MetricGoLive: "goLive", analyze.MetricTotal: "TOTAL (load + goLive)",
}

func figure(v *float64, unit string) string {
	if v == nil {
		return "-"
	}
	if unit == "s" {
		return Fixed(*v, 1) + " s"
	}
	return Fixed(*v, 1) + " µs"
}

func signedPct(v *float64) string {
	if v == nil {
		return "-"
	}
	s := Fixed(*v, 1)
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s + " %"
}

// WriteCompare renders a comparison.
func WriteCompare(w io.Writer, c *analyze.Comparison, v CompareView, f Format) error {
	j := BuildCompare(c, v)
	if f == JSON {
		return WriteJSON(w, j)
	}
	md := f == Markdown
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	banner := ""
	if len(v.Allowed) > 0 {
		var parts []string
		for _, m := range v.Mismatches {
			parts = append(parts, m.String())
		}
		banner = "NOT COMPARABLE (--allow-mismatch " + strings.Join(v.Allowed, ", ") + "): " + strings.Join(parts, "; ")
	}
	title := fmt.Sprintf("B %s (%d runs) vs A %s (%d runs)", c.B.Label(), len(c.B.Runs), c.A.Label(), len(c.A.Runs))
	if md {
		p("### warmstat compare: %s\n\n", MDEscape(title))
		if banner != "" {
			p("> **%s**\n\n", MDEscape(banner))
		}
	} else {
		if banner != "" {
			p("!! %s\n\n", banner)
		}
		p("warmstat compare: %s\n", title)
	}
	p("interval: 95 %% %s across runs; noise threshold ±%s %%; quantiles %s\n", c.Options.Method, Fixed(c.Options.ThresholdPct, 1), c.Options.Quantiles)
	if c.Options.Method != analyze.MethodWelchT {
		p("(%d resamples, seed %d; bootstrap intervals are anti-conservative below ~10 runs per build)\n", c.Options.Resamples, c.Options.Seed)
	}
	for _, n := range j.Notes {
		if md {
			p("- note: %s\n", MDEscape(n))
		} else {
			p("note: %s\n", n)
		}
	}
	p("\n")
	header := []string{"collection", "metric", "A", "B", "change", "95 % interval", "verdict"}
	var rows [][]string
	for _, r := range j.Rows {
		coll := r.Collection
		if coll == analyze.Overall {
			coll = "all"
		}
		ci := "-"
		if r.CILowPct != nil {
			ci = "[" + signedPct(r.CILowPct) + ", " + signedPct(r.CIHighPct) + "]"
		} else if r.Verdict == analyze.Insufficient {
			ci = fmt.Sprintf("(runs %d/%d)", r.RunsA, r.RunsB)
		}
		verdict := r.Verdict
		if banner != "" && (verdict == analyze.Faster || verdict == analyze.Slower) {
			verdict += " (not comparable)"
		}
		rows = append(rows, []string{coll, metricNames[r.Metric], figure(r.A, r.Unit), figure(r.B, r.Unit), signedPct(r.DeltaPct), ci, verdict})
	}
	if err := Table(w, f, 2, header, rows); err != nil {
		return err
	}
	if md {
		p("\n")
	}
	for i, fn := range j.Footnotes {
		p("%d. %s\n", i+1, fn)
	}
	if !v.All && len(c.Collections) > 1 {
		p("(%d more collections with --all)\n", len(c.Collections)-1)
	}
	if banner != "" && !md {
		p("\n!! %s\n", banner)
	}
	return nil
}
