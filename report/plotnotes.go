package report

import (
	"fmt"
	"io"

	"github.com/warmstat/warmstat/analyze"
	"gonum.org/v1/plot"
)

// RunsPlot draws the runs of groups, one collection of each (analyze.ProfilesOf):
// their latency distributions (cdf) or their latency over the load (timeline, blocks
// of block upserts). Each run left out is named in a note on w first, so a picture
// never silently lacks one.
func RunsPlot(w io.Writer, timeline bool, groups []*analyze.Group, collection string, q analyze.Quantiles, block int) (*plot.Plot, error) {
	for _, g := range groups {
		for _, x := range g.Excluded {
			fmt.Fprintf(w, "note: %s is not plotted: %s\n", x.Run, x.Reason)
		}
	}
	profiles, err := analyze.ProfilesOf(groups, collection, q, block)
	if err != nil {
		return nil, err
	}
	if timeline {
		return TimelinePlot(profiles)
	}
	return CDFPlot(profiles)
}

// ComparisonPlot draws comparison c (ComparePlot), its notes (what weakens it) said
// on w first, as compare's text would say them.
func ComparisonPlot(w io.Writer, c *analyze.Comparison, all bool) (*plot.Plot, error) {
	for _, n := range BuildCompare(c, false).Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return ComparePlot(c, all)
}
