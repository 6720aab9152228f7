package report

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/series"
)

// SeriesDetail shows a finished series as compare, table --group and plot --kind
// compare show its sides (with their defaults: 95 % intervals of the series' pairs,
// unless it ran unpaired), composed from the packages they call.
func SeriesDetail(w io.Writer, st *series.State, dir string) error {
	a, b := filepath.Join(dir, "A"), filepath.Join(dir, "B")
	opts := analyze.CompareOptions{ThresholdPct: 2, Method: analyze.Unpaired, Resamples: 10000, Seed: 1, Quantiles: analyze.QuantilesJava}
	if !st.Plan.Unpaired {
		opts.Method, opts.Pairs = analyze.Paired, st.Pairs(dir)
	}
	var groups []*analyze.Group
	var runs [2][]*analyze.RunSummary
	for i, p := range []string{a, b} {
		g, err := analyze.LoadGroup([]string{"A", "B"}[i], p, analyze.LoadOptions{})
		if err != nil {
			return err
		}
		groups = append(groups, g)
		for _, r := range g.Runs {
			s, err := analyze.Summarize(r, analyze.QuantilesJava)
			if err != nil {
				return err
			}
			runs[i] = append(runs[i], s)
		}
	}
	fmt.Fprintf(w, "\n== warmstat compare %s %s (95 %% intervals of the final runs; the series' verdicts below use the sequential interval)\n", a, b)
	c, err := analyze.Compare(groups[0], groups[1], opts)
	if err != nil {
		return err
	}
	if err := WriteCompare(w, c, CompareView{MoreHint: "with --all"}, Text); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n== warmstat table --group %s %s\n", a, b)
	t, err := BuildTable([]TableEntry{{Label: a, Runs: runs[0], Group: true, Excluded: groups[0].Excluded},
		{Label: b, Runs: runs[1], Group: true, Excluded: groups[1].Excluded}}, nil)
	if err == nil {
		err = WriteTable(w, t, Markdown)
	}
	if err != nil {
		return err
	}
	svg, size := filepath.Join(dir, "compare.svg"), PlotSize{W: 960, H: 600}
	p, err := ComparePlot(c, false)
	if err == nil {
		err = SaveAs(p, size, svg)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s (%dx%d)\n", svg, size.W, size.H)
	return nil
}
