package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/runfmt"
)

// CSV is the spreadsheet format of `warmstat table`.
const CSV Format = "csv"

// TableSchema is the JSON contract of `warmstat table --format json`. v2: a group's
// time cells are geometric means with a log-scale 95 % interval (low, high), the
// same figures compare uses; v1 had arithmetic means with a half-width.
const TableSchema = "warmstat.table/v2"

// DefaultColumns reproduce the reference table of the seed document: build, the
// dominant collection's load, total load, goLive, TOTAL.
var DefaultColumns = []string{"build", "Product.load", "load", "golive", "total"}

// ColumnHelp lists the columns a table can have.
const ColumnHelp = "build, run, load, ingest, read, upsert, golive, total, entities, server-heap, reader-heap, " +
	"full-gcs, young-gcs, and per collection C.load, C.mean, C.p99 (e.g. Product.load, Tag.p99)"

// TableEntry is one row's data: a single run, or a group of runs. An entry without
// runs adds its Excluded to the table's LeftOut, without a row.
type TableEntry struct {
	Label    string
	Runs     []*analyze.RunSummary
	Group    bool              // a group: time cells are estimates across its runs
	Excluded []analyze.RunNote // runs of this entry's directory that are not in the table
}

// cell is one figure: display text, the number behind it (JSON/CSV), a footnote.
type cell struct {
	text      string
	value     *float64
	low, high *float64
	notes     []string
}

var empty = cell{text: "—"}

// column is one column: its header, the unit of its numbers ("" for text and counts),
// one run's cell, and for time columns the figure a group's estimate is of.
type column struct {
	key, header, unit string
	run               func(s *analyze.RunSummary) cell
	coll              string         // time columns: collection of the figure
	metric            analyze.Metric // time columns: "" for the others
}

func secCell(ns int64) cell {
	v := float64(ns) / 1e9
	return cell{text: Seconds(ns), value: &v}
}

func usCell(ns float64) cell {
	v := ns / 1000
	return cell{text: Micros(ns) + " µs", value: &v}
}

func countCell(n int64) cell {
	v := float64(n)
	return cell{text: Int(n), value: &v}
}

func goLiveFailedNote(g runfmt.GoLive) string {
	return "goLive failed client-side (" + g.Error + "); the figure is time to failure, and there is no TOTAL"
}

func columnFor(key string) (column, error) {
	man := func(s *analyze.RunSummary) *runfmt.Manifest { return s.Run.Manifest }
	clock := func(header string, m analyze.Metric, get func(*analyze.RunSummary) cell) column {
		return column{key: key, header: header, unit: "s", run: get, coll: analyze.Overall, metric: m}
	}
	simple := map[string]column{
		"build": {key: key, header: "build", run: func(s *analyze.RunSummary) cell { return cell{text: man(s).Build.Label} }},
		"run":   {key: key, header: "run", run: func(s *analyze.RunSummary) cell { return cell{text: man(s).RunID} }},
		"load":  clock("total load", "load_wall", func(s *analyze.RunSummary) cell { return secCell(man(s).Timings.LoadWallNs) }),
		"ingest": clock("ingest", "ingest", func(s *analyze.RunSummary) cell {
			if s.NoIngest != "" {
				return empty
			}
			return secCell(s.IngestNs)
		}),
		"read":   clock("source read", "source_read", func(s *analyze.RunSummary) cell { return secCell(man(s).Timings.SourceReadNs) }),
		"upsert": clock("upsert (pure)", "upsert", func(s *analyze.RunSummary) cell { return secCell(s.Overall.SumNs) }),
		"golive": clock("goLive", "golive", func(s *analyze.RunSummary) cell {
			g := man(s).GoLive
			switch {
			case g.Status == runfmt.GoLiveOK && g.Ns != nil:
				return secCell(*g.Ns)
			case g.Status == runfmt.GoLiveFailed && g.Ns != nil:
				return cell{text: "failed @ " + Seconds(*g.Ns), notes: []string{goLiveFailedNote(g)}}
			}
			return empty
		}),
		"total": clock("TOTAL", "total", func(s *analyze.RunSummary) cell {
			if s.TotalNs != nil {
				return secCell(*s.TotalNs)
			}
			return empty
		}),
		"entities":    {key: key, header: "entities", run: func(s *analyze.RunSummary) cell { return countCell(man(s).Entities) }},
		"server-heap": {key: key, header: "writer heap", unit: "bytes", run: heapCol(func(m *runfmt.Manifest) *int64 { return m.Server.MaxHeapBytes })},
		"reader-heap": {key: key, header: "reader heap", unit: "bytes", run: heapCol(func(m *runfmt.Manifest) *int64 { return m.Reader.MaxHeapBytes })},
		"full-gcs": {key: key, header: "writer full GCs", run: func(s *analyze.RunSummary) cell {
			if g := man(s).WriterGC; g != nil && g.FullPauses != nil {
				return countCell(*g.FullPauses)
			}
			return empty
		}},
		"young-gcs": {key: key, header: "writer young GCs", run: func(s *analyze.RunSummary) cell {
			if g := man(s).WriterGC; g != nil && g.YoungPauses != nil {
				return countCell(*g.YoungPauses)
			}
			return empty
		}},
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
			return column{key: key, header: coll + " load", unit: "s", coll: coll, metric: "wall", run: func(s *analyze.RunSummary) cell {
				if c, ok := find(s); ok {
					return secCell(c.WallNs)
				}
				return empty
			}}, nil
		case "mean", "p99":
			return column{key: key, header: coll + " " + what + " upsert", unit: "µs", coll: coll, metric: analyze.Metric(what), run: func(s *analyze.RunSummary) cell {
				c, ok := find(s)
				switch {
				case !ok || c.Count == 0:
					return empty
				case what == "mean":
					return usCell(c.MeanNs)
				}
				return usCell(c.P99Ns)
			}}, nil
		}
	}
	return column{}, fmt.Errorf("unknown column %q (use %s)", key, ColumnHelp)
}

func heapCol(get func(*runfmt.Manifest) *int64) func(*analyze.RunSummary) cell {
	return func(s *analyze.RunSummary) cell {
		b := get(s.Run.Manifest)
		if b == nil {
			return empty
		}
		v := float64(*b)
		return cell{text: runfmt.FormatBytesExact(b), value: &v}
	}
}

// conditionNames are the contract fields shown in the caption when equal across rows
// and as their own column when they differ.
var conditionNames = map[string]string{
	"server-heap": "writer", "reader-heap": "reader", "server-version": "server", "loader": "loader", "target-mode": "target",
	"storage-compress": "storage.compress", "cache": "cache", "traffic-recording": "traffic-recording", "batch-size": "batch",
	"cap": "cap", "collections": "collections", "prefetch": "prefetch", "dataset": "dataset", "cores": "cores", "memory-limit": "memory",
	"writer-profile": "writer profile", "writer-warm-up": "writer warm-up", "writer-jvm-options": "writer JVM options", "duet": "duet",
	"catalog-line": "catalog",
}

// TableJSON is the stable JSON shape of a table.
type TableJSON struct {
	Schema    string         `json:"schema"`
	Caption   string         `json:"caption"`
	Columns   []string       `json:"columns"`
	Units     []string       `json:"units"` // "s", "µs", "bytes", or "" (text, counts)
	Rows      []TableRowJSON `json:"rows"`
	Footnotes []string       `json:"footnotes"`
	// LeftOut are folders of the runs' directories that hold no run the table shows
	// and belong to no row (a killed load's): "DIR: reason".
	LeftOut []string `json:"left_out,omitempty"`
}

// TableRowJSON is one row: display cells, numbers (null = not recorded or not a
// number), a group's 95 % interval per cell (null for single runs and text), notes.
type TableRowJSON struct {
	Label  string     `json:"label"`
	Runs   int        `json:"runs"`
	Cells  []string   `json:"cells"`
	Values []*float64 `json:"values"`
	Low    []*float64 `json:"ci_low"`
	High   []*float64 `json:"ci_high"`
	Notes  []string   `json:"notes"`
}

// BuildTable computes the table's cells; a group entry's time cells are the group's
// estimates (geometric mean across runs and its 95 % interval, from analyze).
func BuildTable(entries []TableEntry, keys []string) (*TableJSON, error) {
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
	caption, condCols := splitConditions(entries, keys)
	t := &TableJSON{Schema: TableSchema, Caption: strings.Join(caption, ", "), Footnotes: []string{}}
	for _, c := range cols {
		t.Columns = append(t.Columns, c.header)
		t.Units = append(t.Units, c.unit)
	}
	for _, f := range condCols {
		t.Columns = append(t.Columns, conditionHeader(f))
		t.Units = append(t.Units, "")
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
		if len(e.Runs) == 0 {
			for _, x := range e.Excluded {
				t.LeftOut = append(t.LeftOut, x.Run+": "+x.Reason)
			}
			continue
		}
		t.Rows = append(t.Rows, tableRow(e, cols, condCols, mark))
	}
	for i := range t.Rows {
		t.Rows[i].Notes = append([]string{}, rowFootnotes(t, t.Rows[i])...)
	}
	return t, nil
}

// splitConditions sorts the contract's conditions: a caption when equal everywhere, a
// column when they differ (a heap asked for as a column is neither).
func splitConditions(entries []TableEntry, keys []string) (caption, condCols []string) {
	for _, f := range analyze.ContractFields() {
		name, ok := conditionNames[f]
		if !ok || (f == "server-heap" && has(keys, "server-heap")) || (f == "reader-heap" && has(keys, "reader-heap")) {
			continue
		}
		vals := map[string]bool{}
		var first string
		for _, e := range entries {
			for _, r := range e.Runs {
				v := analyze.ConditionValue(r.Run.Manifest, f)
				if first == "" {
					first = v
				}
				vals[v] = true
			}
		}
		if len(vals) > 1 {
			condCols = append(condCols, f)
		} else if f == "writer-profile" && first == "none" || f == "writer-warm-up" && first == "0 loads" ||
			f == "writer-jvm-options" && first == "none" || f == "duet" && first == "no (alone)" || f == "catalog-line" && first == "as the source holds it" {
			continue // as runs normally are: no caption
		} else if first != "" {
			caption = append(caption, conditionCaption(name, first))
		}
	}
	return caption, condCols
}

// tableRow is one entry's row: its cells, then its differing conditions; mark numbers
// a footnote (the row's own marks, for runs left out or not trustworthy, go on its
// label), in the order the notes are met.
func tableRow(e TableEntry, cols []column, condCols []string, mark func(string) string) TableRowJSON {
	row := TableRowJSON{Label: e.Label, Runs: len(e.Runs)}
	rowMarks := ""
	for _, x := range e.Excluded {
		rowMarks += mark(fmt.Sprintf("%s is not in the table: %s", x.Run, x.Reason))
	}
	for _, r := range e.Runs {
		m := r.Run.Manifest
		switch {
		case m.ExitCode == 1:
			rowMarks += mark(fmt.Sprintf("%s: FAILED run (%s, outcome %s) shown on request; its figures are not trustworthy", r.Run.Dir, m.Verification.Status, m.Outcome.Status))
		case m.ExitCode == 2:
			rowMarks += mark(fmt.Sprintf("%s: unverified (target counts unknown, exit 2): completeness unproven", r.Run.Dir))
		}
	}
	for _, c := range cols {
		cl := entryCell(c, e)
		for _, n := range cl.notes {
			cl.text += mark(n)
		}
		row.Cells = append(row.Cells, cl.text)
		row.Values = append(row.Values, cl.value)
		row.Low = append(row.Low, cl.low)
		row.High = append(row.High, cl.high)
	}
	for _, f := range condCols {
		vals := map[string]bool{}
		var list []string
		for _, r := range e.Runs {
			v := analyze.ConditionValue(r.Run.Manifest, f)
			if !vals[v] {
				list = append(list, v)
			}
			vals[v] = true
		}
		row.Cells = append(row.Cells, strings.Join(list, " / "))
		row.Values = append(row.Values, nil)
		row.Low = append(row.Low, nil)
		row.High = append(row.High, nil)
	}
	if rowMarks != "" && len(row.Cells) > 0 {
		row.Cells[0] += rowMarks
	}
	return row
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
	for _, d := range strconv.Itoa(n) {
		s += string(digits[d-'0'])
	}
	return s
}

// entryCell is one column of one entry: the run's own figure, or a group's estimate.
func entryCell(c column, e TableEntry) cell {
	if !e.Group {
		return c.run(e.Runs[0])
	}
	if c.metric == "" { // text and counts: the value when the runs agree
		texts := map[string]bool{}
		var first cell
		for _, r := range e.Runs {
			cl := c.run(r)
			if cl.text == empty.text {
				continue
			}
			if len(texts) == 0 {
				first = cl
			}
			texts[cl.text] = true
		}
		switch len(texts) {
		case 0:
			return empty
		case 1:
			return first
		}
		return cell{text: "varies"}
	}
	est := analyze.EstimateOf(e.Runs, c.coll, c.metric)
	out := cell{value: est.Value, low: est.Low, high: est.High}
	for _, x := range est.Excluded {
		out.notes = append(out.notes, x.Run+" has no "+c.header+" figure: "+x.Reason)
	}
	if est.Value == nil {
		out.text = empty.text
		return out
	}
	unit := " " + c.unit
	num := func(v float64) string { return Fixed(v, 1) }
	switch {
	case est.Low != nil:
		out.text = num(*est.Value) + unit + " [" + num(*est.Low) + ", " + num(*est.High) + "]"
	case est.Runs == 1:
		out.text = num(*est.Value) + unit + " (1 run)"
	default:
		out.text = num(*est.Value) + unit + " (no interval)"
		out.notes = append(out.notes, c.header+": "+est.Reason)
	}
	if est.Runs < est.Of {
		out.text += fmt.Sprintf(" (%d of %d runs)", est.Runs, est.Of)
	}
	return out
}

// csvNumber writes a number for machines: 12 significant digits, no grouping.
func csvNumber(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'g', 12, 64)
}

// WriteTable renders a table.
func WriteTable(w io.Writer, t *TableJSON, f Format) error {
	switch f {
	case JSON:
		return WriteJSON(w, t)
	case CSV:
		return writeTableCSV(w, t)
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
	if len(t.LeftOut) > 0 && len(t.Footnotes) == 0 {
		fmt.Fprintln(w)
	}
	for _, n := range t.LeftOut {
		if f == Markdown {
			fmt.Fprintf(w, "not in the table: %s  \n", MDEscape(n))
		} else {
			fmt.Fprintf(w, "not in the table: %s\n", n)
		}
	}
	return nil
}

// writeTableCSV writes one value per cell: a numeric column holds numbers only (its
// unit in the header; empty where nothing was recorded, the reason in the notes
// column), and a column with intervals gets its low and high ends as columns of their
// own. Text columns (build, conditions) hold text.
func writeTableCSV(w io.Writer, t *TableJSON) error {
	interval := make([]bool, len(t.Columns))
	numeric := make([]bool, len(t.Columns))
	for _, r := range t.Rows {
		for i := range t.Columns {
			interval[i] = interval[i] || r.Low[i] != nil
			numeric[i] = numeric[i] || r.Values[i] != nil || t.Units[i] != ""
		}
	}
	head := []string{"label", "runs"}
	for i, c := range t.Columns {
		name := c
		if u := t.Units[i]; u != "" {
			name += " (" + u + ")"
		}
		head = append(head, name)
		if interval[i] {
			u := ""
			if t.Units[i] != "" {
				u = " (" + t.Units[i] + ")"
			}
			head = append(head, c+" 95% low"+u, c+" 95% high"+u)
		}
	}
	cw := csv.NewWriter(w)
	cw.Write(append(head, "notes"))
	for _, r := range t.Rows {
		rec := []string{r.Label, strconv.Itoa(r.Runs)}
		for i := range t.Columns {
			switch {
			case numeric[i]:
				rec = append(rec, csvNumber(r.Values[i]))
			case r.Cells[i] == empty.text:
				rec = append(rec, "")
			default:
				rec = append(rec, strings.TrimRight(r.Cells[i], "⁰¹²³⁴⁵⁶⁷⁸⁹"))
			}
			if interval[i] {
				rec = append(rec, csvNumber(r.Low[i]), csvNumber(r.High[i]))
			}
		}
		rec = append(rec, strings.Join(rowFootnotes(t, r), " | "))
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
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
