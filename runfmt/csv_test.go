package runfmt

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
)

func readAll(t *testing.T, data string) ([]Row, error) {
	t.Helper()
	r, err := NewCSVReader(strings.NewReader(data), "x.csv")
	if err != nil {
		return nil, err
	}
	return rowsOf(r)
}

// rowsOf reads r to its end: every row, then its error (nil at the end of the file).
func rowsOf(r *CSVReader) ([]Row, error) {
	var rows []Row
	for {
		row, err := r.Next()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
}

func TestCSVRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewCSVWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	in := []Row{
		{Collection: "Product", PrimaryKey: 7, Batch: 1, StartNs: 0, UpsertNs: 7_100_000},
		{Collection: "Product", PrimaryKey: 9, Batch: 1, StartNs: 7_200_000, UpsertNs: 6_900_000},
		{Collection: "Tag", PrimaryKey: 2147483647, Batch: 2, StartNs: -1, UpsertNs: 0},
	}
	for _, r := range in {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := CSVHeader + "\n1,Product,7,1,0,7100000\n2,Product,9,1,7200000,6900000\n3,Tag,2147483647,2,,0\n"
	if buf.String() != want {
		t.Fatalf("written:\n%s\nwant:\n%s", buf.String(), want)
	}
	got, err := readAll(t, buf.String())
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		in[i].Seq = int64(i + 1)
		in[i].CPUNs, in[i].AllocBytes, in[i].WaitNs = Unknown, Unknown, Unknown // a file without the cost columns
		if got[i] != in[i] {
			t.Errorf("row %d: got %+v want %+v", i, got[i], in[i])
		}
	}
}

// The cost columns round-trip, an unknown figure is an empty field, and a row whose CPU
// or run-queue wait exceeds its wall clock (both are read inside it) is refused by the
// writer and, naming the field, by the reader; the general parser reads what the fast
// one reads.
func TestCSVCostColumns(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewCostCSVWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	in := []Row{
		{Collection: "Product", PrimaryKey: 7, Batch: 1, StartNs: 0, UpsertNs: 7_100_000, CPUNs: 6_900_000, AllocBytes: 1_234_567, WaitNs: 150_000},
		{Collection: "Tag", PrimaryKey: 2, Batch: 2, StartNs: 7_200_000, UpsertNs: 90_000, CPUNs: Unknown, AllocBytes: 0, WaitNs: Unknown},
	}
	for _, r := range in {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Write(Row{Collection: "Tag", PrimaryKey: 3, UpsertNs: 10, CPUNs: 11}); err == nil {
		t.Error("a row with more CPU than wall was written")
	}
	w.Flush()
	want := CSVCostHeader + "\n1,Product,7,1,0,7100000,6900000,1234567,150000\n2,Tag,2,2,7200000,90000,,0,\n"
	if buf.String() != want {
		t.Fatalf("written:\n%s\nwant:\n%s", buf.String(), want)
	}
	// the same rows with the columns in another order go the general way
	shuffled := "cpu_ns,collection,primary_key,upsert_ns,wait_ns,alloc_bytes\n6900000,Product,7,7100000,150000,1234567\n,Tag,2,90000,,0\n"
	for _, data := range []string{buf.String(), shuffled} {
		r, err := NewCSVReader(strings.NewReader(data), "x.csv")
		if err != nil {
			t.Fatal(err)
		}
		if !r.HasCost() {
			t.Error("HasCost false for a file with the cost columns")
		}
		got, err := rowsOf(r)
		if err != nil || len(got) != 2 {
			t.Fatalf("rows %+v, %v", got, err)
		}
		for i := range got {
			g, w := got[i], in[i]
			if g.CPUNs != w.CPUNs || g.AllocBytes != w.AllocBytes || g.WaitNs != w.WaitNs || g.UpsertNs != w.UpsertNs {
				t.Errorf("row %d: got %+v want %+v", i, g, w)
			}
		}
	}
	for _, c := range []struct{ data, want string }{
		{CSVCostHeader + "\n1,Product,7,1,0,100,101,5,0\n", "x.csv:2: field cpu_ns: 101 ns of CPU in an upsert of 100 ns"},
		{CSVCostHeader + "\n1,Product,7,1,0,100,50,5,200\n", "x.csv:2: field wait_ns: 200 ns waiting in an upsert of 100 ns"},
		{CSVCostHeader + "\n1,Product,7,1,0,100,50,-5,0\n", `x.csv:2: field alloc_bytes: "-5" is not a non-negative integer`},
	} {
		if _, err := readAll(t, c.data); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %s", c.data, err, c.want)
		}
	}
	if r, _ := NewCSVReader(strings.NewReader(CSVHeader+"\n"), "x.csv"); r.HasCost() {
		t.Error("HasCost true without the columns")
	}
}

func TestCSVReadsJavaHeader(t *testing.T) {
	rows, err := readAll(t, "collection,primaryKey,upsert_nanos\nProduct,3,100\nTag,1,5\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[1] != (Row{Collection: "Tag", PrimaryKey: 1, UpsertNs: 5, StartNs: -1, CPUNs: Unknown, AllocBytes: Unknown, WaitNs: Unknown}) {
		t.Fatalf("rows %+v", rows)
	}
}

func TestCSVWriterRefusesUnquotableNames(t *testing.T) {
	w, _ := NewCSVWriter(io.Discard)
	for _, n := range []string{"", "a,b", "a\nb", `a"b`} {
		if err := w.Write(Row{Collection: n, UpsertNs: 1}); err == nil {
			t.Errorf("collection %q accepted", n)
		}
	}
}

// Every error is one line naming file, line and field.
func TestCSVErrors(t *testing.T) {
	const h = "seq,collection,primary_key,batch,start_ns,upsert_ns\n"
	cases := []struct{ name, data, want string }{
		{"empty file", "", "x.csv:1: empty file: no header"},
		{"missing column", "collection,primary_key\nA,1\n", "x.csv:1: field upsert_ns: missing column"},
		{"unknown column", "collection,primary_key,upsert_ns,colour\n", `x.csv:1: field "colour": unknown column (warmstat's entities.csv has seq,`},
		// an invisible character is shown, and the harness's own header is named too
		{"zero-width space", "\u200bcollection,primaryKey,upsert_nanos\n", `x.csv:1: field "\u200bcollection": unknown column`},
		{"duplicate column", "collection,primary_key,upsert_ns,upsert_ns\n", "x.csv:1: field upsert_ns: column appears twice"},
		{"truncated", h + "1,A,1,1,0,100\n2,A,2,1,1", "x.csv:3: truncated: last line has no line end"},
		{"bad number", h + "1,A,1,1,0,12x\n", `x.csv:2: field upsert_ns: "12x" is not a non-negative integer`},
		{"negative", h + "1,A,-1,1,0,5\n", `x.csv:2: field primary_key: "-1" is not a non-negative integer`},
		{"pk overflow", h + "1,A,2147483648,1,0,5\n", "x.csv:2: field primary_key: 2147483648 does not fit a 32-bit primary key"},
		{"int64 overflow", h + "1,A,1,1,0,99999999999999999999\n", `x.csv:2: field upsert_ns: "99999999999999999999" is not a non-negative integer`},
		{"missing field", h + "1,A,1,1\n", "x.csv:2: field start_ns: missing (row has 4 of 6 fields)"},
		{"extra field", h + "1,A,1,1,0,5,9\n", "x.csv:2: more than 6 fields"},
		{"empty line", h + "1,A,1,1,0,5\n\n", "x.csv:3: empty line"},
		{"empty collection", h + "1,,1,1,0,5\n", "x.csv:2: field collection: empty"},
		{"empty required", h + "1,A,1,1,0,\n", "x.csv:2: field upsert_ns: empty"},
		{"seq gap", h + "1,A,1,1,0,5\n3,A,2,1,0,5\n", "x.csv:3: field seq: 3 follows 1"},
		{"seq not starting at 1", h + "2,A,1,1,0,5\n", "x.csv:2: field seq: 2 follows 0"},
		{"batch backwards", h + "1,A,1,2,0,5\n2,A,2,1,0,5\n", "x.csv:3: field batch: 1 after 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := readAll(t, c.data)
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v is not a ParseError", err, err)
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("error\n  %s\nwant prefix\n  %s", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
		})
	}
}

// A UTF-8 byte-order mark (spreadsheets, Windows tools) before either header is not a
// column name; and an unknown column lists the harness's columns as well as ours.
func TestCSVByteOrderMark(t *testing.T) {
	for _, hdr := range []string{"collection,primaryKey,upsert_nanos\nProduct,3,100\n", CSVHeader + "\n1,Product,3,,,100\n"} {
		rows, err := readAll(t, "\xef\xbb\xbf"+hdr)
		if err != nil {
			t.Fatalf("BOM before %q: %v", hdr, err)
		}
		if len(rows) != 1 || rows[0].Collection != "Product" || rows[0].UpsertNs != 100 {
			t.Fatalf("rows %+v", rows)
		}
	}
	_, err := readAll(t, "collection,primary_key,upsert_time\n")
	if err == nil || !strings.Contains(err.Error(), "per-entity.csv has collection, primaryKey, upsert_nanos") {
		t.Fatalf("unknown column: %v", err)
	}
}

func TestCSVToleratesCRLFAndOptionalEmpties(t *testing.T) {
	rows, err := readAll(t, "seq,collection,primary_key,batch,start_ns,upsert_ns\r\n1,A,1,,,5\r\n")
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].StartNs != -1 || rows[0].Batch != 0 || rows[0].UpsertNs != 5 {
		t.Fatalf("%+v", rows[0])
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{
		"23g": 23 << 30, "23G": 23 << 30, "14336m": 14336 << 20, "14.0 GiB": 14 << 30, "14,0 GiB": 14 << 30,
		"512k": 512 << 10, "8 GB": 8 << 30, "1024": 1024, "1.5t": 3 << 39, " 2MiB ": 2 << 20,
	} {
		got, err := ParseBytes(in)
		if err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "g", "12q", "1.2.3g", "--5g", "1e400g"} {
		if _, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) accepted", bad)
		}
	}
	if FormatBytes(nil) != "unknown" {
		t.Errorf("FormatBytes(nil) = %s", FormatBytes(nil))
	}
}

// Heaps print in one notation, the one the heap flags take: "1.2g" beside "1g", never
// "1.2 GiB" beside "1g"; and what is printed reads back as the size (to its rounding).
func TestFormatBytesIsOneNotation(t *testing.T) {
	for _, c := range []struct {
		bytes int64
		want  string
	}{
		{23 << 30, "23g"},
		{1 << 30, "1g"},
		{1288490189, "1.2g"},
		{1536 << 20, "1.5g"},
		{3840 << 20, "3.75g"},
		{15_300_000_000, "14.25g"},
		{512 << 20, "512m"},
		{1000 << 20 / 3, "333.33m"},
		{64 << 10, "64k"},
		{700, "700 B"},
	} {
		got := FormatBytes(&c.bytes)
		if got != c.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", c.bytes, got, c.want)
		}
		back, err := ParseBytes(got)
		if err != nil || math.Abs(float64(back-c.bytes)) > 0.005*float64(c.bytes) {
			t.Errorf("ParseBytes(FormatBytes(%d) = %q) = %d, %v", c.bytes, got, back, err)
		}
		// a size someone must give at least is never printed below itself
		least, _ := ParseBytes(FormatBytesAtLeast(c.bytes))
		if least < c.bytes {
			t.Errorf("FormatBytesAtLeast(%d) = %q reads back as %d, below it", c.bytes, FormatBytesAtLeast(c.bytes), least)
		}
	}
}

// A size someone set prints exactly as a flag takes it: it reads back as the same bytes,
// so two different heaps never print alike ("1g" against 1.0001g's exact form).
func TestFormatBytesExactReadsBack(t *testing.T) {
	for _, c := range []struct {
		bytes int64
		want  string
	}{
		{1 << 30, "1g"}, {1280 << 20, "1.25g"}, {1536 << 20, "1.5g"}, {1000 << 20, "1000m"}, {23 << 30, "23g"}, {700, "700 B"},
	} {
		if got := FormatBytesExact(&c.bytes); got != c.want {
			t.Errorf("FormatBytesExact(%d) = %q, want %q", c.bytes, got, c.want)
		}
	}
	odd, _ := ParseBytes("1.0001g")
	if FormatBytesExact(&odd) == "1g" {
		t.Errorf("1.0001g prints as 1g")
	}
	for _, v := range []int64{odd, 171_884_544, 25_264_832_512, 1<<30 + 1, 12_345_678_901, 999, 1 << 40} {
		s := FormatBytesExact(&v)
		if back, err := ParseBytes(s); err != nil || back != v {
			t.Errorf("FormatBytesExact(%d) = %q reads back as %d, %v", v, s, back, err)
		}
	}
	if FormatBytesExact(nil) != "unknown" {
		t.Error("nil")
	}
}

// The size of a file prints in named binary units, not in a flag's notation.
func TestFormatSize(t *testing.T) {
	for v, want := range map[int64]string{734_877: "717.7 KiB", 14_470_000: "13.8 MiB", 700: "700 B", 3 << 30: "3.0 GiB"} {
		if got := FormatSize(v); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", v, got, want)
		}
	}
}
