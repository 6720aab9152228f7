package report

import (
	"fmt"
	"io"
	"strconv"

	"github.com/warmstat/warmstat/base/numfmt"
	"github.com/warmstat/warmstat/seed"
	"github.com/warmstat/warmstat/shape"
)

// WriteShapeSummary is a measured shape at a glance, one row per collection: the
// entities measured, the attributes its entities carry, references and prices per entity, and
// the reference whose targets draw the most references (the fan-in that grows the
// entangled entities' containers).
func WriteShapeSummary(w io.Writer, p *seed.Profile) error {
	rows := make([][]string, 0, len(p.Collections))
	for _, c := range p.Collections {
		present := 0
		for _, a := range c.Attributes {
			if !a.Absent {
				present++
			}
		}
		var refs float64
		top, topName := int64(0), "-"
		for _, r := range c.References {
			refs += r.Mean
			if r.FanIn != nil && len(r.FanIn.Top) > 0 && r.FanIn.Top[0] > top {
				top, topName = r.FanIn.Top[0], r.Name
			}
		}
		prices := "-"
		if c.Prices != nil {
			prices = strconv.FormatFloat(c.Prices.Mean, 'f', 1, 64)
		}
		fan := "-"
		if top > 0 {
			fan = fmt.Sprintf("%s %s", topName, numfmt.Group(strconv.FormatInt(top, 10)))
		}
		entangled := "-"
		if e := c.Entangled; e != nil {
			entangled = fmt.Sprintf("%s (%.3g × %s)", numfmt.Group(strconv.FormatFloat(e.ScannedPerEntity, 'f', 0, 64)),
				e.ApplicationsPerEntity, numfmt.Group(strconv.FormatFloat(e.ScannedPerApplication, 'f', 0, 64)))
		}
		entities := c.MeasuredOn
		if entities == 0 { // a hand-written profile: its count at scale 1
			entities = int64(c.Count)
		}
		rows = append(rows, []string{c.Name, numfmt.Group(strconv.FormatInt(entities, 10)), fmt.Sprintf("%d/%d", present, len(c.Attributes)),
			strconv.FormatFloat(refs, 'f', 1, 64), prices, fan, entangled})
	}
	return Table(w, Text, 1, []string{"collection", "entities", "attributes", "references/entity", "prices/entity", "largest fan-in",
		"back-refs scanned/entity"}, rows)
}

// WriteShapeDifferences lists where one shape strays from another (shape.Compare).
func WriteShapeDifferences(w io.Writer, diffs []shape.Difference) error {
	rows := make([][]string, 0, len(diffs))
	for _, d := range diffs {
		rows = append(rows, []string{d.Where, d.What, d.Got, d.Want, d.Limit})
	}
	return Table(w, Text, 2, []string{"where", "figure", "got", "want", "tolerance"}, rows)
}
