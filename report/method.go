package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/warmstat/warmstat/method"
	"github.com/warmstat/warmstat/runfmt"
)

// MethodLines are a series' first lines: how it will ask its question, and the way
// back to the older one.
func MethodLines(w io.Writer, m *method.Method) {
	src := m.Source
	if src.Default {
		how := "cached"
		if src.Generated {
			how = fmt.Sprintf("generated now in %s, then cached", src.Took.Round(100*time.Millisecond))
		}
		fmt.Fprintf(w, "no source given: the question is asked of warmstat's default catalog at scale %g (%s entities; %s: %s),\n",
			method.DefaultScale, Int(src.Workload.Trailer.Entities), how, src.Workload.Path)
	}
	writer := map[bool]string{true: "embedded", false: "remote"}[m.Embedded]
	switch {
	case m.Faithful && src.Default:
		fmt.Fprintf(w, "replayed in every run by the embedded writer, gated on %s (the %s mean with the machine's speed set aside), watching %s (what a %s upsert allocates: shown, not waited for);\n",
			m.Gates()[0], m.Dominant, m.Watch()[0], m.Dominant)
	case m.Faithful:
		how := "read once into the series' workload.wsw by build A, replayed in every run by the embedded writer"
		if src.Workload != nil {
			how = "replayed in every run by the embedded writer"
		}
		fmt.Fprintf(w, "the question is asked of %s %s (%s entities): %s, gated on %s (the %s mean with the machine's speed set aside), watching %s (what a %s upsert allocates: shown, not waited for);\n"+
			"the older way (a remote writer and a reader in every run, gated on %s/mean and */ingest): --target-mode remote\n",
			src.Name(), src.Path(), Int(src.Entities()), how, m.Gates()[0], m.Dominant, m.Watch()[0], m.Dominant, m.Dominant)
	case src.Default:
		fmt.Fprintf(w, "replayed in every run by the %s writer;\n", writer)
	default: // the older way, or gates given: said as they are
		how := map[bool]string{true: "a reader beside it reads " + src.Name() + " in every run", false: "replaying it"}[!m.Replay]
		gates := "the dominant collection's mean and */ingest"
		if g := m.Gates(); len(g) > 0 {
			gates = strings.Join(g, " and ")
		}
		fmt.Fprintf(w, "the question is asked of %s %s: the %s writer, %s, gated on %s\n", src.Name(), src.Path(), writer, how, gates)
	}
	if src.Default {
		fmt.Fprintf(w, "your own catalog: --workload FILE or --pristine DIR --catalog NAME (docs/ab.md)\n")
	}
	heapLines(w, m)
}

// heapLines say how the heaps not given were chosen.
func heapLines(w io.Writer, m *method.Method) {
	h := m.Heaps
	if h.AtRatio {
		fmt.Fprintf(w, "writer heap: --server-heap %s, production's ratio of heap to live set (2.84 × the catalog's %s live, rounded up to 256 MiB steps)\n",
			runfmt.FormatBytesExact(&h.Writer), runfmt.FormatSize(h.Live))
	}
	var chosen []string
	for _, c := range h.Chosen {
		switch c {
		case "writer":
			chosen = append(chosen, "--server-heap "+runfmt.FormatBytesExact(&h.Writer))
		case "reader":
			chosen = append(chosen, "--reader-heap "+runfmt.FormatBytesExact(&h.Reader))
		}
	}
	if len(chosen) > 0 {
		fmt.Fprintf(w, "heaps chosen from %s's record (as load chooses them): %s\n", m.Source.Name(), strings.Join(chosen, ", "))
	}
	if h.Note != "" {
		fmt.Fprintf(w, "note: %s\n", h.Note)
	}
}

// CatalogLine says, before a series' first run, that its catalog is written for an
// older evitaDB line on both sides (method.Method.CatalogLine), and why.
func CatalogLine(w io.Writer, m *method.Method, a, b *method.Side) {
	line := m.CatalogLine(a, b)
	if line == "" {
		return
	}
	var of []string
	for _, s := range []*method.Side{a, b} {
		if s.ID.Line != "" {
			of = append(of, s.Label)
		}
	}
	why := "--catalog-line " + line
	if len(of) > 0 {
		why = strings.Join(of, " and ") + map[bool]string{true: " is", false: " are"}[len(of) == 1] + " of that line"
	}
	fmt.Fprintf(w, "catalog: written for evitaDB %s on both sides (%s): what %s lacks is left out for A and B alike, the runs' notes say what;\n"+
		"its figures compare only with runs on the same catalog, not with a comparison within 2026.2\n", line, why, line)
}
