package bisect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warmstat/warmstat/analyze"
)

// history is a synthetic commit history: each commit's true time (good is 1.0), an
// oracle that measures b against a with an interval of ±halfWidth % around the true
// change and the series' threshold rule, and commits that do not build.
type history struct {
	good      string
	commits   []string
	time      map[string]float64
	halfWidth float64
	// logHalfWidth, when set, replaces halfWidth: the interval is the true ratio
	// divided and multiplied by its exponential (few runs of a large change)
	logHalfWidth float64
	broken       map[string]bool
	asked        [][2]string
}

const thresholdPct = 2

func newHistory(times ...float64) *history {
	h := &history{good: "g000", time: map[string]float64{"g000": 1}, halfWidth: 1.5, broken: map[string]bool{}}
	for i, t := range times {
		c := fmt.Sprintf("c%03d", i+1)
		h.commits = append(h.commits, c)
		h.time[c] = t
	}
	return h
}

func (h *history) oracle(_ context.Context, a, b string) (Result, error) {
	h.asked = append(h.asked, [2]string{a, b})
	if h.broken[b] {
		return Result{}, fmt.Errorf("building: %w", &Skip{Commit: b, Reason: "the build failed"})
	}
	d := 100 * (h.time[b]/h.time[a] - 1)
	lo, hi := d-h.halfWidth, d+h.halfWidth
	if h.logHalfWidth > 0 { // an interval on the ratio's logarithm, as analyze's
		r := h.time[b] / h.time[a]
		lo, hi = 100*(r*math.Exp(-h.logHalfWidth)-1), 100*(r*math.Exp(h.logHalfWidth)-1)
	}
	v := analyze.Unresolved
	switch {
	case lo > thresholdPct:
		v = analyze.Slower
	case hi < -thresholdPct:
		v = analyze.Faster
	case lo > -thresholdPct && hi < thresholdPct:
		v = analyze.Equivalent
	}
	return Result{A: a, B: b, Verdict: v, Gate: analyze.GateLook{Gate: "Product/mean", DeltaPct: &d, LowPct: &lo, HighPct: &hi, Verdict: v}}, nil
}

func (h *history) search(t *testing.T) *Outcome {
	t.Helper()
	out, err := Search(context.Background(), h.good, h.commits, h.oracle)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func culprits(o *Outcome) []string {
	var c []string
	for _, x := range o.Culprits {
		c = append(c, x.Commit)
	}
	return c
}

// steps is a history of n commits, slower by pct % from each commit at index in at on.
func steps(n int, pct float64, at ...int) *history {
	times := make([]float64, n)
	t := 1.0
	for i := range times {
		if slices.Contains(at, i) {
			t *= 1 + pct/100
		}
		times[i] = t
	}
	return newHistory(times...)
}

func TestSearchFindsTheCulpritInLogTime(t *testing.T) {
	for _, n := range []int{1, 2, 3, 8, 9, 16, 33} {
		for k := range n {
			h := steps(n, 10, k)
			o := h.search(t)
			if o.Kind != Found || !slices.Equal(culprits(o), []string{h.commits[k]}) {
				t.Fatalf("n=%d culprit %d: %s %v", n, k, o.Kind, culprits(o))
			}
			if c := o.Culprits[0]; c.Reference != h.good || c.Change.B != h.commits[k] || math.Abs(*c.Change.Gate.DeltaPct-10) > 1e-9 {
				t.Fatalf("n=%d culprit %d: its change %+v", n, k, c)
			}
			// the confirmation and at most ⌈log₂ n⌉ probes
			if limit := 1 + int(math.Ceil(math.Log2(float64(n)))); len(h.asked) > limit || len(o.Probes) != len(h.asked) {
				t.Fatalf("n=%d culprit %d: %d series (%v), want at most %d", n, k, len(h.asked), h.asked, limit)
			}
		}
	}
}

func TestSearchNeedsAConfirmedRegression(t *testing.T) {
	for name, h := range map[string]*history{"none": steps(8, 0), "faster": steps(8, -10, 3), "within noise": steps(8, 1, 3)} {
		o := h.search(t)
		if o.Kind != NoRegression || len(h.asked) != 1 || o.Culprits != nil || o.Confirm.B != h.commits[7] {
			t.Errorf("%s: %s after %v, culprits %v", name, o.Kind, h.asked, culprits(o))
		}
	}
}

func TestSearchSkipsWhatDoesNotBuild(t *testing.T) {
	h := steps(9, 10, 5)
	h.broken["c004"], h.broken["c003"] = true, true // the first probe and its nearer neighbour
	o := h.search(t)
	if o.Kind != Found || !slices.Equal(culprits(o), []string{"c006"}) || len(o.Skipped) != 2 || o.Skipped[0].Commit != "c003" || o.Skipped[1].Commit != "c004" {
		t.Fatalf("%s %v skipped %v after %v", o.Kind, culprits(o), o.Skipped, h.asked)
	}
	// the culprit itself does not build: the range it hides in is named
	h = steps(9, 10, 5)
	h.broken["c005"], h.broken["c006"] = true, true
	o = h.search(t)
	if o.Kind != Unbuildable || len(o.Culprits) != 1 || !slices.Equal(o.Culprits[0].Range, []string{"c005", "c006", "c007"}) {
		t.Fatalf("%s %+v after %v", o.Kind, o.Culprits, h.asked)
	}
	// the bad end does not build: nothing to confirm
	h = steps(4, 10, 2)
	h.broken["c004"] = true
	if o, err := Search(context.Background(), h.good, h.commits, h.oracle); !errors.As(err, new(*Skip)) || o.Kind != Unmeasurable ||
		o.Detail != "the bad commit c004 cannot be measured: the build failed" {
		t.Fatalf("unbuildable bad end: %v %+v", err, o)
	}
}

func TestSearchNamesEachPartOfASplitRegression(t *testing.T) {
	h := steps(12, 12, 3, 9)
	o := h.search(t)
	if o.Kind != Found || !slices.Equal(culprits(o), []string{"c004", "c010"}) {
		t.Fatalf("%s %v after %v", o.Kind, culprits(o), h.asked)
	}
	// the second part is measured against the end of the first
	if c := o.Culprits[1]; c.Reference == h.good || h.time[c.Reference] != h.time["c004"] || math.Abs(*c.Change.Gate.DeltaPct-12) > 1e-9 {
		t.Fatalf("second part %+v", c)
	}
}

// Two large parts measured with few runs: the probe's interval and the whole's
// overlap, but the whole's point lies above the probe's interval, so the rest is
// measured and named (CI's bisect of 2026-12-03 named only the first).
func TestSearchNamesBothPartsThroughWideIntervals(t *testing.T) {
	h := newHistory(1, 5, 5, 25)
	h.logHalfWidth = math.Log(4) // the first part +400 % [+25, +1,900], the whole +2,400 % [+525, +9,900]
	o := h.search(t)
	if o.Kind != Found || !slices.Equal(culprits(o), []string{"c002", "c004"}) {
		t.Fatalf("%s %v after %v", o.Kind, culprits(o), h.asked)
	}
	if c := o.Culprits[1]; c.Reference != "c002" || math.Abs(*c.Change.Gate.DeltaPct-400) > 1e-9 {
		t.Fatalf("second part %+v", c)
	}
}

func TestSearchPutsAnUnresolvedProbeAgainstTheBadEnd(t *testing.T) {
	// 1.5 % at c003 (unresolved against good at ±3 %), 20 % at c006
	h := newHistory(1, 1, 1.015, 1.015, 1.015, 1.2, 1.2, 1.2)
	h.halfWidth = 3
	o := h.search(t)
	if o.Kind != Found || !slices.Equal(culprits(o), []string{"c006"}) {
		t.Fatalf("%s %v after %v", o.Kind, culprits(o), h.asked)
	}
	// unresolved against both ends: said, never guessed
	h = steps(8, 10, 4)
	h.halfWidth = 7 // the confirmation resolves (10 ± 7 > 2), a probe in the middle does against neither end
	h.time["c004"] = 1.05
	o = h.search(t)
	if o.Kind != Undecidable || o.Open[1] == "" || o.Detail == "" {
		t.Fatalf("%s open %v %q after %v", o.Kind, o.Open, o.Detail, h.asked)
	}
}

// An interrupted bisect resumes from bisect.json without redoing a finished series;
// another plan in its directory is refused naming the field.
func TestResumedSearchRedoesNoFinishedSeries(t *testing.T) {
	dir := t.TempDir()
	h := steps(16, 10, 11)
	plan := Plan{Root: "/src/evitaDB", Good: "g000", Bad: "c016", Gate: "Product/mean", Series: "heaps 1g"}
	var commits []Commit
	for _, c := range h.commits {
		commits = append(commits, Commit{Hash: c})
	}
	now := func() time.Time { return time.Unix(1e9, 0) }
	stopAt := 3 // the machine dies during the third series
	calls := 0
	dying := func(ctx context.Context, a, b string) (Result, error) {
		if calls++; calls == stopAt {
			return Result{}, errors.New("killed")
		}
		return h.oracle(ctx, a, b)
	}
	s, err := Open(dir, plan, Commit{Hash: h.good}, commits, now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Search(context.Background(), h.good, h.commits, s.Remembering(dir, dying, now)); err == nil {
		t.Fatal("the interrupted search reported no error")
	}
	first := len(h.asked)
	s, err = Open(dir, plan, Commit{Hash: h.good}, commits, now())
	if err != nil || len(s.Probes) != stopAt-1 {
		t.Fatalf("reopened: %v, %d probes recorded", err, len(s.Probes))
	}
	h.asked = nil
	o, err := Search(context.Background(), h.good, h.commits, s.Remembering(dir, h.oracle, now))
	if err != nil || o.Kind != Found || !slices.Equal(culprits(o), []string{"c012"}) {
		t.Fatalf("resumed: %v %+v", err, o)
	}
	if err := s.Finish(dir, o); err != nil {
		t.Fatal(err)
	}
	total := steps(16, 10, 11)
	total.search(t)
	if first+len(h.asked) != len(total.asked) { // the killed series runs again, no finished one does
		t.Fatalf("%d series before the kill and %d after, a whole bisect asks %d", first, len(h.asked), len(total.asked))
	}
	if r, err := Read(dir); err != nil || r.Outcome == nil || r.Outcome.Kind != Found || r.Outcome.Culprits[0].Commit != "c012" ||
		r.Outcome.Culprits[0].Change.Gate.DeltaPct == nil {
		t.Fatalf("bisect.json's outcome: %v %+v", err, r)
	}
	other := plan
	other.Series = "heaps 2g"
	if _, err := Open(dir, other, Commit{Hash: h.good}, commits, now()); !errors.Is(err, ErrPlanDiffers) || !strings.Contains(err.Error(), "its series settings: heaps 1g then, heaps 2g now") {
		t.Fatalf("another plan: %v", err)
	}
	if _, err := Open(dir, plan, Commit{Hash: h.good}, commits[:15], now()); !errors.Is(err, ErrPlanDiffers) {
		t.Fatalf("other commits: %v", err)
	}
}
