package report

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/history"
	"github.com/warmstat/warmstat/internal/synthrun"
	"github.com/warmstat/warmstat/runfmt"
)

// historyOf is a line of n builds (a run each) whose Product mean steps by -14 % at
// build stepAt, on a machine whose speed swings by more than the step, analysed.
func historyOf(t *testing.T, n, stepAt int) history.Analysis {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	var points []history.Point
	for i := range n {
		effect := 1.0
		if i >= stepAt {
			effect = 0.86
		}
		d := filepath.Join(t.TempDir(), "run")
		if _, err := synthrun.Write(d, synthrun.Spec{Label: fmt.Sprintf("c%02d", i+1), Seed: uint64(i + 1), Effect: effect, Tau: 0.004,
			Machine: 0.06 * rng.NormFloat64(), Theta: 2.5, Cost: true}); err != nil {
			t.Fatal(err)
		}
		run, err := runfmt.Open(d)
		if err != nil {
			t.Fatal(err)
		}
		o := i + 1
		p, err := history.PointOf(context.Background(), run, history.Placement{Order: &o})
		if err != nil {
			t.Fatal(err)
		}
		points = append(points, p)
	}
	return history.Analyze(history.Lines(points)[0], analyze.ChangePointOptions{})
}

// figureSection is the page's part for one figure of the first line.
func figureSection(t *testing.T, page, figure string) string {
	t.Helper()
	at := strings.Index(page, `<figure data-figure="`+figure+`"`)
	if at < 0 {
		t.Fatalf("no figure %s on the page", figure)
	}
	end := strings.Index(page[at:], "</figure>")
	return page[at : at+end]
}

// valuesOf are the data-value of the circles of class, by build (1-based).
func valuesOf(t *testing.T, section, class string) map[int]float64 {
	t.Helper()
	out := map[int]float64{}
	for _, m := range regexp.MustCompile(`<circle class="`+class+`" data-build="(\d+)"[^>]* data-value="([^"]+)"`).FindAllStringSubmatch(section, -1) {
		b, _ := strconv.Atoi(m[1])
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Fatal(err)
		}
		out[b] = v
	}
	return out
}

// The page draws what the change points were found in: the Product mean at one machine
// speed (history's figures, not recomputed), on which the step parts the builds, with
// the figures as measured faint beside; a figure not adjusted is drawn once, as
// measured. A change point's follow-up shows where history's rule says it is of that
// change point, on the page and in the text alike.
func TestHistoryPageDrawsWhatWasJudged(t *testing.T) {
	a := historyOf(t, 24, 14)
	mean := a.Series[0]
	if mean.Seg == nil || len(mean.Seg.ChangePoints) != 1 || mean.Seg.ChangePoints[0].Index != 14 || mean.Adjusted() == nil {
		t.Fatalf("the Product mean's change points: %+v", mean.Seg)
	}
	bi, ai := mean.Span(mean.Seg.ChangePoints[0])
	before, after := a.Line.Builds[bi].Build, a.Line.Builds[ai].Build
	after.Label = "relabelled" // without a commit, another label is another build: a record of it is not this change point's
	a.Confirmations = []history.Confirmation{{Metric: history.FigureProductMean, Before: before, After: a.Line.Builds[ai].Build, Gate: "Product/mean_adj",
		Verdict: analyze.Faster, Confirmed: true, Series: "followed/x/confirm"}}
	h := BuildHistory("hist", []history.Analysis{a})
	var page bytes.Buffer
	if err := WriteHistoryPage(&page, h, time.Now()); err != nil {
		t.Fatal(err)
	}
	sec := figureSection(t, page.String(), history.FigureProductMean)
	shown, plain := valuesOf(t, sec, "point"), valuesOf(t, sec, "plain")
	adj := mean.Adjusted()
	if len(shown) != 24 || len(plain) != 24 {
		t.Fatalf("%d points and %d faint ones, want 24 each", len(shown), len(plain))
	}
	for k, b := range mean.Builds {
		if shown[b+1] != adj[k] || plain[b+1] != mean.Values[k] {
			t.Errorf("build %d: drawn %v (faint %v), history has %v at one speed, %v as measured", b+1, shown[b+1], plain[b+1], adj[k], mean.Values[k])
		}
	}
	lowestBefore, highestAfter := 1e300, 0.0
	for b, v := range shown {
		if b <= 14 {
			lowestBefore = min(lowestBefore, v)
		} else {
			highestAfter = max(highestAfter, v)
		}
	}
	if highestAfter >= lowestBefore {
		t.Errorf("on the main line the step does not part the builds: after it up to %v, before it down to %v", highestAfter, lowestBefore)
	}
	if !strings.Contains(sec, `data-adjusted="true"`) || !strings.Contains(sec, `class="plain-trace"`) || !strings.Contains(sec, "at one machine speed") {
		t.Error("the adjusted chart does not say what it draws")
	}
	alloc := figureSection(t, page.String(), history.FigureProductAlloc)
	if len(valuesOf(t, alloc, "plain")) != 0 || len(valuesOf(t, alloc, "point")) != 24 || !strings.Contains(alloc, `data-adjusted="false"`) {
		t.Error("the allocation, not adjusted, is not drawn once as measured")
	}
	if !strings.Contains(page.String(), `data-confirmation="true"`) {
		t.Error("the change point's confirmation is not on the page")
	}
	var text bytes.Buffer
	if err := WriteHistory(&text, h, Text); err != nil || !strings.Contains(text.String(), "confirmed by a series (Product/mean_adj faster: no interval; followed/x/confirm)") {
		t.Errorf("the text: %v\n%s", err, text.String())
	}
	// the record of another build after the step is of no change point of this line
	h.Lines[0].Confirmations[0].After = after
	page.Reset()
	text.Reset()
	WriteHistoryPage(&page, h, time.Now())
	WriteHistory(&text, h, Text)
	if strings.Contains(page.String(), "data-confirmation") || strings.Contains(text.String(), "by a series") {
		t.Error("a record of another build shown as the change point's follow-up")
	}
}

// Every build's runs' range stays inside the plot, whether the figure is adjusted or
// drawn as measured: a line of 2 builds (no change points looked for, so its figures
// are as measured) whose runs spread far beyond their builds' means.
func TestHistoryPageRangesStayInThePlot(t *testing.T) {
	var points []history.Point
	for i, machine := range []float64{0.3, -0.2, 0, 0.25, -0.3, 0} {
		d := filepath.Join(t.TempDir(), "run")
		if _, err := synthrun.Write(d, synthrun.Spec{Label: fmt.Sprintf("c%d", i/3+1), Seed: uint64(i + 1), Effect: 1, Tau: 0.004,
			Machine: machine, Theta: 2.5, Cost: true}); err != nil {
			t.Fatal(err)
		}
		run, err := runfmt.Open(d)
		if err != nil {
			t.Fatal(err)
		}
		o := i/3 + 1
		p, err := history.PointOf(context.Background(), run, history.Placement{Order: &o})
		if err != nil {
			t.Fatal(err)
		}
		points = append(points, p)
	}
	a := history.Analyze(history.Lines(points)[0], analyze.ChangePointOptions{})
	var b bytes.Buffer
	if err := WriteHistoryPage(&b, BuildHistory("h", []history.Analysis{a}), time.Now()); err != nil {
		t.Fatal(err)
	}
	ranges := regexp.MustCompile(`<line class="(?:plain-)?range" x1="[^"]+" y1="([^"]+)" x2="[^"]+" y2="([^"]+)"`).FindAllStringSubmatch(b.String(), -1)
	if len(ranges) == 0 {
		t.Fatal("no run range drawn")
	}
	for _, m := range ranges {
		for _, s := range m[1:] {
			if y, _ := strconv.ParseFloat(s, 64); y < padT || y > chartH-padB {
				t.Fatalf("a run range reaches y %.1f, outside the plot [%d, %d]", y, padT, chartH-padB)
			}
		}
	}
}
