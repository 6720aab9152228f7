package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/runfmt"
)

// CombineSchema is the JSON contract of `warmstat combine --format json`.
const CombineSchema = "warmstat.combine/v1"

// FleetSeriesJSON is one machine's series.
type FleetSeriesJSON struct {
	Series  string    `json:"series"`
	Machine string    `json:"machine"` // CPU model, cores and memory, as its runs recorded them
	Pairs   int       `json:"pairs"`
	A       GroupJSON `json:"a"`
	B       GroupJSON `json:"b"`
}

// CombineJSON is the stable JSON shape of a fleet's combination, or of a refusal
// (combinable false, mismatches, duplicates or refused_series set, no rows).
type CombineJSON struct {
	Schema        string                  `json:"schema"`
	Combinable    bool                    `json:"combinable"`
	Mismatches    []analyze.FleetMismatch `json:"mismatches"`
	Duplicates    []analyze.Duplicate     `json:"duplicates"`
	RefusedSeries string                  `json:"refused_series,omitempty"`
	Refusal       []string                `json:"refusal,omitempty"` // the refused series' own reasons
	Series        []FleetSeriesJSON       `json:"series"`
	Rows          []analyze.FleetRow      `json:"rows"`
	Gates         []analyze.GateResult    `json:"gates"`
	ThresholdPct  float64                 `json:"threshold_pct"`
	Level         float64                 `json:"level"`
	Method        string                  `json:"method"`
	HetAlpha      float64                 `json:"heterogeneity_alpha"`
	Quantiles     string                  `json:"quantiles"`
	Dominant      string                  `json:"dominant_collection"`
	Notes         []string                `json:"notes"`
}

// combineMethod names the combined interval in output.
const combineMethod = "fleet-paired-t"

// machineOf describes the machine a group's runs recorded.
func machineOf(g *analyze.Group) string {
	if len(g.Runs) == 0 {
		return "unknown"
	}
	m := g.Runs[0].Manifest.Machine
	parts := []string{orUnknown(m.CPUModel)}
	if m.Cores != nil {
		parts = append(parts, fmt.Sprintf("%d cores", *m.Cores))
	}
	if m.MemoryBytes != nil {
		parts = append(parts, runfmt.FormatBytes(m.MemoryBytes))
	}
	return strings.Join(parts, ", ")
}

// BuildCombine assembles the JSON form (used by every format). all shows every
// collection, not just the dominant one and the whole-run rows.
func BuildCombine(f *analyze.Fleet, all bool) *CombineJSON {
	o := f.Options
	j := &CombineJSON{Schema: CombineSchema, Combinable: true, Mismatches: []analyze.FleetMismatch{}, Duplicates: []analyze.Duplicate{},
		Rows: []analyze.FleetRow{}, Gates: append([]analyze.GateResult{}, f.Gates...), ThresholdPct: o.ThresholdPct, Level: o.Level,
		Method: combineMethod, HetAlpha: analyze.HeterogeneityAlpha, Quantiles: string(o.Quantiles), Dominant: f.Dominant, Notes: []string{}}
	for i, c := range f.Machines {
		j.Series = append(j.Series, FleetSeriesJSON{Series: f.Series[i], Machine: machineOf(c.A), Pairs: len(c.Options.Pairs), A: groupJSON(c.A), B: groupJSON(c.B)})
		for _, n := range c.Notes {
			j.Notes = append(j.Notes, f.Series[i]+": "+n)
		}
		for _, e := range c.Excluded {
			j.Notes = append(j.Notes, fmt.Sprintf("%s: %s left out of %s: %s", f.Series[i], e.Run, strings.Join(e.Rows, ", "), e.Reason))
		}
	}
	for _, r := range f.Rows {
		if all || r.Collection == analyze.Overall || r.Collection == f.Dominant {
			j.Rows = append(j.Rows, r)
		}
	}
	return j
}

// CombineRefusalJSON is the JSON document of a refused combination.
func CombineRefusalJSON(r *analyze.FleetRefusal, o analyze.CompareOptions) *CombineJSON {
	j := &CombineJSON{Schema: CombineSchema, Mismatches: append([]analyze.FleetMismatch{}, r.Mismatches...),
		Duplicates: append([]analyze.Duplicate{}, r.Duplicates...), RefusedSeries: r.Series, Series: []FleetSeriesJSON{}, Rows: []analyze.FleetRow{},
		Gates: []analyze.GateResult{}, ThresholdPct: o.ThresholdPct, Level: o.Level, Method: combineMethod, HetAlpha: analyze.HeterogeneityAlpha,
		Quantiles: string(o.Quantiles), Notes: []string{}}
	if r.Within != nil {
		j.Refusal = RefusalLines(r.Within)
	}
	return j
}

// CombineRefusalLines explain a refused combination, one line per reason.
func CombineRefusalLines(r *analyze.FleetRefusal) []string {
	var lines []string
	if r.Within != nil {
		lines = append(lines, "refusing to combine: series "+r.Series+" is refused on its own")
		for _, l := range RefusalLines(r.Within) {
			lines = append(lines, "  "+l)
		}
	}
	if len(r.Mismatches) > 0 {
		lines = append(lines, "refusing to combine: the series differ in more than their machines")
		for _, m := range r.Mismatches {
			var v []string
			for _, s := range m.Values {
				v = append(v, fmt.Sprintf("%s (%s)", s.Value, strings.Join(s.Series, ", ")))
			}
			if m.Side == "" { // a setting of the series' plans
				lines = append(lines, fmt.Sprintf("  %s differs: %s", m.Field, strings.Join(v, " against ")))
			} else {
				lines = append(lines, fmt.Sprintf("  %s of %s differs: %s", m.Field, m.Side, strings.Join(v, " against ")))
			}
		}
	}
	if len(r.Duplicates) > 0 {
		lines = append(lines, "refusing to combine: a run is in more than one series (a copied series is not another machine)")
		for _, d := range r.Duplicates {
			lines = append(lines, "  "+duplicateLine(d))
		}
	}
	return lines
}

// heterogeneityText says whether the machines' changes differ, with its evidence.
func heterogeneityText(r analyze.FleetRow) string {
	h := r.Heterogeneity
	switch {
	case h == nil && r.HeterogeneityReason != "":
		return "not tested" // why: under each gate's machines, and in JSON
	case h == nil:
		return "-"
	case h.Differs:
		return fmt.Sprintf("DIFFER (p %s)", pValue(h.P))
	}
	return fmt.Sprintf("no evidence (p %s)", pValue(h.P))
}

func pValue(p float64) string {
	if p < 0.001 {
		return "< 0.001"
	}
	return fmt.Sprintf("%.3f", p)
}

// WriteCombine renders a fleet's combination.
func WriteCombine(w io.Writer, f *analyze.Fleet, v CompareView, fm Format) error {
	j := BuildCombine(f, v.All)
	if fm == JSON {
		return WriteJSON(w, j)
	}
	md := fm == Markdown
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	pairs := 0
	for _, s := range j.Series {
		pairs += s.Pairs
	}
	a, b := f.Machines[0].A.Build, f.Machines[0].B.Build
	title := fmt.Sprintf("B %s vs A %s on %d machines (%d pairs)", b, a, len(f.Machines), pairs)
	if md {
		p("### warmstat combine: %s\n\n", MDEscape(title))
	} else {
		p("warmstat combine: %s\n", title)
	}
	p("interval: %s %% over every machine's pairs, each machine with its own noise (Satterthwaite); noise threshold ±%s %%; quantiles %s\n",
		Fixed(100*f.Options.Level, 0), Fixed(f.Options.ThresholdPct, 1), f.Options.Quantiles)
	p("column machines: whether the change differs between the machines (a test that lets each keep its own noise; DIFFER at p < %s); the interval is the fleet's mean change either way\n\n", Fixed(analyze.HeterogeneityAlpha, 2))
	var srows [][]string
	for i, s := range j.Series {
		srows = append(srows, []string{fmt.Sprint(i + 1), s.Series, s.Machine, fmt.Sprint(s.Pairs)})
	}
	if err := Table(w, fm, 3, []string{"#", "series", "machine", "pairs"}, srows); err != nil {
		return err
	}
	p("\n")
	header := []string{"collection", "metric", "A", "B", "change", Fixed(100*f.Options.Level, 0) + " % interval", "verdict", "machines"}
	var rows [][]string
	for _, r := range j.Rows {
		ci := "-"
		if r.CILowPct != nil {
			ci = "[" + signedPct(r.CILowPct) + ", " + signedPct(r.CIHighPct) + "]"
		}
		rows = append(rows, []string{collName(r.Collection), metricNames[r.Metric], figure(r.A, r.Unit), figure(r.B, r.Unit),
			signedPct(r.DeltaPct), ci, string(r.Verdict), heterogeneityText(r)})
	}
	if err := Table(w, fm, 2, header, rows); err != nil {
		return err
	}
	// each gate's row machine by machine: where the combined figure comes from
	for _, g := range f.Gates {
		k := slices.IndexFunc(f.Rows, func(r analyze.FleetRow) bool { return r.Name() == g.Gate })
		r := f.Rows[k]
		p("\n%s %s, machine by machine:\n", collName(r.Collection), metricNames[r.Metric])
		if md {
			p("\n")
		}
		var mrows [][]string
		for i, m := range r.Machines {
			ci := "-"
			if m.CILowPct != nil {
				ci = "[" + signedPct(m.CILowPct) + ", " + signedPct(m.CIHighPct) + "]"
			}
			mrows = append(mrows, []string{fmt.Sprint(i + 1), fmt.Sprint(m.Pairs), signedPct(m.DeltaPct), ci, pctOrDash(m.NoisePct)})
		}
		ci := "-"
		if r.CILowPct != nil {
			ci = "[" + signedPct(r.CILowPct) + ", " + signedPct(r.CIHighPct) + "]"
		}
		mrows = append(mrows, []string{"all", fmt.Sprint(r.RunsA), signedPct(r.DeltaPct), ci, pctOrDash(r.PairCVPct)})
		if err := Table(w, fm, 1, []string{"#", "pairs", "change", "interval", "within-pair noise"}, mrows); err != nil {
			return err
		}
		if md {
			p("\n")
		}
		p("%s\n", heterogeneityLine(r))
	}
	if len(j.Notes) > 0 {
		p("\n")
		for _, n := range j.Notes {
			if md {
				p("- note: %s\n", MDEscape(n))
			} else {
				p("note: %s\n", n)
			}
		}
	}
	if len(f.Gates) > 0 {
		p("\n")
		for _, g := range f.Gates {
			p("%s\n", GateLine(g))
		}
	}
	return nil
}

// heterogeneityLine is the statement on whether the machines see different changes.
func heterogeneityLine(r analyze.FleetRow) string {
	h := r.Heterogeneity
	if h == nil && r.HeterogeneityReason != "" {
		return "whether the machines' changes differ: not tested (" + r.HeterogeneityReason + ")"
	}
	if h == nil {
		return "whether the machines' changes differ: " + heterogeneityText(r)
	}
	if h.Differs {
		var parts []string
		for i, m := range r.Machines {
			parts = append(parts, fmt.Sprintf("%d: %s", i+1, signedPct(m.DeltaPct)))
		}
		return fmt.Sprintf("the change DIFFERS between the machines (p %s; %s): the combined figure is their average, not any one machine's; find what sets the machines apart",
			pValue(h.P), strings.Join(parts, ", "))
	}
	return fmt.Sprintf("no evidence that the change differs between the machines (p %s)", pValue(h.P))
}

func pctOrDash(v *float64) string {
	if v == nil {
		return "-"
	}
	return Fixed(*v, 2) + " %"
}

func collName(c string) string {
	if c == analyze.Overall {
		return "all"
	}
	return c
}

// CombinePlotSize is CombinePlot's size: a line for each machine and one for the
// combined change, per gate.
func CombinePlotSize(f *analyze.Fleet) PlotSize {
	return PlotSize{W: 900, H: 150 + 40*len(f.Gates)*(len(f.Machines)+1)}
}

// CombinePlot draws, for each gate, every machine's change with its interval and the
// combined one, against the noise-threshold band.
func CombinePlot(f *analyze.Fleet) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Change of B (%s) vs A (%s) on %d machines, %s %% intervals", f.Machines[0].B.Build, f.Machines[0].A.Build,
		len(f.Machines), Fixed(100*f.Options.Level, 0))
	p.X.Label.Text = "change (%)  -  left is faster, right is slower"
	type item struct {
		label     string
		d, lo, hi *float64
		combined  bool
	}
	var items []item
	for _, g := range f.Gates {
		k := slices.IndexFunc(f.Rows, func(r analyze.FleetRow) bool { return r.Name() == g.Gate })
		r := f.Rows[k]
		name := collName(r.Collection) + " " + metricNames[r.Metric]
		for i, m := range r.Machines {
			items = append(items, item{fmt.Sprintf("%s · machine %d", name, i+1), m.DeltaPct, m.CILowPct, m.CIHighPct, false})
		}
		items = append(items, item{name + " · combined", r.DeltaPct, r.CILowPct, r.CIHighPct, true})
	}
	items = slices.DeleteFunc(items, func(it item) bool { return it.d == nil })
	if len(items) == 0 {
		return nil, fmt.Errorf("nothing to plot: no gate has figures on both sides")
	}
	slices.Reverse(items) // the first on top
	th := f.Options.ThresholdPct
	lo, hi := -th, th
	labels := make([]string, len(items))
	for i, it := range items {
		labels[i] = it.label
		lo, hi = math.Min(lo, *it.d), math.Max(hi, *it.d)
		if it.lo != nil {
			lo, hi = math.Min(lo, *it.lo), math.Max(hi, *it.hi)
		}
	}
	if err := thresholdBand(p, th, len(items)); err != nil {
		return nil, err
	}
	for _, combined := range []bool{false, true} {
		var ivs []interval
		for i, it := range items {
			if it.combined == combined {
				ivs = append(ivs, interval{i, it.d, it.lo, it.hi})
			}
		}
		if len(ivs) == 0 {
			continue
		}
		pts, bars, err := intervalBars(ivs)
		if err != nil {
			return nil, err
		}
		c, width, shape, legend := color.Color(color.Gray{Y: 90}), vg.Points(1.2), draw.GlyphDrawer(draw.CircleGlyph{}), "one machine"
		if combined {
			c, width, shape, legend = color.RGBA{R: 30, G: 70, B: 190, A: 255}, vg.Points(2.4), draw.GlyphDrawer(draw.BoxGlyph{}), "combined"
		}
		bars.LineStyle = draw.LineStyle{Color: c, Width: width}
		sc, _ := plotter.NewScatter(pts)
		sc.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(3.5), Shape: shape}
		p.Add(bars, sc)
		p.Legend.Add(legend, sc)
	}
	p.NominalY(labels...)
	pad := (hi - lo) * 0.08
	p.X.Min, p.X.Max = lo-pad, hi+pad
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p, nil
}
