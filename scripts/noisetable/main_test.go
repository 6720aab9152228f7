package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/report"
)

// The row holds, per figure, the between-run and within-pair noise of the compare
// document it reads, and — for a figure without them — dashes.
func TestRow(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	doc := report.CompareJSON{Dominant: "Product", Pairs: make([]analyze.Pair, 4), Rows: []analyze.Row{
		{Collection: "Product", Metric: "mean", CVPct: f(5.5), PairCVPct: f(1.6)},
		{Collection: "*", Metric: "load_wall", CVPct: f(6.3), PairCVPct: f(2.9)},
		{Collection: "*", Metric: "golive"},
	}}
	b, _ := json.Marshal(doc)
	got, err := row(strings.NewReader(string(b)), "replay", "95")
	// ±95 % per machine-hour: 1.96 · √2 · 1.6 / √(3600 / 190) = 1.02
	if want := "| replay | 4 | 5.50 | 1.60 | 6.30 | 2.90 | — | — | 95 | 1.02 |"; err != nil || got != want {
		t.Fatalf("got %q (%v), want %q", got, err, want)
	}
	if _, err := row(strings.NewReader("not json"), "x", "1"); err == nil {
		t.Fatal("a non-document accepted")
	}
}
