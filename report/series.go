package report

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/series"
)

// The presentation of an A/B series (ab; bisect's probes are series too): a line per run
// as it ends, each look's estimates, the table of runs, and the answer in words. The
// answer is one model, SeriesAnswer, rendered as text, markdown or JSON; every figure in it
// comes from the series' record (analyze's verdicts, series' bookkeeping).

// SeriesRun is the line printed when a run ends: its headline figures, the machine around
// it, an outlier's reason, the time it took, and what is left of the series.
func SeriesRun(w io.Writer, s *series.State, e series.Entry, eta series.ETA) {
	line := fmt.Sprintf("%3d  %-5s %-13s", e.Seq, e.Side, e.Dir)
	if e.Slot > 0 { // a duet's run: which half of the machine it had
		line += fmt.Sprintf(" slot %d", e.Slot)
	}
	switch {
	case e.Status == series.Failed:
		line += "  FAILED: " + e.Reason + " (excluded, run again)"
	case e.Status == series.Interrupted:
		line += "  INTERRUPTED: excluded; run again when the series resumes (the same command)"
	case e.Health != nil:
		h := e.Health
		line += fmt.Sprintf("  %s mean %s µs  load %s s  goLive %s s  TOTAL %s s", h.Collection, opt(h.MeanUs, 0), opt(h.LoadS, 1), opt(h.GoLiveS, 1), opt(h.TotalS, 1))
	case e.Kind == series.Warmup:
		line += "  warm-up (not analysed)"
	}
	if m := e.Machine; m != nil {
		line += fmt.Sprintf("  [load avg %.1f→%.1f, others %.0f %% CPU]", m.LoadAvgBefore, m.LoadAvgAfter, m.OtherCPUPct)
	}
	fmt.Fprintln(w, line)
	if e.Health != nil && e.Health.Outlier != "" {
		fmt.Fprintf(w, "     OUTLIER: %s\n", e.Health.Outlier)
	}
	if e.Status == series.Replaced {
		fmt.Fprintf(w, "     replaced (--rerun-outliers): %s\n", e.Reason)
	}
	if took, ok := e.Wall(); ok {
		if outside, ok := e.Outside(); ok {
			fmt.Fprintf(w, "     run took %s, %s of it outside the load and goLive (%s); the series has run %s\n",
				took.Round(time.Second), outside.Round(time.Second), outsideWhat(s.Plan), s.MachineTime().Round(time.Second))
		}
	}
	most := (eta.PerRun * time.Duration(eta.Left)).Round(time.Second)
	switch {
	case eta.Fixed: // no early stop: the runs left are certain
		fmt.Fprintf(w, "     ETA: %s (%s left of the series' %d pairs)\n", most, Plural(eta.Left, "run"), s.Plan.Pairs)
	case eta.Likely > 0:
		fmt.Fprintf(w, "     ETA: about %s if the noise holds (%s more), at most %s\n",
			(eta.PerRun * time.Duration(eta.Likely)).Round(time.Second), Plural(eta.Likely, "run"), most)
	default:
		fmt.Fprintf(w, "     ETA: at most %s (%s left of the plan's maximum)\n", most, Plural(eta.Left, "run"))
	}
}

// outsideWhat names what a run of the series does outside its load and goLive.
func outsideWhat(p series.Plan) string {
	if strings.Contains(p.Conditions, "writer-warm-up=") {
		return "boots, copies, the writer's warm-up loads, activation, verification, teardown"
	}
	return "boots, copies, activation, verification, teardown"
}

// SeriesLook is a look's estimate, interval and verdict per gate, and what resolving
// the rest would take.
func SeriesLook(w io.Writer, s *series.State, l series.LookRecord) {
	if l.Look == nil {
		return
	}
	unit := "run(s) per side"
	if l.Look.Method == analyze.Paired {
		unit = "pair(s)"
		first := analyze.SequentialPlan{MinRuns: s.Plan.MinRuns, MaxRuns: s.Plan.MaxRuns, Paired: true}.FirstLook()
		if l.Look.Pairs < first {
			fmt.Fprintf(w, "look after %d pairs (shown, not judged: the plan's first judged look is at %d pairs):\n", l.Look.Pairs, first)
		} else {
			fmt.Fprintf(w, "look after %d pairs (%.2f %% paired-t intervals: the budget spent across the looks):\n", l.Look.Pairs, 100*l.Look.Level)
		}
	} else {
		fmt.Fprintf(w, "look after %d runs per side (%.2f %% %s intervals: the budget spent across the looks):\n", l.Runs, 100*l.Look.Level, l.Look.Method)
	}
	for _, g := range l.Look.Gates {
		line := fmt.Sprintf("  %-20s %-11s", g.Gate, verdictWord(g.Gate, g.Verdict))
		if g.DeltaPct != nil {
			line += " " + SignedPct(*g.DeltaPct) + " %"
		}
		if g.LowPct != nil {
			line += fmt.Sprintf(" [%s %%, %s %%]", SignedPct(*g.LowPct), SignedPct(*g.HighPct))
		}
		switch {
		case g.Resolved():
		case g.Watched:
			line += "  (watched: shown, not waited for)"
		case g.Reason != "":
			line += "  (" + g.Reason + ")"
		case g.MoreRuns != nil:
			line += fmt.Sprintf("  about %d more %s would resolve it", *g.MoreRuns, unit)
			if l.Look.Method == analyze.Paired && l.Look.Pairs < 3 {
				line += " (a rough guess: at 2 pairs the noise rests on one difference)"
			}
		case g.PlanRuns != nil:
			line += fmt.Sprintf("  not resolvable within %d %s at this noise (a series of about %d %s would be)", s.Plan.MaxRuns, unit, *g.PlanRuns, unit)
		default:
			line += fmt.Sprintf("  not resolvable within %d %s at this noise (nor within 100: lower the noise)", s.Plan.MaxRuns, unit)
		}
		fmt.Fprintln(w, line)
		if g.NoisePct != nil { // the machine's precision, before any verdict
			noise := fmt.Sprintf("within-pair noise %.2f %% (between runs %s %%)", *g.NoisePct, opt(g.BetweenRunPct, 2))
			switch {
			case g.ByPairs:
				noise = fmt.Sprintf("within-pair noise %.2f %% once the machine's speed is set aside (the pairs' differences on their speeds', t(pairs - 2))", *g.NoisePct)
			case g.Adjusted:
				noise = fmt.Sprintf("noise %.2f %% per run once the machine's speed is set aside (its runs compared as independent, t(n_A + n_B - 3))", *g.NoisePct)
			case l.Look.Method != analyze.Paired:
				noise = fmt.Sprintf("between-run noise %.2f %%", *g.NoisePct)
			}
			if g.LowPct != nil {
				noise += "; the interval is " + halfWidth((*g.HighPct-*g.LowPct)/2, 1) + " now"
			}
			fmt.Fprintf(w, "  %-20s %s\n", "", noise)
		}
	}
}

// SeriesRuns is every run of the series with its headline figures, its state and the
// machine around it; below, why a run stands out or failed.
func SeriesRuns(w io.Writer, st *series.State) {
	fmt.Fprintln(w, "\nruns of the series (the dominant collection's mean upsert, load wall-clock, goLive, TOTAL; machine after the run; "+
		"the writer's JIT and GC threads' and the reader's CPU during the load, in cores):")
	var rows [][]string
	var notes []string
	for _, e := range st.Entries {
		r := []string{fmt.Sprint(e.Seq), e.Side, e.Dir, e.Kind, e.Status, "—", "—", "—", "—", "—", "—", "—", "—", "—"}
		if h := e.Health; h != nil {
			r[5], r[6], r[7], r[8] = opt(h.MeanUs, 0), opt(h.LoadS, 1), opt(h.GoLiveS, 1), opt(h.TotalS, 1)
			if h.Outlier != "" {
				note := fmt.Sprintf("  run %d (%s): OUTLIER: %s", e.Seq, e.Dir, h.Outlier)
				if h.Factor != "" {
					note += "; the recorded factor furthest from its side: " + h.Factor
				}
				notes = append(notes, note)
			}
			factor := func(name string) string {
				if v, ok := h.Factors[name]; ok {
					return fmt.Sprintf("%.2f", v)
				}
				return "—"
			}
			r[11], r[12], r[13] = factor("writer jit CPU (cores)"), factor("writer gc CPU (cores)"), factor("reader CPU (cores)")
		}
		if m := e.Machine; m != nil {
			r[9], r[10] = fmt.Sprintf("%.1f", m.LoadAvgAfter), fmt.Sprintf("%.0f %%", m.OtherCPUPct)
		}
		if e.Reason != "" {
			notes = append(notes, fmt.Sprintf("  run %d (%s): %s", e.Seq, e.Status, e.Reason))
		}
		rows = append(rows, r)
	}
	Table(w, Text, 5, []string{"#", "side", "run", "kind", "status", "mean µs", "load s", "goLive s", "TOTAL s", "load avg", "others' CPU",
		"JIT cores", "GC cores", "reader cores"}, rows)
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
}

// SeriesAnswerSchema names the JSON form of a series' answer.
const SeriesAnswerSchema = "warmstat.series-answer/v1"

// SeriesAnswer is a finished series' answer: how it ended, per gate the verdict with its
// interval and what the machine's noise allowed, the machine time it cost, and what
// would resolve what it left open. Text, markdown and JSON are renderings of it.
type SeriesAnswer struct {
	Schema string `json:"schema"`
	Series string `json:"series"` // the series directory
	A      string `json:"a"`      // the builds' labels
	B      string `json:"b"`
	// Outcome is why the series ended: "resolved", "max-runs", "fixed-size".
	Outcome string `json:"outcome"`
	// CatalogLine: both sides' catalog was written for this evitaDB line ("2026.1").
	CatalogLine  string  `json:"catalog_line,omitempty"`
	FixedPairs   int     `json:"fixed_pairs,omitempty"` // a fixed-size series (--pairs): its pairs
	RunsPerSide  int     `json:"runs_per_side"`
	SavedRuns    int     `json:"saved_runs"` // against max_runs, by stopping early
	MaxRuns      int     `json:"max_runs"`
	Unit         string  `json:"unit"`       // what the series counts: "pairs" or "runs per side"
	NoiseKind    string  `json:"noise_kind"` // "within a pair" or "between runs"
	ThresholdPct float64 `json:"threshold_pct"`
	// Publishing is load + goLive per side: the geometric mean of the finished runs'
	// TOTAL (nil unless both sides have one).
	Publishing  *SeriesPublishing  `json:"publishing"`
	MachineTime *SeriesMachineTime `json:"machine_time"` // nil before any run is timed
	Gates       []SeriesGateAnswer `json:"gates"`
	// LoweringNoise is advice, when a gate is left open, of what the series does not do
	// already.
	LoweringNoise []string `json:"lowering_noise,omitempty"`
	// Slower names the gates that resolved as slower (a regression).
	Slower []string `json:"slower"`
	// Duet: every pair was a duet (ab --duet), analysed with the slot as a factor.
	Duet bool `json:"duet,omitempty"`
}

// SeriesPublishing is each side's publishing time in seconds and the runs it rests on.
type SeriesPublishing struct {
	AS    float64 `json:"a_s"`
	BS    float64 `json:"b_s"`
	ARuns int     `json:"a_runs"`
	BRuns int     `json:"b_runs"`
}

// SeriesMachineTime is what the series cost the machine.
type SeriesMachineTime struct {
	TotalS   float64 `json:"total_s"`
	Runs     int     `json:"runs"`
	PerRunS  float64 `json:"per_run_s"`
	OutsideS float64 `json:"outside_s"` // per run, outside the load and goLive
	Outside  string  `json:"outside"`   // what a run does outside them
}

// SeriesGateAnswer is one gate's answer.
type SeriesGateAnswer struct {
	Gate     string          `json:"gate"`
	Verdict  analyze.Verdict `json:"verdict"`
	DeltaPct *float64        `json:"delta_pct"`
	LowPct   *float64        `json:"ci_low_pct"`
	HighPct  *float64        `json:"ci_high_pct"`
	Reason   string          `json:"reason,omitempty"`
	NoisePct *float64        `json:"noise_pct"` // one run's noise, of noise_kind
	// DetectablePct is the smallest change this series could tell apart at its noise:
	// the interval's half-width plus the threshold.
	DetectablePct *float64 `json:"detectable_pct"`
	// PlanRuns is, for a gate left open, the maximum a new series would need at this
	// noise and change (nil: more than 100, or unknown).
	PlanRuns *int `json:"plan_runs,omitempty"`
	// Open: the series ended at its maximum without resolving this gate.
	Open bool `json:"open"`
	// SlotPct (a duet series): what slot 2 cost a run against slot 1, set aside
	// by the analysis.
	SlotPct *float64 `json:"slot_effect_pct,omitempty"`
	// Adjusted: the gate's figure has the machine's speed set aside (an _adj metric);
	// its noise is the runs' own once their speed is known
	Adjusted bool `json:"adjusted,omitempty"`
	// ByPairs: adjusted by the series' pairs, so NoisePct is within a pair
	ByPairs bool `json:"adjusted_by_pairs,omitempty"`
	// Watched: a metric the series showed but did not wait for (ab --watch); it is
	// never open and never a regression of --fail-on-regression
	Watched bool `json:"watched,omitempty"`
}

// BuildSeriesAnswer assembles the answer of a finished series in dir.
func BuildSeriesAnswer(st *series.State, dir string) *SeriesAnswer {
	o := st.Outcome
	a := &SeriesAnswer{Schema: SeriesAnswerSchema, Series: dir, A: cmp.Or(st.Plan.A.Label, st.Plan.A.Spec), B: cmp.Or(st.Plan.B.Label, st.Plan.B.Spec),
		Outcome: o.Reason, FixedPairs: st.Plan.Pairs, RunsPerSide: o.Runs, SavedRuns: o.Saved, MaxRuns: st.Plan.MaxRuns,
		Unit: "pairs", NoiseKind: "within a pair", ThresholdPct: st.Plan.ThresholdPct, Slower: []string{}}
	if st.Plan.Method() != analyze.Paired {
		a.Unit, a.NoiseKind = "runs per side", "between runs"
	}
	if st.Plan.Duet {
		a.Duet, a.Unit, a.NoiseKind = true, "duets", "within a duet, its slot set aside"
	}
	a.CatalogLine = st.Plan.CatalogLine
	if ta, tb := st.Totals("A"), st.Totals("B"); len(ta) > 0 && len(tb) > 0 {
		a.Publishing = &SeriesPublishing{AS: analyze.GeoMean(ta), BS: analyze.GeoMean(tb), ARuns: len(ta), BRuns: len(tb)}
	}
	if per, outside := st.MeanRun(); per > 0 {
		a.MachineTime = &SeriesMachineTime{TotalS: st.MachineTime().Round(time.Second).Seconds(), Runs: len(st.Entries),
			PerRunS: per.Round(time.Second).Seconds(), OutsideS: outside.Round(time.Second).Seconds(), Outside: outsideWhat(st.Plan)}
	}
	open := 0
	for _, g := range o.Gates {
		ga := SeriesGateAnswer{Gate: g.Gate, Verdict: g.Verdict, DeltaPct: g.DeltaPct, LowPct: g.LowPct, HighPct: g.HighPct, Reason: g.Reason,
			NoisePct: g.NoisePct, PlanRuns: g.PlanRuns, Open: o.Reason == "max-runs" && !g.Resolved() && !g.Watched, SlotPct: g.SlotPct, Adjusted: g.Adjusted,
			ByPairs: g.ByPairs, Watched: g.Watched}
		if g.NoisePct != nil && g.LowPct != nil && g.HighPct != nil {
			d := (*g.HighPct-*g.LowPct)/2 + a.ThresholdPct
			ga.DetectablePct = &d
		}
		if ga.Open {
			open++
		}
		if g.Verdict == analyze.Slower && !g.Watched {
			a.Slower = append(a.Slower, g.Gate)
		}
		a.Gates = append(a.Gates, ga)
	}
	if open > 0 { // advice only of what the series does not do already
		if !st.Plan.Replay {
			a.LoweringNoise = append(a.LoweringNoise, "--replay takes the reader out of the load")
		}
		if !strings.Contains(st.Plan.Conditions, "writer-warm-up=") {
			a.LoweringNoise = append(a.LoweringNoise, "--writer-warm-up 1 takes most of the JIT's compiling out of the measured load")
		}
		a.LoweringNoise = append(a.LoweringNoise, "a larger catalog (seed --scale) makes each run longer and steadier", "a quieter machine (each run line shows what else ran)")
	}
	return a
}

// WriteSeriesAnswer renders the answer: text and markdown in words, JSON as the model.
func WriteSeriesAnswer(w io.Writer, a *SeriesAnswer, f Format) error {
	if f == JSON {
		return WriteJSON(w, a)
	}
	head, lines := a.Headline(), a.words(f)
	if f == Markdown {
		fmt.Fprintf(w, "### warmstat ab: %s against %s\n\n**%s**\n\n", MDEscape(a.B), MDEscape(a.A), head)
		for _, l := range lines {
			if strings.HasPrefix(l, "  ") { // a gate's detail, under its gate
				fmt.Fprintf(w, "  - %s\n", strings.TrimSpace(l))
				continue
			}
			fmt.Fprintf(w, "- %s\n", l)
		}
		return nil
	}
	fmt.Fprintf(w, "\n== the answer: %s\n", head)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	return nil
}

// Headline is how the series ended and each gate's verdict, on one line.
func (a *SeriesAnswer) Headline() string {
	var s string
	if a.FixedPairs > 0 {
		s = fmt.Sprintf("series of %d pairs done (fixed size; warmstat combine judges a fleet's series together); this machine alone", a.RunsPerSide)
	} else {
		s = fmt.Sprintf("series %s after %d runs per side (%d saved against --max-runs %d)", a.Outcome, a.RunsPerSide, a.SavedRuns, a.MaxRuns)
	}
	for _, g := range a.Gates {
		v := verdictWord(g.Gate, g.Verdict)
		if v != string(g.Verdict) {
			v += " allocated"
		}
		if g.Watched {
			v += " (watched)"
		}
		s += fmt.Sprintf("; %s %s", g.Gate, v)
	}
	return s
}

// Words is the answer in words, line by line: the machine time, each side's publishing
// time, per gate its verdict with the change and its interval and what the noise allowed,
// and for each gate left open what would resolve it. A line that details the one above
// it starts with two spaces.
func (a *SeriesAnswer) Words() []string { return a.words(Text) }

// words is the answer in words for f: markdown stands alone (the runs' table is not
// above it), so it names the command that has the intervals.
func (a *SeriesAnswer) words(f Format) []string {
	var out []string
	if m := a.MachineTime; m != nil && a.Duet {
		out = append(out, fmt.Sprintf("machine time: %s for %s, two at a time (duets): %s per duet on average, %s of it outside the load and goLive (%s)",
			wholeSeconds(m.TotalS), Plural(m.Runs, "run"), wholeSeconds(m.PerRunS), wholeSeconds(m.OutsideS), m.Outside))
	} else if m != nil {
		out = append(out, fmt.Sprintf("machine time: %s in %s, %s per run on average, %s of it outside the load and goLive (%s)",
			wholeSeconds(m.TotalS), Plural(m.Runs, "run"), wholeSeconds(m.PerRunS), wholeSeconds(m.OutsideS), m.Outside))
	}
	if p := a.Publishing; p != nil {
		where := "the table above has their intervals"
		if f != Text {
			where = fmt.Sprintf("`warmstat table --group %s %s` has their intervals", filepath.Join(a.Series, "A"), filepath.Join(a.Series, "B"))
		}
		out = append(out, fmt.Sprintf("publishing (load + goLive) took %.1f s with %s and %.1f s with %s on this machine (geometric means of %s and %s; %s)",
			p.AS, a.A, p.BS, a.B, Plural(p.ARuns, "run"), Plural(p.BRuns, "run"), where))
	}
	if a.CatalogLine != "" {
		out = append(out, fmt.Sprintf("catalog: written for evitaDB %s on both sides (what that line lacks left out): these figures compare only with runs on the same catalog", a.CatalogLine))
	}
	thr := a.ThresholdPct
	for _, g := range a.Gates {
		if g.DeltaPct == nil || g.LowPct == nil {
			l := fmt.Sprintf("%s: %s, no interval", g.Gate, g.Verdict)
			if g.Reason != "" {
				l += fmt.Sprintf(" (%s)", g.Reason)
			}
			out = append(out, l)
			continue
		}
		iv := fmt.Sprintf("%s %% [%s %%, %s %%]", SignedPct(*g.DeltaPct), SignedPct(*g.LowPct), SignedPct(*g.HighPct))
		alloc := strings.HasSuffix(g.Gate, "/alloc") // bytes, not time: more or less, not slower or faster
		switch {
		case alloc && (g.Verdict == analyze.Slower || g.Verdict == analyze.Faster):
			out = append(out, fmt.Sprintf("%s: %s allocates %s than %s per upsert, by %s: the whole interval lies beyond the ±%g %% noise threshold",
				g.Gate, a.B, map[bool]string{true: "more", false: "less"}[g.Verdict == analyze.Slower], a.A, iv, thr))
		case g.Verdict == analyze.Slower, g.Verdict == analyze.Faster:
			out = append(out, fmt.Sprintf("%s: %s is %s than %s by %s: the whole interval lies beyond the ±%g %% noise threshold", g.Gate, a.B, g.Verdict, a.A, iv, thr))
		case g.Verdict == analyze.Equivalent:
			out = append(out, fmt.Sprintf("%s: %s and %s are the same within ±%g %%: %s", g.Gate, a.B, a.A, thr, iv))
		case alloc:
			out = append(out, fmt.Sprintf("%s: no verdict at ±%g %%: %s against %s %s; %s allocates somewhere from %s to %s than %s",
				g.Gate, thr, a.B, a.A, iv, a.B, allocWords(*g.LowPct), allocWords(*g.HighPct), a.A))
		default:
			out = append(out, fmt.Sprintf("%s: no verdict at ±%g %%: %s against %s %s; %s is somewhere from %s to %s than %s",
				g.Gate, thr, a.B, a.A, iv, a.B, ChangeWords(*g.LowPct), ChangeWords(*g.HighPct), a.A))
		}
		if g.Watched {
			out[len(out)-1] += " (watched: shown, not waited for)"
		}
		if g.NoisePct != nil && g.DetectablePct != nil {
			kind := a.NoiseKind
			switch {
			case g.ByPairs:
				kind = "within a pair, once the machine's speed is set aside"
			case g.Adjusted:
				kind = "between runs, once the machine's speed is set aside"
			}
			out = append(out, fmt.Sprintf("  this machine's noise: %.1f %% per run (%s); at it, %d %s tell apart only a change beyond about %s (the interval's half-width plus the threshold)",
				*g.NoisePct, kind, a.RunsPerSide, a.Unit, halfWidth(*g.DetectablePct, 0)))
		}
		if g.SlotPct != nil {
			out = append(out, fmt.Sprintf("  the slots: a run in slot 2 took %s against slot 1 (the build's change aside; set aside by the analysis)",
				signedPctOrDash(g.SlotPct)))
		}
	}
	open := false
	for _, g := range a.Gates {
		if !g.Open {
			continue
		}
		open = true
		l := "to resolve " + g.Gate
		switch {
		case g.Reason != "":
			l += ": " + g.Reason
		case g.NoisePct == nil:
			l += ": the interval needs runs with a figure on both sides"
		case g.PlanRuns != nil:
			l += fmt.Sprintf(": at its noise and the change seen (%s) a series of about %d %s would: start one (a new --out, --max-runs %d), or lower the noise first",
				signedPctOrDash(g.DeltaPct), *g.PlanRuns, a.Unit, *g.PlanRuns)
		default:
			l += fmt.Sprintf(": the change seen (%s) lies too close to the ±%g %% threshold for even 100 %s at this noise to decide it: lower the noise first, or take the bound above as the answer",
				signedPctOrDash(g.DeltaPct), thr, a.Unit)
		}
		out = append(out, l)
	}
	if open && len(a.LoweringNoise) > 0 {
		out = append(out, fmt.Sprintf("  (lowering the noise: %s; docs/measuring.md says what each bought where it was measured)", strings.Join(a.LoweringNoise, "; ")))
	}
	if a.FixedPairs > 0 {
		out = append(out, fmt.Sprintf("next: warmstat combine %s SERIES... (the other machines' series of this plan)", a.Series))
	}
	return out
}

// wholeSeconds is seconds as a duration prints them: "4m10s".
func wholeSeconds(s float64) string { return (time.Duration(s * 1e9)).Round(time.Second).String() }

// opt is an optional figure with prec decimals, "—" when unknown.
func opt(v *float64, prec int) string {
	if v == nil {
		return "—"
	}
	return Fixed(*v, prec)
}

// halfWidth is an interval's half-width for people: "±24.3 %", or "wider than ±99,900 %"
// where SignedPct stops counting.
func halfWidth(pct float64, decimals int) string {
	s := strings.TrimPrefix(SignedPct(pct), "+")
	if strings.HasPrefix(s, ">") {
		return "wider than ±" + strings.TrimLeft(s, ">+") + " %"
	}
	return "±" + Fixed(pct, decimals) + " %"
}

// ChangeWords is a change of B against A in words: "3.2 % faster", "15.8 % slower".
func ChangeWords(pct float64) string {
	switch {
	case pct < 0:
		return strings.TrimPrefix(SignedPct(-pct), "+") + " % faster"
	case pct > 0:
		return strings.TrimPrefix(SignedPct(pct), "+") + " % slower"
	}
	return "no change"
}

// allocWords is a change of allocation in words: "27.4 % less".
func allocWords(pct float64) string {
	switch {
	case pct < 0:
		return strings.TrimPrefix(SignedPct(-pct), "+") + " % less"
	case pct > 0:
		return strings.TrimPrefix(SignedPct(pct), "+") + " % more"
	}
	return "no change"
}

// signedPctOrDash is a change as "+2.8 %" ("—" when unknown).
func signedPctOrDash(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%+.1f %%", *v)
}

// verdictWord is a verdict as a gate's metric reads it: an allocation is "more" or
// "less", not slower or faster (it is bytes, not time); every other verdict as it is.
func verdictWord(gate string, v analyze.Verdict) string {
	if strings.HasSuffix(gate, "/alloc") && (v == analyze.Faster || v == analyze.Slower) {
		return map[bool]string{true: "more", false: "less"}[v == analyze.Slower]
	}
	return string(v)
}
