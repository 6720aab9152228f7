package report

import (
	"strings"
	"testing"

	"github.com/warmstat/warmstat/profile"
)

// With runs pooled, the table gives each entry's range over them (text and markdown
// alike); with one run it has no such column.
func TestFidelityShowsTheRunsApart(t *testing.T) {
	share := func(v float64) *float64 { return &v }
	yes, no := true, false
	f := &profile.Fidelity{
		Reference: &profile.Reference{Name: "ref", About: "made up", Path: "test.ref"},
		Within:    1.5,
		Entries: []profile.FidelityRow{
			{RefEntry: profile.RefEntry{ID: "get", Event: "cpu", Measure: "total", Share: 20, Main: true},
				RunShare: share(17.5), Ratio: share(0.875), Faithful: &yes, RunShares: []profile.RunShare{{Dir: "r1", SharePct: 10}, {Dir: "r2", SharePct: 25}}},
			{RefEntry: profile.RefEntry{ID: "key", Event: "alloc", Measure: "self", Share: 40, Main: true},
				RunShare: share(4), Ratio: share(0.1), Faithful: &no},
		},
		Summary: profile.FidelitySummary{Main: 2, MainMeasured: 2, MainFaithful: 1, Unsettled: []string{"get"}},
	}
	for _, format := range []Format{Text, Markdown} {
		var b strings.Builder
		if err := WriteFidelity(&b, f, format); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, "runs apart") || !strings.Contains(out, "10.00–25.00 % (2)") ||
			!strings.Contains(out, "one run alone would have judged otherwise: get") {
			t.Errorf("format %v:\n%s", format, out)
		}
	}
	f.Entries[0].RunShares, f.Summary.Unsettled = nil, nil
	var b strings.Builder
	if err := WriteFidelity(&b, f, Text); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "runs apart") {
		t.Errorf("one run, yet a column of runs apart:\n%s", b.String())
	}
}
