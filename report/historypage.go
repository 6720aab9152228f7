package report

import (
	"fmt"
	"html"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/warmstat/warmstat/history"
)

// WriteHistoryPage writes a history as one self-contained HTML page: inline SVG and
// CSS, no script, nothing fetched, so it opens from file:// and on any static host
// (GitHub Pages). Per line: its conditions, one chart per metric — every build's
// figure as the change points were found in it (at one machine speed when the metric
// is adjusted), the figure as measured faint beside it with its range of runs, the
// levels between change points, the change points marked and linked to their entry —
// the change points with
// what confirmed and bisected them, and a table of the builds. Everything a chart
// shows is in text beside it (its description, the change points' list, the table):
// readable without a mouse and by a screen reader. Elements carry data-* attributes
// with the figures, for tests that hold the page against the history.
func WriteHistoryPage(w io.Writer, h *HistoryJSON, generated time.Time) error {
	b := &strings.Builder{}
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	e := html.EscapeString
	p("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	p("<title>Publishing history: %s</title>\n<style>%s</style>\n</head>\n<body>\n<main>\n", e(h.Dir), pageCSS)
	p("<h1>Publishing history</h1>\n<p class=\"meta\">%s; %s; made by warmstat history publish on %s.</p>\n",
		e(h.Dir), Plural(len(h.Lines), "line"), generated.UTC().Format("2006-01-02 15:04 UTC"))
	if len(h.Lines) == 0 {
		p("<p>No points yet.</p>\n")
	}
	for li, l := range h.Lines {
		lid := fmt.Sprintf("line-%d", li+1)
		runs := 0
		for _, bd := range l.Builds {
			runs += bd.Runs
		}
		p("<section id=\"%s\" aria-labelledby=\"%s-h\" data-line=\"%s\">\n", lid, lid, e(l.Key))
		p("<h2 id=\"%s-h\">Line %d: %s, %s</h2>\n", lid, li+1, Plural(len(l.Builds), "build"), Plural(runs, "run"))
		p("<details><summary>Conditions every run of this line shares (%s)</summary>\n<dl class=\"conditions\">\n", e(l.Key))
		for _, k := range slices.Sorted(maps.Keys(l.Conditions)) {
			p("<dt>%s</dt><dd>%s</dd>\n", e(k), e(l.Conditions[k]))
		}
		p("</dl>\n</details>\n")
		for si, s := range l.Series {
			writeSeriesFigure(b, l, s, fmt.Sprintf("%s-s%d", lid, si+1))
		}
		writeBuildsTable(b, l, lid)
		p("</section>\n")
	}
	p("</main>\n</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

const pageCSS = `
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1b1f24;background:#fff;margin:0}
main{max-width:1100px;margin:0 auto;padding:1.5rem}
h1{font-size:1.6rem;margin:.2rem 0}h2{font-size:1.3rem;margin-top:2rem;border-bottom:1px solid #d0d7de}
h3{font-size:1.05rem;margin:1.4rem 0 .3rem}
.meta{color:#57606a}
dl.conditions{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem;font-size:.9rem}
dl.conditions dt{color:#57606a}dl.conditions dd{margin:0;font-family:ui-monospace,monospace;overflow-wrap:anywhere}
figure{margin:.5rem 0 1rem}figcaption{font-size:.9rem;color:#424a53}
svg{width:100%;height:auto;background:#fbfcfd;border:1px solid #d0d7de}
svg .axis{stroke:#8c959f;stroke-width:1}svg .grid{stroke:#eaeef2;stroke-width:1}
svg text{font:11px system-ui,sans-serif;fill:#424a53}
svg .point{fill:#0969da}svg .range{stroke:#0969da;stroke-width:1.5}
svg .trace{fill:none;stroke:#0969da;stroke-width:1.2;stroke-opacity:.55}
svg .plain{fill:#8c959f;fill-opacity:.45}svg .plain-range{stroke:#8c959f;stroke-opacity:.4;stroke-width:1.5}
svg .plain-trace{fill:none;stroke:#8c959f;stroke-opacity:.3;stroke-width:1}
.legend{font-size:.85rem;color:#57606a;margin:.2rem 0}
.key-shown{color:#0969da}.key-plain{color:#8c959f;opacity:.6}.key-level{color:#1a7f37}.key-cp{color:#cf222e}
svg .level{stroke:#1a7f37;stroke-width:2}svg .cp{stroke:#cf222e;stroke-width:2;stroke-dasharray:5 3}
svg a:focus .cp,svg a:hover .cp{stroke-width:4}
table{border-collapse:collapse;font-size:.88rem;margin:.5rem 0 1rem;width:100%}
caption{text-align:left;font-weight:600;padding:.3rem 0}
th,td{border-bottom:1px solid #eaeef2;padding:.25rem .5rem;text-align:right}
th:nth-child(-n+4),td:nth-child(-n+4){text-align:left}
td.commit{font-family:ui-monospace,monospace}
ol.cps li{margin:.4rem 0}.confirmed{color:#1a7f37}.unconfirmed{color:#9a6700}
a{color:#0969da}a:focus{outline:2px solid #0969da;outline-offset:2px}
`

// chart geometry
const (
	chartW, chartH         = 1000, 300
	padL, padR, padT, padB = 70, 45, 20, 40 // room for the last build's centred label
)

// seriesChart is one metric's chart: what it draws (the figures the change points were
// found in, and the plain ones beside them when those differ) and where a build and a
// value stand on it.
type seriesChart struct {
	shown  []float64 // the main line: the figures the change points were found in
	plain  []float64 // the figures as measured, drawn faint; nil when they are the shown ones
	lo, hi float64   // the values the chart spans
	builds int       // the line's builds, every one with its place on the x axis
}

// newSeriesChart spans every figure the chart draws: shown, plain, each build's runs
// and the levels between change points.
func newSeriesChart(l LineJSON, s SeriesJSON) seriesChart {
	c := seriesChart{shown: s.Values, builds: len(l.Builds), lo: math.Inf(1), hi: math.Inf(-1)}
	if len(s.Adjusted) == len(s.Values) {
		c.shown, c.plain = s.Adjusted, s.Values
	}
	span := func(vs ...float64) {
		for _, v := range vs {
			c.lo, c.hi = math.Min(c.lo, v), math.Max(c.hi, v)
		}
	}
	span(c.shown...)
	span(s.Levels...)
	for _, bi := range s.Builds { // each build's runs' range is drawn, adjusted figures or not
		span(runValues(l, bi, s.Figure)...)
	}
	if c.lo == c.hi {
		c.lo, c.hi = c.lo*0.95, c.hi*1.05
	}
	pad := 0.08 * (c.hi - c.lo)
	c.lo, c.hi = c.lo-pad, c.hi+pad
	return c
}

func (c seriesChart) x(build int) float64 {
	if c.builds == 1 {
		return padL + float64(chartW-padL-padR)/2
	}
	return padL + float64(build)*float64(chartW-padL-padR)/float64(c.builds-1)
}

func (c seriesChart) y(v float64) float64 {
	return padT + (c.hi-v)/(c.hi-c.lo)*float64(chartH-padT-padB)
}

// writeSeriesFigure is one metric's chart with its description, its legend and its
// change points.
func writeSeriesFigure(b *strings.Builder, l LineJSON, s SeriesJSON, id string) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	e := html.EscapeString
	p("<h3 id=\"%s-h\">%s (%s)</h3>\n", id, e(s.Name), e(s.Unit))
	if len(s.Values) == 0 {
		p("<p>%s</p>\n", e(s.Why))
		return
	}
	c := newSeriesChart(l, s)
	desc := seriesDescription(l, s)
	p("<figure data-figure=\"%s\" data-adjusted=\"%t\">\n", e(s.Figure), c.plain != nil)
	writeLegend(b, c)
	p("<svg role=\"img\" aria-labelledby=\"%s-t %s-d\" viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\">\n", id, id, chartW, chartH)
	p("<title id=\"%s-t\">%s of each build, in the branch's order</title>\n<desc id=\"%s-d\">%s</desc>\n", id, e(s.Name), id, e(desc))
	writeAxes(b, c, l)
	writeLevels(b, c, s)
	if c.plain != nil {
		writePlainFigures(b, c, l, s)
	}
	writeShownFigures(b, c, l, s)
	for ci, cp := range s.ChangePoints {
		x := (c.x(s.Builds[cp.Index-1]) + c.x(s.Builds[cp.Index])) / 2
		p("<a href=\"#%s-cp%d\"><line class=\"cp\" data-change=\"%d\" data-after-build=\"%d\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"><title>change point %d: %s %%</title></line></a>\n",
			id, ci+1, ci+1, s.Builds[cp.Index]+1, x, padT, x, chartH-padB, ci+1, e(SignedPct(cp.DeltaPct)))
	}
	p("</svg>\n<figcaption>%s</figcaption>\n</figure>\n", e(desc))
	writeChangePointList(b, l, s, id)
}

// writeLegend names what the chart draws; the plain figures only when they are drawn.
func writeLegend(b *strings.Builder, c seriesChart) {
	b.WriteString("<p class=\"legend\">")
	if c.plain != nil {
		b.WriteString("<span class=\"key-shown\">&#9679;</span> each build at one machine speed (the line's typical one): what the change points were found in; " +
			"<span class=\"key-plain\">&#9679;</span> as measured, its runs' range beside it; ")
	} else {
		b.WriteString("<span class=\"key-shown\">&#9679;</span> each build as measured, its runs' range beside it; ")
	}
	b.WriteString("<span class=\"key-level\">&#9644;</span> the level between change points; <span class=\"key-cp\">&#9482;</span> a change point</p>\n")
}

// writeAxes is the value axis with a few grid lines, and the builds named below as many
// as fit.
func writeAxes(b *strings.Builder, c seriesChart, l LineJSON) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	e := html.EscapeString
	tick := niceStep((c.hi - c.lo) / 4)
	for v := math.Ceil(c.lo/tick) * tick; v <= c.hi; v += tick {
		y := c.y(v)
		p("<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", padL, y, chartW-padR, y)
		p("<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", padL-6, y+4, e(Fixed(v, decimalsOf(tick))))
	}
	p("<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", padL, chartH-padB, chartW-padR, chartH-padB)
	// a label is about 70 units wide; the first and the last always named, each kept
	// inside the chart
	n := c.builds
	step := max(1, int(math.Ceil(float64(n)*70/float64(chartW-padL-padR))))
	for i := 0; i < n; i += step {
		if i > 0 && i+step > n-1 && i != n-1 {
			continue // too close to the last, which is named below
		}
		p("<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", c.x(i), chartH-padB+16, e(l.Builds[i].Short()))
	}
	if n > 1 && (n-1)%step != 0 {
		p("<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", c.x(n-1), chartH-padB+16, e(l.Builds[n-1].Short()))
	}
	p("<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">builds, oldest first</text>\n", padL+(chartW-padL-padR)/2, chartH-6)
}

// writeLevels is the levels between change points (analyze's: the segments' geometric
// means, at one machine speed when adjusted), each over its segment's builds.
func writeLevels(b *strings.Builder, c seriesChart, s SeriesJSON) {
	bounds := []int{0}
	for _, cp := range s.ChangePoints {
		bounds = append(bounds, cp.Index)
	}
	bounds = append(bounds, len(s.Values))
	for k := 0; k+1 < len(bounds) && k < len(s.Levels); k++ {
		lv := s.Levels[k]
		x1, x2 := c.x(s.Builds[bounds[k]]), c.x(s.Builds[bounds[k+1]-1])
		fmt.Fprintf(b, "<line class=\"level\" data-level=\"%g\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", lv, x1, c.y(lv), x2, c.y(lv))
	}
}

// writeRunRange is a build's runs' range, when it has several.
func writeRunRange(b *strings.Builder, c seriesChart, l LineJSON, build int, figure, class string) {
	rv := runValues(l, build, figure)
	if len(rv) < 2 {
		return
	}
	x := c.x(build)
	fmt.Fprintf(b, "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", class, x, c.y(minOf(rv)), x, c.y(maxOf(rv)))
}

// writePlainFigures is each build's figure as measured, faint, with its runs' range:
// the machine's wander the shown figures set aside.
func writePlainFigures(b *strings.Builder, c seriesChart, l LineJSON, s SeriesJSON) {
	e := html.EscapeString
	fmt.Fprintf(b, "<polyline class=\"plain-trace\" points=\"%s\"/>\n", tracePoints(c, s.Builds, c.plain))
	for k, bi := range s.Builds {
		writeRunRange(b, c, l, bi, s.Figure, "plain-range")
		fmt.Fprintf(b, "<circle class=\"plain\" data-build=\"%d\" data-value=\"%g\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"><title>%s as measured: %s %s</title></circle>\n",
			bi+1, c.plain[k], c.x(bi), c.y(c.plain[k]), e(l.Builds[bi].Short()), e(Fixed(c.plain[k], 1)), e(s.Unit))
	}
}

// writeShownFigures is each build's figure the change points were found in, joined in
// the builds' order; unadjusted, with its runs' range.
func writeShownFigures(b *strings.Builder, c seriesChart, l LineJSON, s SeriesJSON) {
	e := html.EscapeString
	fmt.Fprintf(b, "<polyline class=\"trace\" points=\"%s\"/>\n", tracePoints(c, s.Builds, c.shown))
	for k, bi := range s.Builds {
		bd := l.Builds[bi]
		what := fmt.Sprintf("%s %s", Fixed(c.shown[k], 1), s.Unit)
		if c.plain != nil {
			what = fmt.Sprintf("%s at one machine speed, %s as measured", what, Fixed(c.plain[k], 1))
		} else {
			writeRunRange(b, c, l, bi, s.Figure, "range")
		}
		fmt.Fprintf(b, "<circle class=\"point\" data-build=\"%d\" data-commit=\"%s\" data-value=\"%g\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\"><title>%s: %s (%s)</title></circle>\n",
			bi+1, e(bd.Commit), c.shown[k], c.x(bi), c.y(c.shown[k]), e(bd.Short()), e(what), e(Plural(bd.Runs, "run")))
	}
}

// tracePoints is an SVG polyline's points through values at their builds.
func tracePoints(c seriesChart, builds []int, values []float64) string {
	pts := make([]string, len(builds))
	for k, bi := range builds {
		pts[k] = fmt.Sprintf("%.1f,%.1f", c.x(bi), c.y(values[k]))
	}
	return strings.Join(pts, " ")
}

// writeChangePointList is a metric's change points in words, each with what confirmed
// and bisected it (history's FollowUpOf), linked from its mark on the chart.
func writeChangePointList(b *strings.Builder, l LineJSON, s SeriesJSON, id string) {
	if len(s.ChangePoints) == 0 {
		return
	}
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	e := html.EscapeString
	p("<ol class=\"cps\" aria-label=\"change points of %s\">\n", e(s.Name))
	for ci, c := range s.ChangePoints {
		before, after := l.Builds[s.Builds[c.Index-1]], l.Builds[s.Builds[c.Index]]
		p("<li id=\"%s-cp%d\" data-change=\"%d\" data-after-build=\"%d\">between <a href=\"#%s-b%d\">%s</a> and <a href=\"#%s-b%d\">%s</a>: <strong>%s %%</strong> [%s %%, %s %%], p %s",
			id, ci+1, ci+1, s.Builds[c.Index]+1, idLine(id), s.Builds[c.Index-1]+1, e(buildName(before.Build)), idLine(id), s.Builds[c.Index]+1,
			e(buildName(after.Build)), e(SignedPct(c.DeltaPct)), e(SignedPct(c.CILowPct)), e(SignedPct(c.CIHighPct)), e(Fixed(c.P, 3)))
		writeFollowUp(b, history.FollowUpOf(l.Confirmations, l.Bisections, s.Figure, before.Build, after.Build))
		p("</li>\n")
	}
	p("</ol>\n")
}

// writeFollowUp is what confirmed and bisected one change point.
func writeFollowUp(b *strings.Builder, done history.FollowUp) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	e := html.EscapeString
	if cf := done.Confirmation; cf != nil {
		cls, state := "unconfirmed", "not confirmed"
		if cf.Confirmed {
			cls, state = "confirmed", "confirmed"
		}
		p("<br><span class=\"%s\" data-confirmation=\"%t\">%s</span> by a series: %s %s, %s (<code>%s</code>)",
			cls, cf.Confirmed, state, e(cf.Gate), e(string(cf.Verdict)), e(confirmationInterval(cf)), e(cf.Series))
	}
	bi := done.Bisection
	if bi == nil {
		return
	}
	if len(bi.Culprits) == 0 {
		p("<br>bisected: %s", e(bi.Outcome))
	}
	for _, cu := range bi.Culprits {
		ch := ""
		if cu.DeltaPct != nil {
			ch = " (" + SignedPct(*cu.DeltaPct) + " %)"
		}
		// the subject quoted: a commit's title read on after a figure is not the figure's
		p("<br>bisected: culprit <code class=\"culprit\" data-culprit=\"%s\">%.12s</code>%s: &ldquo;%s&rdquo;", e(cu.Commit), e(cu.Commit), e(ch), e(cu.Title))
	}
}

func idLine(seriesID string) string {
	i := strings.LastIndex(seriesID, "-s")
	return seriesID[:i]
}

// runValues are a build's runs' figures of one metric.
func runValues(l LineJSON, build int, figure string) []float64 {
	var out []float64
	for _, r := range l.Builds[build].RunFigures {
		if v, ok := r[figure]; ok {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		if v, ok := l.Builds[build].Figures[figure]; ok {
			out = append(out, v)
		}
	}
	return out
}

// niceStep is the tick step near raw: 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if !(raw > 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// decimalsOf is how many decimals a tick step needs.
func decimalsOf(step float64) int {
	if step >= 1 {
		return 0
	}
	return int(math.Ceil(-math.Log10(step)))
}

// seriesDescription is a chart in words: its text alternative and caption.
func seriesDescription(l LineJSON, s SeriesJSON) string {
	shown, how := s.Values, "as measured"
	if len(s.Adjusted) == len(s.Values) {
		shown, how = s.Adjusted, "at one machine speed (the line's typical one), as the change points were found in them"
	}
	d := fmt.Sprintf("%s of %s %s: the first build %s %s, the last %s %s; the lowest %s, the highest %s.", s.Name, Plural(len(s.Values), "build"), how,
		Fixed(shown[0], 1), s.Unit, Fixed(shown[len(shown)-1], 1), s.Unit, Fixed(minOf(shown), 1), Fixed(maxOf(shown), 1))
	if len(s.Adjusted) == len(s.Values) && s.Slope != nil {
		d += fmt.Sprintf(" As measured, with the machine's speed in them (drawn faint): from %s to %s %s; the slope on the machine's speed %s.",
			Fixed(minOf(s.Values), 1), Fixed(maxOf(s.Values), 1), s.Unit, Fixed(*s.Slope, 2))
	}
	if len(s.ChangePoints) == 0 {
		if s.Why != "" {
			return d + " No change points were looked for: " + s.Why + "."
		}
		return d + " No change point."
	}
	for ci, c := range s.ChangePoints {
		before, after := l.Builds[s.Builds[c.Index-1]], l.Builds[s.Builds[c.Index]]
		d += fmt.Sprintf(" Change point %d between %s and %s: %s %%.", ci+1, buildName(before.Build), buildName(after.Build), SignedPct(c.DeltaPct))
	}
	return d
}

func minOf(v []float64) float64 {
	m := math.Inf(1)
	for _, x := range v {
		m = math.Min(m, x)
	}
	return m
}

func maxOf(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

// writeBuildsTable is a line's builds with their figures.
func writeBuildsTable(b *strings.Builder, l LineJSON, lid string) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	e := html.EscapeString
	p("<table>\n<caption>Builds of line %s, oldest first (figures: geometric means of the build's runs)</caption>\n<thead><tr><th scope=\"col\">#</th><th scope=\"col\">commit</th><th scope=\"col\">date</th><th scope=\"col\">title</th><th scope=\"col\">runs</th>", e(strings.TrimPrefix(lid, "line-")))
	for _, s := range l.Series {
		p("<th scope=\"col\">%s (%s)</th>", e(s.Name), e(s.Unit))
	}
	p("</tr></thead>\n<tbody>\n")
	for i, bd := range l.Builds {
		date := ""
		if !bd.Date.IsZero() {
			date = bd.Date.Format(time.DateOnly)
		}
		title := bd.Title
		if bd.Tag != "" {
			title = "[" + bd.Tag + "] " + title
		}
		p("<tr id=\"%s-b%d\" data-build=\"%d\"><td>%d</td><td class=\"commit\">%s</td><td>%s</td><td>%s</td><td>%d</td>", lid, i+1, i+1, i+1, e(bd.Short()), date, e(title), bd.Runs)
		for _, s := range l.Series {
			if v, ok := bd.Figures[s.Figure]; ok {
				p("<td>%s</td>", e(Fixed(v, 1)))
			} else {
				p("<td>-</td>")
			}
		}
		p("</tr>\n")
	}
	p("</tbody>\n</table>\n")
}
