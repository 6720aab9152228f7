package report

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/warmstat/warmstat/analyze"
)

// CompareSchema is the JSON contract of `warmstat compare --format json`.
const CompareSchema = "warmstat.compare/v1"

// GroupJSON names one side. Excluded are the runs left out of the whole group,
// "DIR: reason".
type GroupJSON struct {
	Label    string   `json:"label"`
	Runs     int      `json:"runs"`
	Path     string   `json:"path"`
	RunDirs  []string `json:"run_dirs"`
	Excluded []string `json:"excluded"`
}

// MismatchJSON is one differing condition: a and b are "value (runs 1-3)" lists;
// for a difference within one group, a is its first value and b the others.
type MismatchJSON struct {
	Field  string `json:"field"`
	A      string `json:"a"`
	B      string `json:"b"`
	Within string `json:"within,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// CompareJSON is the stable JSON shape of a comparison, or of a refusal (comparable
// false, mismatches or duplicates set, no rows).
type CompareJSON struct {
	Schema            string               `json:"schema"`
	Comparable        bool                 `json:"comparable"`
	Mismatches        []MismatchJSON       `json:"mismatches"`
	Duplicates        []analyze.Duplicate  `json:"duplicates"`
	AllowedMismatches []string             `json:"allowed_mismatches"`
	A                 GroupJSON            `json:"a"`
	B                 GroupJSON            `json:"b"`
	Rows              []analyze.Row        `json:"rows"`
	Excluded          []analyze.RunNote    `json:"excluded_from_rows"`
	Gates             []analyze.GateResult `json:"gates"`
	ThresholdPct      float64              `json:"threshold_pct"`
	Method            string               `json:"method"`
	Pairs             []analyze.Pair       `json:"pairs,omitempty"` // paired-t: the series' pairs
	Resamples         int                  `json:"resamples"`
	Seed              uint64               `json:"seed"`
	Quantiles         string               `json:"quantiles"`
	Dominant          string               `json:"dominant_collection"`
	Notes             []string             `json:"notes"`
	Footnotes         []string             `json:"footnotes"`
	// Noise: what the pairs' noise in the dominant mean is made of (paired runs with
	// the cost columns)
	Noise *analyze.Decomposition `json:"noise_decomposition,omitempty"`
}

func groupJSON(g *analyze.Group) GroupJSON {
	j := GroupJSON{Label: g.Build, Runs: len(g.Runs), Path: g.Path, RunDirs: []string{}, Excluded: []string{}}
	for _, e := range g.Excluded {
		j.Excluded = append(j.Excluded, e.Run+": "+e.Reason)
	}
	for _, r := range g.Runs {
		j.RunDirs = append(j.RunDirs, r.Dir)
	}
	return j
}

// settings renders a condition's values with their runs: "23g (runs 1-3)".
func settings(ss []analyze.Setting) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Value + " (" + runRanges(s.Runs) + ")"
	}
	return out
}

// runRanges renders 1-based run numbers compactly: "runs 1-3,5", "run 2".
func runRanges(ns []int) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		if i == j {
			parts = append(parts, strconv.Itoa(ns[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", ns[i], ns[j]))
		}
		i = j + 1
	}
	word := "runs "
	if len(ns) == 1 {
		word = "run "
	}
	return word + strings.Join(parts, ",")
}

func mismatchJSON(m analyze.Mismatch) MismatchJSON {
	j := MismatchJSON{Field: m.Field, Within: m.Within, Detail: m.Detail}
	switch {
	case m.Within != "":
		s := settings(append(m.A, m.B...))
		j.A, j.B = s[0], strings.Join(s[1:], ", ")
	default:
		j.A, j.B = strings.Join(settings(m.A), ", "), strings.Join(settings(m.B), ", ")
	}
	return j
}

// MismatchLine is one differing condition for people:
// "server-heap differs: A=23g (runs 1-3), B=16g (runs 1-2)".
func MismatchLine(m analyze.Mismatch) string {
	j := mismatchJSON(m)
	if j.Within != "" {
		return fmt.Sprintf("%s differs within %s: %s, %s", j.Field, j.Within, j.A, j.B)
	}
	return fmt.Sprintf("%s differs: A=%s, B=%s", j.Field, j.A, j.B)
}

func duplicateLine(d analyze.Duplicate) string {
	if d.SameDirectory {
		return fmt.Sprintf("run %s is counted %d times (%s): one directory given more than once is one run",
			d.RunID, len(d.Runs), strings.Join(d.Runs, "; "))
	}
	return fmt.Sprintf("run %s is counted %d times (%s): identical clocks to the nanosecond, a copy is not another independent run",
		d.RunID, len(d.Runs), strings.Join(d.Runs, "; "))
}

// RefusalLines explain a refusal, one line per reason (details indented below).
func RefusalLines(r *analyze.Refusal) []string {
	var lines []string
	if len(r.Mismatches) > 0 {
		lines = append(lines, "refusing to compare: conditions that change the measurement differ")
		for _, m := range r.Mismatches {
			lines = append(lines, "  "+MismatchLine(m))
			if m.Detail != "" {
				lines = append(lines, "    "+m.Detail)
			}
		}
	}
	if len(r.Duplicates) > 0 {
		lines = append(lines, "refused: the same run appears more than once")
		for _, d := range r.Duplicates {
			lines = append(lines, "  "+duplicateLine(d))
		}
	}
	return lines
}

// Refused states err, when it is a refusal and the output is JSON, as its refusal
// document on w (a script reading stdout sees "comparable": false, not nothing). The
// groups read so far (nil when not yet read) and the options are stated in it. It
// returns err, or the error writing the document.
func Refused(w io.Writer, f Format, err error, o analyze.CompareOptions, groups []*analyze.Group) error {
	var ref *analyze.Refusal
	if errors.As(err, &ref) && f == JSON {
		if werr := WriteJSON(w, RefusalJSON(ref, o, groups[0], groups[1])); werr != nil {
			return werr
		}
	}
	return err
}

// RefusalJSON is the JSON document of a refusal.
func RefusalJSON(r *analyze.Refusal, o analyze.CompareOptions, a, b *analyze.Group) *CompareJSON {
	j := &CompareJSON{Schema: CompareSchema, Comparable: false, Mismatches: []MismatchJSON{}, Duplicates: append([]analyze.Duplicate{}, r.Duplicates...),
		AllowedMismatches: append([]string{}, o.AllowMismatch...), Rows: []analyze.Row{}, Excluded: []analyze.RunNote{}, Gates: []analyze.GateResult{},
		ThresholdPct: o.ThresholdPct, Method: string(o.Method), Resamples: o.Resamples, Seed: o.Seed, Quantiles: string(o.Quantiles),
		Notes: []string{}, Footnotes: []string{}}
	if a != nil { // the groups as read: the refusal names what was compared
		j.A = groupJSON(a)
	}
	if b != nil {
		j.B = groupJSON(b)
	}
	for _, m := range r.Mismatches {
		j.Mismatches = append(j.Mismatches, mismatchJSON(m))
	}
	return j
}

// BuildCompare assembles the JSON form (used by every format). all shows every
// collection, not just the dominant one and the whole-run rows.
func BuildCompare(c *analyze.Comparison, all bool) *CompareJSON {
	o := c.Options
	j := &CompareJSON{Schema: CompareSchema, Comparable: c.Comparable(), Mismatches: []MismatchJSON{}, Duplicates: []analyze.Duplicate{},
		AllowedMismatches: append([]string{}, o.AllowMismatch...), A: groupJSON(c.A), B: groupJSON(c.B), Rows: []analyze.Row{},
		Excluded: append([]analyze.RunNote{}, c.Excluded...), Gates: append([]analyze.GateResult{}, c.Gates...),
		ThresholdPct: o.ThresholdPct, Method: string(o.Method), Resamples: o.Resamples, Seed: o.Seed, Quantiles: string(o.Quantiles),
		Dominant: c.Dominant, Notes: append([]string{}, c.Notes...), Pairs: o.Pairs}
	for _, m := range c.Mismatches {
		j.Mismatches = append(j.Mismatches, mismatchJSON(m))
	}
	for _, g := range []*analyze.Group{c.A, c.B} {
		for _, e := range g.Excluded {
			j.Notes = append(j.Notes, fmt.Sprintf("%s: left out %s: %s", g.Name, e.Run, e.Reason))
		}
		for _, e := range g.Included {
			j.Notes = append(j.Notes, fmt.Sprintf("%s: %s is %s", g.Name, e.Run, e.Reason))
		}
	}
	for _, e := range c.Excluded {
		j.Notes = append(j.Notes, fmt.Sprintf("%s: %s left out of %s: %s", e.Group, e.Run, strings.Join(e.Rows, ", "), e.Reason))
	}
	for _, r := range c.Rows {
		if all || r.Collection == analyze.Overall || r.Collection == c.Dominant {
			j.Rows = append(j.Rows, r)
		}
	}
	j.Footnotes = footnotes(c, j.Rows)
	j.Noise = c.Noise
	return j
}

// footnotes explain what the run counts can and cannot resolve, and why rows have no
// interval.
func footnotes(c *analyze.Comparison, rows []analyze.Row) []string {
	na, nb := len(c.A.Runs), len(c.B.Runs)
	out := []string{fmt.Sprintf("runs are the unit of replication (%d in A, %d in B); entities inside one run are not independent evidence", na, nb)}
	if n := len(c.Options.Pairs); n > 0 && c.Duet() {
		slot := ""
		for _, r := range rows {
			if r.Collection == c.Dominant && r.Metric == "mean" && r.SlotPct != nil {
				slot = fmt.Sprintf(" (%s mean: a run in slot 2 took %s against slot 1)", c.Dominant, SignedPct(*r.SlotPct)+" %")
			}
		}
		placed := "each writer on its own CPU set"
		if m := c.B.Runs[0].Manifest; m.Duet != nil && m.Duet.CPUs == "" {
			placed = "both writers on every CPU (the slot: which of the duet's two places a run had)"
		}
		out = append(out, fmt.Sprintf("duets: %d duets of the series (each run of A with the run of B made at the same time, in lock-step, "+placed+", the slots alternating); each row's interval is t(n-2) over the duets' log differences with the slot as a factor, so the machine's noise that fell on both runs of a duet and the slots' difference%s are not in it", n, slot))
	} else if n > 0 {
		out = append(out, fmt.Sprintf("paired: %d pairs of the series (each run of A with the run of B beside it in time); each row's interval is t over its pairs' log differences, so the machine's drift between pairs is not in it", n))
	}
	reasons := map[string][]string{}
	var order []string
	for _, r := range rows {
		if r.Reason == "" {
			continue
		}
		if _, ok := reasons[r.Reason]; !ok {
			order = append(order, r.Reason)
		}
		reasons[r.Reason] = append(reasons[r.Reason], r.Name())
	}
	for _, why := range order {
		out = append(out, fmt.Sprintf("no interval for %s: %s", strings.Join(reasons[why], ", "), why))
	}
	if d := c.Noise; d != nil {
		machine := ""
		if d.MachinePct != nil {
			machine = fmt.Sprintf("; the machine's speed (its canary) explains %s %% of it", Fixed(*d.MachinePct, 0))
		}
		out = append(out, fmt.Sprintf("what the noise in %s mean upsert is made of (the pairs' differences, SD %s µs over %d pairs): the applying thread's CPU %s %%, its wait for a CPU %s %%, stopped or blocked %s %%%s",
			d.Collection, Fixed(d.SDUs, 1), d.Pairs, Fixed(d.CPUPct, 0), Fixed(d.WaitPct, 0), Fixed(d.BlockedPct, 0), machine))
	}
	switch i := slices.IndexFunc(rows, func(r analyze.Row) bool { return r.AdjustSlope != nil }); {
	case i >= 0 && rows[i].Pairs != nil:
		out = append(out, "_adj rows set the machine's speed aside: each pair's difference is regressed on the difference of its runs' canaries, and B's change is the difference at equal speeds, t with pairs - 2 degrees of freedom (docs/comparisons.md)")
	case i >= 0:
		out = append(out, "_adj rows set the machine's speed aside: each run's figure is moved to one speed along the slope (θ) its group's runs show against their canary, and B's change is the least-squares difference at that speed, t with n_A + n_B - 3 degrees of freedom (docs/comparisons.md)")
	}
	if slices.ContainsFunc(rows, func(r analyze.Row) bool { return r.ResolutionPct != nil }) {
		out = append(out, "intervals of figures read from a coarse clock are widened by its rounding (resolution_pct): a change smaller than the clock's step is never proven")
	}
	a := c.Advice
	if a == nil {
		return out
	}
	name := a.Collection + " " + string(a.Metric)
	if a.Collection == analyze.Overall {
		name = string(a.Metric)
	}
	unit, noise := "runs per build", "between-run variation"
	if a.Paired {
		unit, noise = "pairs", "within-pair noise (one run's, once its pair partner is known)"
	}
	if a.Duet {
		unit, noise = "duets", "within-duet noise (one run's, once its partner and slot are known)"
	}
	var widths []string
	for i, w := range a.HalfWidths {
		s := fmt.Sprintf("±%s %% with %d", Fixed(w[1], 1), int(w[0]))
		if i == 0 {
			s += " " + unit
		}
		widths = append(widths, s)
	}
	out = append(out, fmt.Sprintf("observed %s (%s): %.2f %%; a 95 %% interval is about %s",
		noise, name, a.CVPct, strings.Join(widths, ", ")))
	var parts []string
	for _, e := range a.RunsToClear {
		parts = append(parts, fmt.Sprintf("a %.0f %% change needs %d %s", e[0], int(e[1]), unit))
	}
	if len(parts) > 0 {
		out = append(out, "to clear the ±"+Fixed(c.Options.ThresholdPct, 1)+" % noise threshold at this variation, "+strings.Join(parts, ", "))
	}
	return out
}

var metricNames = map[analyze.Metric]string{
	"mean": "mean upsert", "median": "median upsert", "p95": "p95 upsert", "p99": "p99 upsert",
	"load_wall": "load wall-clock", "ingest": "ingest (load - read)", "upsert": "upsert (pure)",
	"golive": "goLive", "total": "TOTAL (load + goLive)", "wall": "wall-clock", "source_read": "source read",
	"cpu": "CPU per upsert", "alloc": "allocated per upsert", "machine": "machine (canary)",
	"mean_adj": "mean upsert, speed set aside", "cpu_adj": "CPU per upsert, speed set aside",
	"load_wall_adj": "load wall-clock, speed set aside", "ingest_adj": "ingest, speed set aside",
}

func figure(v *float64, unit string) string {
	if v == nil {
		return "-"
	}
	switch unit {
	case "s":
		return Fixed(*v, 1) + " s"
	case "KB":
		return Fixed(*v, 1) + " KB"
	}
	return Fixed(*v, 1) + " µs"
}

func signedPct(v *float64) string {
	if v == nil {
		return "-"
	}
	return SignedPct(*v) + " %"
}

// SignedPct is a change in percent with its sign, "+4.8" or "-2.1" (grouped); beyond
// ×1,000 (+99,900 %) an interval's end says only that: an interval from a handful of
// noisy runs at a high confidence is unbounded in practice, and its last digits are
// no figure.
func SignedPct(v float64) string {
	if v > maxShownPct {
		return ">+" + Fixed(maxShownPct, 0)
	}
	s := Fixed(v, 1)
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s
}

const maxShownPct = 99900

// CompareView selects what a comparison shows.
type CompareView struct {
	All bool // every collection, not just the dominant one and the whole-run rows
	// MoreHint tells how to see the collections left out ("with --all"); the caller
	// knows how its user asks for them.
	MoreHint string
}

// WriteCompare renders a comparison.
func WriteCompare(w io.Writer, c *analyze.Comparison, v CompareView, f Format) error {
	all := v.All
	j := BuildCompare(c, all)
	if f == JSON {
		return WriteJSON(w, j)
	}
	md := f == Markdown
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	banner := ""
	if !c.Comparable() {
		var parts []string
		for _, m := range c.Mismatches {
			parts = append(parts, MismatchLine(m))
		}
		banner = "NOT COMPARABLE (allowed to differ: " + strings.Join(c.Options.AllowMismatch, ", ") + "): " + strings.Join(parts, "; ")
	}
	title := fmt.Sprintf("B %s (%s) vs A %s (%s)", c.B.Build, nRuns(len(c.B.Runs)), c.A.Build, nRuns(len(c.A.Runs)))
	if md {
		p("### warmstat compare: %s\n\n", MDEscape(title))
		if banner != "" {
			p("> **%s**\n\n", MDEscape(banner))
		}
	} else {
		if banner != "" {
			p("!! %s\n\n", banner)
		}
		p("warmstat compare: %s\n", title)
	}
	method := string(c.Options.Method)
	if c.Duet() {
		method += " over duets with the slot as a factor, t(n-2)"
	}
	p("interval: 95 %% %s across runs; noise threshold ±%s %%; quantiles %s\n", method, Fixed(c.Options.ThresholdPct, 1), c.Options.Quantiles)
	if c.Options.Method.Bootstrap() {
		p("(%d resamples, seed %d; bootstrap intervals are anti-conservative below ~10 runs per build)\n", c.Options.Resamples, c.Options.Seed)
	}
	for _, n := range j.Notes {
		if md {
			p("- note: %s\n", MDEscape(n))
		} else {
			p("note: %s\n", n)
		}
	}
	p("\n")
	header := []string{"collection", "metric", "A", "B", "change", "95 % interval", "verdict"}
	var rows [][]string
	for _, r := range j.Rows {
		coll := r.Collection
		if coll == analyze.Overall {
			coll = "all"
		}
		ci := "-"
		if r.CILowPct != nil {
			ci = "[" + signedPct(r.CILowPct) + ", " + signedPct(r.CIHighPct) + "]"
		}
		verdict := verdictWord("/"+string(r.Metric), r.Verdict) // bytes, not time
		if banner != "" && (r.Verdict == analyze.Faster || r.Verdict == analyze.Slower) {
			verdict += " (not comparable)"
		}
		fa, fb := figure(r.A, r.Unit), figure(r.B, r.Unit)
		if r.RunsA != len(c.A.Runs) {
			fa += fmt.Sprintf(" (%d of %d runs)", r.RunsA, len(c.A.Runs))
		}
		if r.RunsB != len(c.B.Runs) {
			fb += fmt.Sprintf(" (%d of %d runs)", r.RunsB, len(c.B.Runs))
		}
		rows = append(rows, []string{coll, metricNames[r.Metric], fa, fb, signedPct(r.DeltaPct), ci, verdict})
	}
	if err := Table(w, f, 2, header, rows); err != nil {
		return err
	}
	if md {
		p("\n")
	}
	for i, fn := range j.Footnotes {
		p("%d. %s\n", i+1, fn)
	}
	if !all && len(c.Collections) > 1 && v.MoreHint != "" {
		p("(%s %s)\n", Plural(len(c.Collections)-1, "more collection"), v.MoreHint)
	}
	if len(c.Gates) > 0 {
		p("\n")
		for _, g := range c.Gates {
			p("%s\n", GateLine(g))
		}
	}
	if banner != "" && !md {
		p("\n!! %s\n", banner)
	}
	return nil
}

// GateLine is one gate's outcome for people.
func GateLine(g analyze.GateResult) string {
	switch {
	case g.Regression:
		return fmt.Sprintf("gate %s: REGRESSION (slower)", g.Gate)
	case g.Judged && g.Verdict == analyze.Unresolved:
		// the gate lets it through, but nothing was shown either way
		return fmt.Sprintf("gate %s: pass, no slowdown shown (unresolved: neither slower nor faster proven)", g.Gate)
	case g.Judged:
		return fmt.Sprintf("gate %s: pass (%s)", g.Gate, g.Verdict)
	}
	return fmt.Sprintf("gate %s: NOT JUDGED (%s)", g.Gate, g.Reason)
}

// nRuns is "1 run" or "N runs".
func nRuns(n int) string { return Plural(n, "run") }
