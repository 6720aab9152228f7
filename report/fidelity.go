package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/warmstat/warmstat/profile"
)

// FidelityDoc is the JSON document of `warmstat profile --fidelity`.
type FidelityDoc struct {
	Schema string `json:"schema"`
	Line   string `json:"line"`
	*profile.Fidelity
}

// WriteFidelity presents a workload's writer profile against a reference profile:
// per entry the run's share, the reference's and their ratio, then the answer in a line.
func WriteFidelity(w io.Writer, f *profile.Fidelity, format Format) error {
	if format == JSON {
		return WriteJSON(w, FidelityDoc{Schema: "warmstat.fidelity/v1", Line: f.Line(), Fidelity: f})
	}
	md := format == Markdown
	heading(w, md, fmt.Sprintf("fidelity: the writer's load-window samples against %s", f.Reference.Name))
	item := "" // markdown: the head's lines are a list, not one paragraph
	if md {
		item = "- "
	}
	fmt.Fprintf(w, "%sreference: %s (%s)\n", item, f.Reference.About, f.Reference.Path)
	for _, r := range f.Runs {
		fmt.Fprintf(w, "%srun: %s (build %s, %s upserts, %s samples, the JIT compiler's %.1f %% of them left out; %s)\n", item, r.Dir, r.Build,
			group(fmt.Sprint(r.Entities)), group(fmt.Sprint(r.Samples)), r.JITPct, r.Profile)
	}
	if md {
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	// with runs pooled, each entry's range over the runs: one run's answer may not be the pool's
	spread := slices.ContainsFunc(f.Entries, func(e profile.FidelityRow) bool { return len(e.RunShares) > 1 })
	rows := [][]string{}
	for _, e := range f.Entries {
		run, ratio, verdict := "not measured", "—", "—"
		if e.RunShare != nil {
			run = fmt.Sprintf("%.2f %%", *e.RunShare)
			ratio = fmt.Sprintf("×%.2f", *e.Ratio)
			verdict = "outside"
			if *e.Faithful {
				verdict = "within"
			}
			if !e.Main {
				verdict = "(" + verdict + ")"
			}
		}
		class := "minor"
		if e.Main {
			class = "main"
		}
		row := []string{frameCell(e.ID, md), class, e.Event + " " + e.Measure, run}
		if spread {
			row = append(row, runRange(e.RunShares))
		}
		rows = append(rows, append(row, fmt.Sprintf("%.2f %%", e.Share), ratio, verdict))
	}
	head := []string{"entry", "class", "samples", "run"}
	if spread {
		head = append(head, "runs apart")
	}
	writeTable(w, md, append(head, "reference", "ratio", fmt.Sprintf("×%g", f.Within)), rows)
	fmt.Fprintln(w)
	writeCallers(w, f, md)
	// production's collector figures are the built-in reference's (published with its
	// profile); a reference file states none
	beside := ""
	if f.Reference.Path == "built-in:"+profile.DefaultReference {
		beside = " (production: 0 full, 0.38 %)"
	}
	for _, g := range f.GC {
		full := "unknown"
		if g.FullPauses != nil {
			full = group(fmt.Sprint(*g.FullPauses))
		}
		fmt.Fprintf(w, "%swriter GC over %s: %s full collections, %.2f %% of the JVM's wall in pauses%s\n", item, g.Dir, full, g.PauseWallPc, beside)
	}
	if len(f.GC) > 0 {
		fmt.Fprintln(w)
	}
	line := f.Line()
	if md {
		line = "**" + strings.TrimSpace(line) + "**"
	}
	fmt.Fprintln(w, line)
	return nil
}

// runRange is the least and the greatest of the runs' own shares ("" for one run).
func runRange(runs []profile.RunShare) string {
	if len(runs) < 2 {
		return ""
	}
	lo, hi := runs[0].SharePct, runs[0].SharePct
	for _, r := range runs[1:] {
		lo, hi = min(lo, r.SharePct), max(hi, r.SharePct)
	}
	return fmt.Sprintf("%.2f–%.2f %% (%d)", lo, hi, len(runs))
}

// writeCallers lists, under each measured entry, the call paths its samples came from.
func writeCallers(w io.Writer, f *profile.Fidelity, md bool) {
	any := false
	for _, e := range f.Entries {
		if len(e.Callers) == 0 {
			continue
		}
		if !any {
			fmt.Fprintf(w, "where each entry's samples come from (its frame's callers, nearest first; shares of all the samples counted, the JIT compiler's left out):\n\n")
			any = true
		}
		rows := [][]string{}
		for _, c := range e.Callers {
			rows = append(rows, []string{fmt.Sprintf("%.2f %%", c.SharePct), frameCell(c.Path, md)})
		}
		fmt.Fprintf(w, "%s (%.2f %%):\n", e.ID, *e.RunShare)
		writeTable(w, md, []string{"share", "called from"}, rows)
		fmt.Fprintln(w)
	}
}
