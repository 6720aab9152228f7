package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/runfmt"
)

// CSV is the spreadsheet format of `warmstat table`.
const CSV Format = "csv"

// TableSchema is the JSON contract of `warmstat table --format json`.
const TableSchema = "warmstat.table/v1"

// DefaultColumns reproduce the reference table of the seed document: build, the
// dominant collection's load, total load, goLive, TOTAL.
var DefaultColumns = []string{"build", "Product.load", "load", "golive", "total"}

// ColumnHelp lists what --columns accepts.
const ColumnHelp = "build, run, load, ingest, read, upsert, golive, total, entities, server-heap, reader-heap, " +
	"full-gcs, young-gcs, and per collection C.load, C.mean, C.p99 (e.g. Product.load, Tag.p99)"

// TableEntry is one row's data: a single run, or a group of runs (--group).
type TableEntry struct {
	Label string
	Runs  []*analyze.RunSummary
}

// cell is one figure: display text, the number behind it (JSON/CSV), a footnote.
type cell struct {
	text  string
	value *float64
	unit  string
	note  string
}

var empty = cell{text: "—"}

// column computes one column for one run; ok false means "not recorded".
type column struct {
	key, header string
	run         func(s *analyze.RunSummary) (cell, bool)
	seconds     bool // numeric seconds: groups show mean ± interval
}

func secCell(ns int64) cell {
	v := float64(ns) / 1e9
	return cell{text: Seconds(ns), value: &v, unit: "s"}
}

func usCell(ns float64) cell {
	v := ns / 1000
	return cell{text: Micros(ns) + " µs", value: &v, unit: "us"}
}

func countCell(n int64) cell {
	v := float64(n)
	return cell{text: Int(n), value: &v}
}

func columnFor(key string) (column, error) {
	simple := map[string]column{
		"build": {key, "build", func(s *analyze.RunSummary) (cell, bool) { return cell{text: s.Manifest().Build.Label}, true }, false},
		"run":   {key, "run", func(s *analyze.RunSummary) (cell, bool) { return cell{text: s.Manifest().RunID}, true }, false},
		"load": {key, "total load", func(s *analyze.RunSummary) (cell, bool) {
			return secCell(s.Manifest().Timings.LoadWallNs), true
		}, true},
		"ingest": {key, "ingest", func(s *analyze.RunSummary) (cell, bool) { return secCell(s.IngestNs()), true }, true},
		"read":   {key, "source read", func(s *analyze.RunSummary) (cell, bool) { return secCell(s.Manifest().Timings.SourceReadNs), true }, true},
		"upsert": {key, "upsert (pure)", func(s *analyze.RunSummary) (cell, bool) { return secCell(s.Manifest().Timings.UpsertNs), true }, true},
		"golive": {key, "goLive", func(s *analyze.RunSummary) (cell, bool) {
			g := s.Manifest().GoLive
			switch {
			case g.Status == runfmt.GoLiveOK && g.Ns != nil:
				return secCell(*g.Ns), true
			case g.Status == runfmt.GoLiveFailed && g.Ns != nil:
				return cell{text: "failed @ " + Seconds(*g.Ns), note: "goLive failed client-side (" + g.Error + "); the figure is time to failure, and there is no TOTAL"}, true
			}
			return empty, false
		}, true},
		"total": {key, "TOTAL", func(s *analyze.RunSummary) (cell, bool) {
			if t, ok := s.TotalNs(); ok {
				return secCell(t), true
			}
			return empty, false
		}, true},
		"entities":    {key, "entities", func(s *analyze.RunSummary) (cell, bool) { return countCell(s.Manifest().Entities), true }, false},
		"server-heap": {key, "writer heap", heapCol(func(m *runfmt.Manifest) *int64 { return m.Server.MaxHeapBytes }), false},
		"reader-heap": {key, "reader heap", heapCol(func(m *runfmt.Manifest) *int64 { return m.Reader.MaxHeapBytes }), false},
		"full-gcs": {key, "writer full GCs", func(s *analyze.RunSummary) (cell, bool) {
			if g := s.Manifest().WriterGC; g != nil && g.FullPauses != nil {
				return countCell(*g.FullPauses), true
			}
			return empty, false
		}, false},
		"young-gcs": {key, "writer young GCs", func(s *analyze.RunSummary) (cell, bool) {
			if g := s.Manifest().WriterGC; g != nil && g.YoungPauses != nil {
				return countCell(*g.YoungPauses), true
			}
			return empty, false
		}, false},
	}
	if c, ok := simple[key]; ok {
		return c, nil
	}
	coll, what, ok := strings.Cut(key, ".")
	if ok && coll != "" {
		find := func(s *analyze.RunSummary) (analyze.CollectionSummary, bool) {
			for _, c := range s.Collections {
				if c.Name == coll {
					return c, true
				}
			}
			return analyze.CollectionSummary{}, false
		}
		switch what {
		case "load":
			return column{key, coll + " load", func(s *analyze.RunSummary) (cell, bool) {
				c, ok := find(s)
				if !ok {
					return empty, false
				}
				return secCell(c.WallNs), true
			}, true}, nil
		case "mean", "p99":
			return column{key, coll + " " + what + " upsert", func(s *analyze.RunSummary) (cell, bool) {
				c, ok := find(s)
				if !ok || c.Count == 0 {
					return empty, false
				}
				if what == "mean" {
					return usCell(c.MeanNs), true
				}
				return usCell(c.P99Ns), true
			}, true}, nil
		}
	}
	return column{}, fmt.Errorf("unknown column %q (use %s)", key, ColumnHelp)
}

func heapCol(get func(*runfmt.Manifest) *int64) func(*analyze.RunSummary) (cell, bool) {
	return func(s *analyze.RunSummary) (cell, bool) {
		b := get(s.Manifest())
		if b == nil {
			return empty, false
		}
		v := float64(*b)
		return cell{text: runfmt.FormatBytes(b), value: &v, unit: "bytes"}, true
	}
}

// conditionCols are the contract fields shown in the caption when equal across rows
// and as their own column when they differ.
var conditionNames = map[string]string{
	"server-heap": "writer", "reader-heap": "reader", "server-version": "server", "loader": "loader", "target-mode": "target",
	"storage-compress": "storage.compress", "cache": "cache", "traffic-recording": "traffic-recording", "batch-size": "batch",
	"cap": "cap", "collections": "collections", "prefetch": "prefetch", "dataset": "dataset", "cores": "cores", "memory-limit": "memory",
}

// TableJSON is the stable JSON shape of a table.
type TableJSON struct {
	Schema    string         `json:"schema"`
	Caption   string         `json:"caption"`
	Columns   []string       `json:"columns"`
	Rows      []TableRowJSON `json:"rows"`
	Footnotes []string       `json:"footnotes"`
}

// TableRowJSON is one row: display cells, numbers (null = not recorded) and notes.
type TableRowJSON struct {
	Label  string     `json:"label"`
	Runs   int        `json:"runs"`
	Cells  []string   `json:"cells"`
	Values []*float64 `json:"values"`
	// HalfWidth is the 95 % half-width of each grouped mean (null for single runs).
	HalfWidth []*float64 `json:"half_width"`
	Notes     []string   `json:"notes"`
}

// BuildTable computes the table. grouped entries show mean ± 95 % half-width over
// their runs (a t-interval of the mean) for time columns.
func BuildTable(entries []TableEntry, keys []string, grouped bool) (*TableJSON, error) {
	if len(keys) == 0 {
		keys = DefaultColumns
	}
	var cols []column
	for _, k := range keys {
		c, err := columnFor(strings.TrimSpace(k))
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	// conditions: caption when equal everywhere, a column when they differ
	var caption []string
	var condCols []analyze.ContractField
	for _, f := range analyze.Contract {
		name, ok := conditionNames[f.Name]
		if !ok || (f.Name == "server-heap" && has(keys, "server-heap")) || (f.Name == "reader-heap" && has(keys, "reader-heap")) {
			continue
		}
		vals := map[string]bool{}
		var first string
		for _, e := range entries {
			for _, r := range e.Runs {
				v := f.Value(r.Manifest())
				if first == "" {
					first = v
				}
				vals[v] = true
			}
		}
		if len(vals) > 1 {
			condCols = append(condCols, f)
		} else if first != "" {
			caption = append(caption, conditionCaption(name, first))
		}
	}
	t := &TableJSON{Schema: TableSchema, Caption: strings.Join(caption, ", ")}
	for _, c := range cols {
		t.Columns = append(t.Columns, c.header)
	}
	for _, f := range condCols {
		t.Columns = append(t.Columns, conditionHeader(f.Name))
	}
	notes := map[string]int{}
	mark := func(n string) string {
		if _, ok := notes[n]; !ok {
			notes[n] = len(notes) + 1
			t.Footnotes = append(t.Footnotes, n)
		}
		return superscript(notes[n])
	}
	for _, e := range entries {
		row := TableRowJSON{Label: e.Label, Runs: len(e.Runs)}
		rowMarks := ""
		for _, r := range e.Runs {
			m := r.Manifest()
			switch {
			case m.ExitCode == 1:
				rowMarks += mark(fmt.Sprintf("%s: FAILED run (%s, outcome %s) included with --include-failed; its figures are not trustworthy", r.Run.Dir, m.Verification.Status, m.Outcome.Status))
			case m.ExitCode == 2:
				rowMarks += mark(fmt.Sprintf("%s: unverified (target counts unknown, exit 2): completeness unproven", r.Run.Dir))
			}
		}
		for _, c := range cols {
			cl, hw := entryCell(c, e, grouped)
			if cl.note != "" {
				cl.text += mark(cl.note)
			}
			row.Cells = append(row.Cells, cl.text)
			row.Values = append(row.Values, cl.value)
			row.HalfWidth = append(row.HalfWidth, hw)
		}
		for _, f := range condCols {
			vals := map[string]bool{}
			var list []string
			for _, r := range e.Runs {
				v := f.Value(r.Manifest())
				if !vals[v] {
					list = append(list, v)
				}
				vals[v] = true
			}
			row.Cells = append(row.Cells, strings.Join(list, " / "))
			row.Values = append(row.Values, nil)
			row.HalfWidth = append(row.HalfWidth, nil)
		}
		if rowMarks != "" && len(row.Cells) > 0 {
			row.Cells[0] += rowMarks
		}
		t.Rows = append(t.Rows, row)
	}
	if t.Footnotes == nil {
		t.Footnotes = []string{}
	}
	for i := range t.Rows {
		t.Rows[i].Notes = append([]string{}, rowFootnotes(t, t.Rows[i])...)
	}
	return t, nil
}

func has(keys []string, k string) bool {
	for _, x := range keys {
		if strings.TrimSpace(x) == k {
			return true
		}
	}
	return false
}

// conditionHeader names a condition that got its own column.
func conditionHeader(field string) string {
	switch field {
	case "server-heap":
		return "writer heap"
	case "reader-heap":
		return "reader heap"
	case "server-version":
		return "server version"
	case "memory-limit":
		return "memory limit"
	}
	return conditionNames[field]
}

func conditionCaption(name, v string) string {
	if name == "cap" && v == "0" {
		v = "none"
	}
	switch name {
	case "writer", "reader", "server", "loader", "target", "batch", "cap", "cores", "memory", "dataset", "collections":
		return name + " " + v
	}
	return name + "=" + v
}

func superscript(n int) string {
	digits := []rune("⁰¹²³⁴⁵⁶⁷⁸⁹")
	s := ""
	for _, d := range fmt.Sprint(n) {
		s += string(digits[d-'0'])
	}
	return s
}

// entryCell is one column of one entry: the run's own figure, or for a group the
// mean over the runs that recorded it ± the 95 % t half-width.
func entryCell(c column, e TableEntry, grouped bool) (cell, *float64) {
	if !grouped || len(e.Runs) == 1 {
		cl, _ := c.run(e.Runs[0])
		return cl, nil
	}
	var vals []float64
	var unit, note string
	texts := map[string]bool{}
	var firstText string
	for _, r := range e.Runs {
		cl, ok := c.run(r)
		if cl.note != "" && note == "" {
			note = cl.note
		}
		if !ok {
			continue
		}
		if cl.value != nil && c.seconds && cl.note == "" {
			vals = append(vals, *cl.value)
			unit = cl.unit
		}
		if firstText == "" {
			firstText = cl.text
		}
		texts[cl.text] = true
	}
	if !c.seconds {
		if len(texts) == 1 {
			return cell{text: firstText}, nil
		}
		if len(texts) == 0 {
			return empty, nil
		}
		return cell{text: "varies"}, nil
	}
	if len(vals) == 0 {
		return cell{text: "—", note: note}, nil
	}
	m := 0.0
	for _, v := range vals {
		m += v
	}
	m /= float64(len(vals))
	out := cell{value: &m, unit: unit}
	suffix := " s"
	num := Fixed(m, 1)
	if unit == "us" {
		suffix = " µs"
	}
	if len(vals) < 2 {
		out.text = num + suffix + " (1 run)"
		return out, nil
	}
	ss := 0.0
	for _, v := range vals {
		ss += (v - m) * (v - m)
	}
	hw := analyze.TQuantile975(float64(len(vals)-1)) * math.Sqrt(ss/float64(len(vals)-1)) / math.Sqrt(float64(len(vals)))
	out.text = num + " ± " + Fixed(hw, 1) + suffix
	if len(vals) < len(e.Runs) {
		out.text += fmt.Sprintf(" (%d of %d runs)", len(vals), len(e.Runs))
	}
	if note != "" {
		out.note = note
	}
	return out, &hw
}

// WriteTable renders a table.
func WriteTable(w io.Writer, t *TableJSON, f Format) error {
	switch f {
	case JSON:
		return WriteJSON(w, t)
	case CSV:
		cw := csv.NewWriter(w)
		cw.Write(append([]string{"label"}, append(t.Columns, "notes")...))
		for _, r := range t.Rows {
			rec := []string{r.Label}
			for i, v := range r.Values {
				switch {
				case v != nil && r.HalfWidth[i] == nil:
					rec = append(rec, fmt.Sprint(*v))
				case v != nil:
					rec = append(rec, fmt.Sprintf("%g ± %g", *v, *r.HalfWidth[i]))
				case r.Cells[i] == "—":
					rec = append(rec, "") // not recorded
				default:
					rec = append(rec, strings.TrimRight(r.Cells[i], "⁰¹²³⁴⁵⁶⁷⁸⁹"))
				}
			}
			rec = append(rec, strings.Join(rowFootnotes(t, r), " | "))
			cw.Write(rec)
		}
		cw.Flush()
		return cw.Error()
	}
	if t.Caption != "" {
		if f == Markdown {
			fmt.Fprintf(w, "_%s_\n\n", MDEscape(t.Caption))
		} else {
			fmt.Fprintf(w, "%s\n\n", t.Caption)
		}
	}
	rows := make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		rows[i] = r.Cells
	}
	left := 0
	if len(t.Columns) > 0 && (t.Columns[0] == "build" || t.Columns[0] == "run") {
		left = 1
	}
	if err := Table(w, f, left, t.Columns, rows); err != nil {
		return err
	}
	if len(t.Footnotes) > 0 {
		fmt.Fprintln(w)
	}
	for i, n := range t.Footnotes {
		if f == Markdown {
			fmt.Fprintf(w, "%s %s  \n", superscript(i+1), MDEscape(n))
		} else {
			fmt.Fprintf(w, "%s %s\n", superscript(i+1), n)
		}
	}
	return nil
}

// rowFootnotes are the footnotes a row's cells point at (for CSV, which has no marks).
func rowFootnotes(t *TableJSON, r TableRowJSON) []string {
	var out []string
	for i, n := range t.Footnotes {
		m := superscript(i + 1)
		for _, c := range r.Cells {
			if strings.Contains(c, m) {
				out = append(out, n)
				break
			}
		}
	}
	return out
}
