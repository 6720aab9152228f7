package runfmt

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
)

// Row is one completed upsert.
type Row struct {
	Seq        int64 // 1-based upsert order; 0 when the file has no seq column
	Collection string
	PrimaryKey int32
	Batch      int64 // 1-based source-read batch; 0 when unknown
	StartNs    int64 // ns since the load clock started; -1 when unknown
	UpsertNs   int64
	// What the upsert's wall time was made of, read on the writer's applying thread
	// (the embedded writer only): its CPU clock, the bytes it allocated and its wait on
	// the run queue. -1 when unknown: a file without the column, or an empty field. A
	// CSVWriter made without cost columns ignores them.
	CPUNs      int64
	AllocBytes int64
	WaitNs     int64
}

// Unknown marks a cost figure of a Row that was not measured.
const Unknown = -1

// Column names of entities.csv, in the order the writer emits them.
const (
	ColSeq        = "seq"
	ColCollection = "collection"
	ColPrimaryKey = "primary_key"
	ColBatch      = "batch"
	ColStartNs    = "start_ns"
	ColUpsertNs   = "upsert_ns"
	ColCPUNs      = "cpu_ns"
	ColAllocBytes = "alloc_bytes"
	ColWaitNs     = "wait_ns"
)

// columnNames are every column the reader knows, by index (columnIndex).
var columnNames = [...]string{ColSeq, ColCollection, ColPrimaryKey, ColBatch, ColStartNs, ColUpsertNs, ColCPUNs, ColAllocBytes, ColWaitNs}

// The Java harness spells two columns differently; the reader accepts its header too.
var columnAliases = map[string]string{"primaryKey": ColPrimaryKey, "upsert_nanos": ColUpsertNs}

// knownHeaders names both headers the reader accepts, for errors: a header it does not
// know may be either file's.
const knownHeaders = "warmstat's entities.csv has seq, collection, primary_key, batch, start_ns, upsert_ns (and cpu_ns, alloc_bytes, wait_ns from the embedded writer); " +
	"the Java harness's per-entity.csv has collection, primaryKey, upsert_nanos"

const utf8BOM = "\xef\xbb\xbf"

var columnIndex = map[string]int{ColSeq: 0, ColCollection: 1, ColPrimaryKey: 2, ColBatch: 3, ColStartNs: 4, ColUpsertNs: 5,
	ColCPUNs: 6, ColAllocBytes: 7, ColWaitNs: 8}

// the reader's column slots: canonical is the writer's order without, cost with the cost columns
var (
	noColumns        = [9]int{-1, -1, -1, -1, -1, -1, -1, -1, -1}
	canonicalColumns = [9]int{0, 1, 2, 3, 4, 5, -1, -1, -1}
	costColumns      = [9]int{0, 1, 2, 3, 4, 5, 6, 7, 8}
)

// CSVReader streams entities.csv (or the Java harness's per-entity.csv) row by row
// with constant memory, validating every field.
type CSVReader struct {
	file   string
	br     *bufio.Reader
	line   int
	names  []string // canonical column names in file order
	col    [9]int   // index of seq, collection, pk, batch, start, upsert, cpu, alloc, wait; -1 = absent
	intern map[string]string
	fields [][]byte
	last   Row
	// canonical: the columns are in the writer's own order (CSVHeader), so a row is
	// parsed in one pass (fast); anything it does not expect goes the general way.
	canonical bool
	cost      bool // canonical, with the cost columns
}

// csvBufSize is the read buffer, and the longest line a reader takes. Tests lower it.
var csvBufSize = 256 << 10

// NewCSVReader reads and checks the header; file names the source in errors.
func NewCSVReader(r io.Reader, file string) (*CSVReader, error) {
	cr := &CSVReader{file: file, br: bufio.NewReaderSize(r, csvBufSize), intern: map[string]string{}}
	cr.col = noColumns
	hdr, err := cr.readLine()
	if err == io.EOF {
		return nil, perr(file, 1, "", "empty file: no header")
	}
	if err != nil {
		return nil, err
	}
	// Spreadsheets and some Windows tools save UTF-8 with a byte-order mark.
	hdr = bytes.TrimPrefix(hdr, []byte(utf8BOM))
	for i, h := range bytes.Split(hdr, []byte{','}) {
		name := strings.TrimSpace(string(h))
		if a, ok := columnAliases[name]; ok {
			name = a
		}
		j, ok := columnIndex[name]
		if !ok {
			return nil, perr(file, 1, strconv.Quote(name), "unknown column (%s)", knownHeaders)
		}
		if cr.col[j] >= 0 {
			return nil, perr(file, 1, name, "column appears twice")
		}
		cr.col[j] = i
		cr.names = append(cr.names, name)
	}
	for _, req := range []int{1, 2, 5} {
		if cr.col[req] < 0 {
			return nil, perr(file, 1, columnNames[req], "missing column")
		}
	}
	cr.fields = make([][]byte, len(cr.names))
	cr.canonical = cr.col == canonicalColumns || cr.col == costColumns
	cr.cost = cr.col == costColumns
	return cr, nil
}

// HasCost reports whether rows carry the cost columns (cpu_ns, alloc_bytes, wait_ns):
// all three or none are what a warmstat writer emits.
func (r *CSVReader) HasCost() bool { return r.col[6] >= 0 }

// HasStart reports whether rows carry start offsets.
func (r *CSVReader) HasStart() bool { return r.col[4] >= 0 }

// Line is the number of the last line read.
func (r *CSVReader) Line() int { return r.line }

// File is the name used in errors.
func (r *CSVReader) File() string { return r.file }

func (r *CSVReader) readLine() ([]byte, error) {
	b, err := r.br.ReadSlice('\n')
	r.line++
	switch {
	case err == nil:
		b = b[:len(b)-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
		return b, nil
	case errors.Is(err, bufio.ErrBufferFull):
		return nil, perr(r.file, r.line, "", "line longer than %d bytes", r.br.Size())
	case err == io.EOF && len(b) == 0:
		r.line--
		return nil, io.EOF
	case err == io.EOF:
		return nil, perr(r.file, r.line, "", "truncated: last line has no line end (file cut short?)")
	}
	return nil, err
}

// Next returns the next row, or io.EOF after the last one.
func (r *CSVReader) Next() (Row, error) {
	b, err := r.readLine()
	if err != nil {
		return Row{}, err
	}
	if r.canonical {
		if row, ok := r.fast(b); ok {
			return row, nil
		}
	}
	return r.parse(b)
}

// fast parses a row of the writer's own layout in one pass over its bytes, with every
// check parse makes; false for anything it does not expect (a bad field, a gap in seq,
// a batch going backwards ...), which parse then reads again to name the fault. Most of
// report's time on a production-size run is this loop.
func (r *CSVReader) fast(b []byte) (Row, bool) {
	seq, at, ok := digitsTo(b, 0, ',')
	if !ok || at == 1 || seq != r.last.Seq+1 {
		return Row{}, false
	}
	name := r.last.Collection // most rows repeat the previous row's
	if name != "" && len(b) > at+len(name) && b[at+len(name)] == ',' && string(b[at:at+len(name)]) == name {
		at += len(name) + 1
	} else {
		i := bytes.IndexByte(b[at:], ',')
		if i <= 0 {
			return Row{}, false
		}
		name, at = r.interned(b[at:at+i]), at+i+1
	}
	from := at
	pk, at, ok := digitsTo(b, at, ',')
	if !ok || at == from+1 || pk > math.MaxInt32 {
		return Row{}, false
	}
	batch, at, ok := digitsTo(b, at, ',')
	if !ok || batch > 0 && batch < r.last.Batch {
		return Row{}, false
	}
	from = at
	start, at, ok := digitsTo(b, at, ',')
	if !ok {
		return Row{}, false
	}
	if at == from+1 {
		start = -1
	}
	from = at
	var up int64
	if r.cost {
		up, at, ok = digitsTo(b, at, ',')
		ok = ok && at > from+1
	} else {
		up, at, ok = digitsTo(b, at, 0)
		ok = ok && at > from
	}
	if !ok {
		return Row{}, false
	}
	row := Row{Seq: seq, Collection: name, PrimaryKey: int32(pk), Batch: batch, StartNs: start, UpsertNs: up,
		CPUNs: Unknown, AllocBytes: Unknown, WaitNs: Unknown}
	if r.cost {
		var cpu, alloc, wait int64
		from = at
		if cpu, at, ok = digitsTo(b, at, ','); !ok {
			return Row{}, false
		} else if at == from+1 {
			cpu = Unknown
		}
		from = at
		if alloc, at, ok = digitsTo(b, at, ','); !ok {
			return Row{}, false
		} else if at == from+1 {
			alloc = Unknown
		}
		from = at
		if wait, at, ok = digitsTo(b, at, 0); !ok {
			return Row{}, false
		} else if at == from {
			wait = Unknown
		}
		if cpu > up || wait > up {
			return Row{}, false
		}
		row.CPUNs, row.AllocBytes, row.WaitNs = cpu, alloc, wait
	}
	r.last = row
	return row, true
}

// digitsTo reads a non-negative integer of at most 18 digits (none: 0) from b[at:] up to
// end (a comma, consumed) or, with end 0, up to the end of b; it returns the value and
// where the next field begins. false for any other byte, or a number that could overflow.
func digitsTo(b []byte, at int, end byte) (int64, int, bool) {
	var x int64
	j := at
	for ; j < len(b); j++ {
		d := b[j] - '0'
		if d > 9 {
			break
		}
		x = x*10 + int64(d)
	}
	if j-at > 18 {
		return 0, 0, false
	}
	if end == 0 {
		return x, j, j == len(b)
	}
	if j == len(b) || b[j] != end {
		return 0, 0, false
	}
	return x, j + 1, true
}

// interned is a collection's name as one string per name: rows come grouped by
// collection, so most repeat the previous row's.
func (r *CSVReader) interned(c []byte) string {
	if string(c) == r.last.Collection {
		return r.last.Collection
	}
	name, ok := r.intern[string(c)] // no allocation on lookup
	if !ok {
		name = string(c)
		r.intern[name] = name
	}
	return name
}

// parse reads a row of any accepted layout, naming the first fault it finds.
func (r *CSVReader) parse(b []byte) (Row, error) {
	n := 0
	for {
		i := bytes.IndexByte(b, ',')
		if n == len(r.fields) {
			return Row{}, perr(r.file, r.line, "", "more than %d fields", len(r.fields))
		}
		if i < 0 {
			r.fields[n] = b
			n++
			break
		}
		r.fields[n] = b[:i]
		n++
		b = b[i+1:]
	}
	if n < len(r.fields) {
		if n == 1 && len(r.fields[0]) == 0 {
			return Row{}, perr(r.file, r.line, "", "empty line")
		}
		return Row{}, perr(r.file, r.line, r.names[n], "missing (row has %d of %d fields)", n, len(r.fields))
	}
	row := Row{StartNs: -1, CPUNs: Unknown, AllocBytes: Unknown, WaitNs: Unknown}
	c := r.fields[r.col[1]]
	if len(c) == 0 {
		return Row{}, perr(r.file, r.line, ColCollection, "empty")
	}
	row.Collection = r.interned(c)
	pk, err := r.num(2, ColPrimaryKey, false)
	if err != nil {
		return Row{}, err
	}
	if pk > math.MaxInt32 {
		return Row{}, perr(r.file, r.line, ColPrimaryKey, "%s does not fit a 32-bit primary key", r.fields[r.col[2]])
	}
	row.PrimaryKey = int32(pk)
	if row.UpsertNs, err = r.num(5, ColUpsertNs, false); err != nil {
		return Row{}, err
	}
	if r.col[0] >= 0 {
		if row.Seq, err = r.num(0, ColSeq, false); err != nil {
			return Row{}, err
		}
		if row.Seq != r.last.Seq+1 {
			return Row{}, perr(r.file, r.line, ColSeq, "%d follows %d (rows must be in upsert order, without gaps)", row.Seq, r.last.Seq)
		}
	}
	if r.col[3] >= 0 {
		if row.Batch, err = r.num(3, ColBatch, true); err != nil {
			return Row{}, err
		}
		if row.Batch > 0 && row.Batch < r.last.Batch {
			return Row{}, perr(r.file, r.line, ColBatch, "%d after %d (batches must not go backwards)", row.Batch, r.last.Batch)
		}
	}
	if r.col[4] >= 0 {
		v, err := r.num(4, ColStartNs, true)
		if err != nil {
			return Row{}, err
		}
		if len(r.fields[r.col[4]]) > 0 {
			row.StartNs = v
		}
	}
	for k, dst := range [...]*int64{6: &row.CPUNs, 7: &row.AllocBytes, 8: &row.WaitNs} {
		if dst == nil || r.col[k] < 0 {
			continue
		}
		v, err := r.num(k, columnNames[k], true)
		if err != nil {
			return Row{}, err
		}
		if len(r.fields[r.col[k]]) > 0 {
			*dst = v
		}
	}
	// the thread's CPU and its run-queue wait are read inside the upsert's wall clock
	if row.CPUNs > row.UpsertNs {
		return Row{}, perr(r.file, r.line, ColCPUNs, "%d ns of CPU in an upsert of %d ns (CPU is read inside the wall clock)", row.CPUNs, row.UpsertNs)
	}
	if row.WaitNs > row.UpsertNs {
		return Row{}, perr(r.file, r.line, ColWaitNs, "%d ns waiting in an upsert of %d ns (the wait is read inside the wall clock)", row.WaitNs, row.UpsertNs)
	}
	r.last = row
	return row, nil
}

// num parses a non-negative decimal integer; optional fields may be empty (0).
func (r *CSVReader) num(k int, field string, optional bool) (int64, error) {
	b := r.fields[r.col[k]]
	if len(b) == 0 {
		if optional {
			return 0, nil
		}
		return 0, perr(r.file, r.line, field, "empty")
	}
	if v, _, ok := digitsTo(b, 0, 0); ok { // up to 18 digits: no overflow to check
		return v, nil
	}
	var v int64
	for _, ch := range b {
		d := int64(ch) - '0'
		if d < 0 || d > 9 || v > (math.MaxInt64-d)/10 {
			return 0, perr(r.file, r.line, field, "%q is not a non-negative integer", b)
		}
		v = v*10 + d
	}
	return v, nil
}

// CSVWriter streams entities.csv. Rows reach the OS on Flush; the loader flushes
// every 100 ms and at the end of each collection.
type CSVWriter struct {
	w    *bufio.Writer
	buf  []byte
	seq  int64
	cost bool
}

// CSVHeader is the header line the writer emits; CSVCostHeader with the cost columns.
const (
	CSVHeader     = "seq,collection,primary_key,batch,start_ns,upsert_ns"
	CSVCostHeader = CSVHeader + ",cpu_ns,alloc_bytes,wait_ns"
)

// NewCSVWriter writes the header and returns a writer that numbers rows itself.
func NewCSVWriter(w io.Writer) (*CSVWriter, error) { return newCSVWriter(w, false) }

// NewCostCSVWriter is NewCSVWriter with the cost columns (cpu_ns, alloc_bytes, wait_ns):
// for a writer that measures them.
func NewCostCSVWriter(w io.Writer) (*CSVWriter, error) { return newCSVWriter(w, true) }

func newCSVWriter(w io.Writer, cost bool) (*CSVWriter, error) {
	cw := &CSVWriter{w: bufio.NewWriterSize(w, 64<<10), buf: make([]byte, 0, 160), cost: cost}
	hdr := CSVHeader
	if cost {
		hdr = CSVCostHeader
	}
	if _, err := cw.w.WriteString(hdr + "\n"); err != nil {
		return nil, err
	}
	return cw, nil
}

// Write appends one row; Seq is assigned by the writer. Batch 0 and StartNs < 0 are
// written as empty (unknown).
func (w *CSVWriter) Write(r Row) error {
	if r.Collection == "" || strings.ContainsAny(r.Collection, ",\"\r\n") {
		return errors.New("runfmt: collection name " + strconv.Quote(r.Collection) + " cannot be written unquoted")
	}
	if r.PrimaryKey < 0 || r.UpsertNs < 0 {
		return errors.New("runfmt: negative primary key or duration")
	}
	w.seq++
	b := w.buf[:0]
	b = strconv.AppendInt(b, w.seq, 10)
	b = append(b, ',')
	b = append(b, r.Collection...)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.PrimaryKey), 10)
	b = append(b, ',')
	if r.Batch > 0 {
		b = strconv.AppendInt(b, r.Batch, 10)
	}
	b = append(b, ',')
	if r.StartNs >= 0 {
		b = strconv.AppendInt(b, r.StartNs, 10)
	}
	b = append(b, ',')
	b = strconv.AppendInt(b, r.UpsertNs, 10)
	if w.cost {
		if r.CPUNs > r.UpsertNs || r.WaitNs > r.UpsertNs {
			return errors.New("runfmt: an upsert's CPU or wait exceeds its wall clock")
		}
		for _, v := range [3]int64{r.CPUNs, r.AllocBytes, r.WaitNs} {
			b = append(b, ',')
			if v >= 0 {
				b = strconv.AppendInt(b, v, 10)
			}
		}
	}
	b = append(b, '\n')
	w.buf = b
	_, err := w.w.Write(b)
	return err
}

// Rows is the number of rows written so far.
func (w *CSVWriter) Rows() int64 { return w.seq }

// Flush hands buffered rows to the underlying writer.
func (w *CSVWriter) Flush() error { return w.w.Flush() }
