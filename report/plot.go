package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/runfmt"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// PlotSize is an image size in pixels (at 96 dpi for PNG; SVG uses the same points).
type PlotSize struct{ W, H int }

// Bounds of a plot's size: below them a plot has no room for its labels; above them
// a PNG's pixels alone (4 bytes each) would take more than 64 MiB.
const (
	MinPlotW, MinPlotH = 200, 150
	MaxPlotW, MaxPlotH = 4096, 4096
)

// Check refuses a size outside the bounds.
func (s PlotSize) Check() error {
	if s.W < MinPlotW || s.H < MinPlotH || s.W > MaxPlotW || s.H > MaxPlotH {
		return fmt.Errorf("%dx%d px is outside %dx%d to %dx%d", s.W, s.H, MinPlotW, MinPlotH, MaxPlotW, MaxPlotH)
	}
	return nil
}

func (s PlotSize) lengths() (vg.Length, vg.Length) {
	return vg.Length(s.W) * vg.Inch / 96, vg.Length(s.H) * vg.Inch / 96
}

// PlotFormat is the image format a file name asks for (svg, png, pdf), or an error.
func PlotFormat(file string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(file)); ext {
	case ".svg", ".png", ".pdf":
		return ext[1:], nil
	}
	return "", fmt.Errorf("%s: a plot file must end in .svg, .png or .pdf", file)
}

// SaveAs renders p into file, whose extension picks the format. The file is written
// whole or not at all: rendered into a temporary file beside it, then renamed.
func SaveAs(p *plot.Plot, size PlotSize, file string) error {
	format, err := PlotFormat(file)
	if err != nil {
		return err
	}
	if err := size.Check(); err != nil {
		return err
	}
	w, h := size.lengths()
	wt, err := p.WriterTo(w, h, format)
	if err != nil {
		return err
	}
	return runfmt.WriteFileAtomic(file, func(out io.Writer) error {
		_, err := wt.WriteTo(out)
		return err
	})
}

func collectionName(coll string) string {
	if coll == analyze.Overall {
		return "all collections"
	}
	return coll
}

// styles gives each build a color and each run of a build its own dash pattern.
type styles struct{ builds []string }

func (s *styles) line(build string, runIdx int) draw.LineStyle {
	i := slices.Index(s.builds, build)
	if i < 0 {
		s.builds = append(s.builds, build)
		i = len(s.builds) - 1
	}
	return draw.LineStyle{Color: plotutil.Color(i), Width: vg.Points(1.4), Dashes: plotutil.Dashes(runIdx)}
}

func seriesName(r *runfmt.Run) string { return r.Manifest.Build.Label + " / " + r.Manifest.RunID }

// CDFPlot: the distribution of upsert latency of one collection, one line per run on
// a log latency axis, with each run's p50, p95 and p99 marked (as analyze defines
// them for the chosen quantiles).
func CDFPlot(profiles []*analyze.Profile) (*plot.Plot, error) {
	if len(profiles) == 0 {
		return nil, fmt.Errorf("nothing to plot")
	}
	p := plot.New()
	p.Title.Text = "Upsert latency distribution - " + collectionName(profiles[0].Collection)
	p.X.Label.Text = "upsert latency (µs, log scale)"
	p.Y.Label.Text = "fraction of upserts ≤ latency"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = ticks125{}
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top = false // bottom right: the curves rise from the left
	st := &styles{}
	perBuild := map[string]int{}
	us := func(ns float64) float64 { return math.Max(ns/1000, 0.001) }
	for _, pr := range profiles {
		lat := pr.SortedNs
		n := len(lat)
		step := max(1, n/1500) // ~1,500 points per line is plenty for the eye
		var xys plotter.XYs
		for i := 0; i < n; i += step {
			xys = append(xys, plotter.XY{X: us(float64(lat[i])), Y: float64(i+1) / float64(n)})
		}
		xys = append(xys, plotter.XY{X: us(float64(lat[n-1])), Y: 1})
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		build := pr.Run.Manifest.Build.Label
		l.LineStyle = st.line(build, perBuild[build])
		perBuild[build]++
		p.Add(l)
		p.Legend.Add(seriesName(pr.Run), l)
		var marks plotter.XYs
		for _, m := range pr.Marks {
			marks = append(marks, plotter.XY{X: us(m.Ns), Y: m.Fraction})
		}
		sc, err := plotter.NewScatter(marks)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: l.LineStyle.Color, Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}
		p.Add(sc)
	}
	p.Add(plotter.NewGrid())
	addPercentileGuides(p)
	return p, nil
}

// addPercentileGuides draws faint horizontal lines at 0.50, 0.95 and 0.99 so the
// marked points can be read as p50/p95/p99.
func addPercentileGuides(p *plot.Plot) {
	for _, y := range []float64{0.5, 0.95, 0.99} {
		xs := plotter.XYs{{X: p.X.Min, Y: y}, {X: p.X.Max, Y: y}}
		if p.X.Min <= 0 {
			continue
		}
		l, err := plotter.NewLine(xs)
		if err != nil {
			continue
		}
		l.LineStyle = draw.LineStyle{Color: color.Gray{Y: 170}, Width: vg.Points(0.6), Dashes: []vg.Length{vg.Points(2), vg.Points(3)}}
		p.Add(l)
	}
	lbl, err := plotter.NewLabels(plotter.XYLabels{
		XYs:    []plotter.XY{{X: p.X.Min, Y: 0.5}, {X: p.X.Min, Y: 0.95}, {X: p.X.Min, Y: 0.99}},
		Labels: []string{" p50", " p95", " p99"},
	})
	if err == nil && p.X.Min > 0 {
		for i := range lbl.TextStyle {
			lbl.TextStyle[i].Color = color.Gray{Y: 110}
			lbl.TextStyle[i].YAlign = draw.YBottom
		}
		p.Add(lbl)
	}
}

// TimelinePlot: upsert latency over the course of the load, as the median and p99 of
// consecutive blocks of upserts against the upsert's position in the run: shows
// warm-up, and whether cost grows as the catalog grows.
func TimelinePlot(profiles []*analyze.Profile) (*plot.Plot, error) {
	if len(profiles) == 0 {
		return nil, fmt.Errorf("nothing to plot")
	}
	p := plot.New()
	p.Title.Text = "Upsert latency over the load - " + collectionName(profiles[0].Collection)
	p.X.Label.Text = "upsert number within the run (load order)"
	p.Y.Label.Text = "upsert latency (µs, log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = ticks125{}
	p.Legend.Top = true
	st := &styles{}
	perBuild := map[string]int{}
	ylo, yhi := math.Inf(1), math.Inf(-1)
	for _, pr := range profiles {
		var med, p99 plotter.XYs
		for _, b := range pr.Blocks {
			x := float64(b.FirstSeq+b.LastSeq) / 2
			med = append(med, plotter.XY{X: x, Y: math.Max(b.MedianNs/1000, 0.001)})
			p99 = append(p99, plotter.XY{X: x, Y: math.Max(b.P99Ns/1000, 0.001)})
			ylo, yhi = math.Min(ylo, med[len(med)-1].Y), math.Max(yhi, p99[len(p99)-1].Y)
		}
		build := pr.Run.Manifest.Build.Label
		style := st.line(build, perBuild[build])
		perBuild[build]++
		lm, err := plotter.NewLine(med)
		if err != nil {
			return nil, err
		}
		lm.LineStyle = style
		lp, err := plotter.NewLine(p99)
		if err != nil {
			return nil, err
		}
		lp.LineStyle = style
		lp.LineStyle.Width = vg.Points(0.7)
		lp.LineStyle.Color = fade(style.Color)
		p.Add(lm, lp)
		p.Legend.Add(fmt.Sprintf("%s median (blocks of %d)", seriesName(pr.Run), pr.Block), lm)
		p.Legend.Add(seriesName(pr.Run)+" p99", lp)
	}
	p.X.Tick.Marker = countTicks{}
	p.Add(plotter.NewGrid())
	// room above the lines for the legend (two rows a run, at the top)
	legendRoom(p, ylo, yhi, 2*len(profiles))
	return p, nil
}

// countTicks labels an axis of counts (upsert numbers) as whole numbers with grouping:
// 1,750, not 1750.00.
type countTicks struct{}

func (countTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = Int(int64(math.Round(ts[i].Value)))
		}
	}
	return ts
}

// legendRoom raises a log Y axis's top so that the data end below the top fraction of
// the plot a legend of rows rows takes (lo and hi: the data's range) (about 4.5 % of the height a row, at most 60 %).
func legendRoom(p *plot.Plot, lo, hi float64, rows int) {
	if !(lo > 0) || !(hi > lo) {
		return
	}
	f := math.Min(0.6, 0.045*float64(rows)+0.03)
	p.Y.Min = lo
	p.Y.Max = math.Exp(math.Log(lo) + (math.Log(hi)-math.Log(lo))/(1-f))
}

// ComparePlot: each metric's change B vs A with its 95 % interval, against the ±
// noise threshold band; a verdict needs the whole bar outside the band.
func ComparePlot(c *analyze.Comparison, all bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Change of B (%s) vs A (%s), 95 %% interval (%s)", c.B.Build, c.A.Build, c.Options.Method)
	p.X.Label.Text = "change (%)  -  left is faster, right is slower"
	var rows []analyze.Row
	for _, r := range c.Rows {
		if r.DeltaPct != nil && (all || r.Collection == analyze.Overall || r.Collection == c.Dominant) {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("nothing to plot: no metric has figures on both sides")
	}
	slices.Reverse(rows) // first row on top
	labels := make([]string, len(rows))
	th := c.Options.ThresholdPct
	lo, hi := -th, th
	for i, r := range rows {
		coll := r.Collection
		if coll == analyze.Overall {
			coll = "all"
		}
		labels[i] = coll + " " + metricNames[r.Metric]
		lo = math.Min(lo, *r.DeltaPct)
		hi = math.Max(hi, *r.DeltaPct)
		if r.CILowPct != nil {
			lo, hi = math.Min(lo, *r.CILowPct), math.Max(hi, *r.CIHighPct)
		}
	}
	pad := (hi - lo) * 0.08
	if err := thresholdBand(p, th, len(rows)); err != nil {
		return nil, err
	}
	verdictColor := map[analyze.Verdict]color.Color{
		analyze.Faster: color.RGBA{G: 140, B: 60, A: 255}, analyze.Slower: color.RGBA{R: 200, G: 30, B: 30, A: 255},
		analyze.Unresolved: color.Gray{Y: 80}, analyze.Insufficient: color.Gray{Y: 160},
	}
	for _, v := range []analyze.Verdict{analyze.Faster, analyze.Slower, analyze.Unresolved, analyze.Insufficient} {
		var ivs []interval
		for i, r := range rows {
			if r.Verdict == v {
				ivs = append(ivs, interval{i, r.DeltaPct, r.CILowPct, r.CIHighPct})
			}
		}
		if len(ivs) == 0 {
			continue
		}
		pts, bars, err := intervalBars(ivs)
		if err != nil {
			return nil, err
		}
		bars.LineStyle = draw.LineStyle{Color: verdictColor[v], Width: vg.Points(1.6)}
		sc, _ := plotter.NewScatter(pts)
		sc.GlyphStyle = draw.GlyphStyle{Color: verdictColor[v], Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
		p.Add(bars, sc)
		p.Legend.Add(string(v), sc)
	}
	p.NominalY(labels...)
	p.X.Min, p.X.Max = lo-pad, hi+pad
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p, nil
}

// thresholdBand draws the ±th noise-threshold band (in the legend) and the zero line
// behind rows rows of intervals: a verdict needs the whole bar outside the band.
func thresholdBand(p *plot.Plot, th float64, rows int) error {
	band, err := plotter.NewPolygon(plotter.XYs{{X: -th, Y: -0.5}, {X: th, Y: -0.5}, {X: th, Y: float64(rows) - 0.5}, {X: -th, Y: float64(rows) - 0.5}})
	if err != nil {
		return err
	}
	band.Color = color.RGBA{R: 230, G: 230, B: 230, A: 255}
	band.LineStyle.Width = 0
	p.Add(band)
	p.Legend.Add(fmt.Sprintf("noise threshold ±%s %%", Fixed(th, 1)), band)
	zero, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: -0.5}, {X: 0, Y: float64(rows) - 0.5}})
	zero.LineStyle = draw.LineStyle{Color: color.Gray{Y: 120}, Width: vg.Points(0.8)}
	p.Add(zero)
	return nil
}

// interval is one change with its interval (lo, hi nil: none) on row y of a plot.
type interval struct {
	y         int
	d, lo, hi *float64
}

// intervalBars are the points and horizontal error bars of intervals.
func intervalBars(ivs []interval) (plotter.XYs, *plotter.XErrorBars, error) {
	var pts plotter.XYs
	var errs plotter.XErrors
	for _, iv := range ivs {
		pts = append(pts, plotter.XY{X: *iv.d, Y: float64(iv.y)})
		var e struct{ Low, High float64 }
		if iv.lo != nil {
			e.Low, e.High = *iv.d-*iv.lo, *iv.hi-*iv.d
		}
		errs = append(errs, e)
	}
	bars, err := plotter.NewXErrorBars(struct {
		plotter.XYs
		plotter.XErrors
	}{pts, errs})
	return pts, bars, err
}

// ticks125 labels a log axis at 1, 2 and 5 times each power of ten, with grouping.
type ticks125 struct{}

func (ticks125) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= lo {
		return nil
	}
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		base := math.Pow(10, e)
		for m := 1; m < 10; m++ {
			v := float64(m) * base
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = Fixed(v, max(0, int(-e)))
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// fade lightens a color for secondary lines (the p99 next to a median).
func fade(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8((v>>8)/2 + 127) }
	return color.RGBA{R: mix(r), G: mix(g), B: mix(b), A: 255}
}
