package report

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
)

// The timeline's axes: upsert numbers are whole numbers with grouping (1,000, not
// 1000.00), and the lines end below the legend's rows at the top of the plot.
func TestTimelineAxes(t *testing.T) {
	var labels []string
	for _, tk := range (countTicks{}).Ticks(0, 2000) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if !slices.Contains(labels, "1,000") || slices.ContainsFunc(labels, func(l string) bool { return strings.Contains(l, ".") }) {
		t.Fatalf("tick labels %q", labels)
	}
	p := plot.New()
	p.Y.Scale = plot.LogScale{}
	legendRoom(p, 100, 10000, 4) // 4 legend rows: the top 21 % for the legend
	if top := (math.Log(10000) - math.Log(100)) / (math.Log(p.Y.Max) - math.Log(p.Y.Min)); math.Abs(top-0.79) > 1e-9 || p.Y.Min != 100 {
		t.Fatalf("the data end at %.3f of the axis [%g, %g]", top, p.Y.Min, p.Y.Max)
	}
}

// A count of things reads "1 run", "2 runs": never "(1 runs)".
func TestPlural(t *testing.T) {
	if Plural(1, "run") != "1 run" || Plural(0, "run") != "0 runs" || Plural(3, "more collection") != "3 more collections" {
		t.Fatal(Plural(1, "run"), Plural(0, "run"), Plural(3, "more collection"))
	}
}

// An interval's end beyond ×1,000 says only that (the digits of +858543621329224671967391514624 % are no figure).
func TestSignedPctBeyondAThousandfold(t *testing.T) {
	if SignedPct(8.5e29) != ">+99,900" || SignedPct(823.44) != "+823.4" || SignedPct(-100) != "-100.0" || SignedPct(1149.3) != "+1,149.3" {
		t.Fatal(SignedPct(8.5e29), SignedPct(823.44), SignedPct(-100), SignedPct(1149.3))
	}
}
