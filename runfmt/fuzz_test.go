package runfmt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// oneLine: every reading error is a single line that names the file.
func oneLine(t *testing.T, err error, file string) {
	t.Helper()
	if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), file) {
		t.Fatalf("error is not one line naming %s: %q", file, err)
	}
}

func FuzzCSVReader(f *testing.F) {
	f.Add([]byte(CSVHeader + "\n1,Product,7,1,0,7100000\n2,Tag,1,2,,12\n"))
	f.Add([]byte("collection,primaryKey,upsert_nanos\nProduct,3,100\n"))
	f.Add([]byte("collection,primary_key,upsert_ns\r\nA,1,2\r\n"))
	f.Add([]byte(CSVHeader + "\n1,A,1,1,0,5\n2,A,2"))
	if b, err := os.ReadFile(filepath.Join("..", "testdata", "java", "ok", "per-entity.csv")); err == nil {
		f.Add(b[:2000])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewCSVReader(bytes.NewReader(data), "f.csv")
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("header error is not a ParseError: %v", err)
			}
			oneLine(t, err, "f.csv")
			return
		}
		var rows []Row
		for {
			row, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				oneLine(t, err, "f.csv")
				return
			}
			if row.UpsertNs < 0 || row.PrimaryKey < 0 || row.Collection == "" {
				t.Fatalf("invalid row accepted: %+v", row)
			}
			rows = append(rows, row)
		}
		// what was read writes back and reads again to the same rows
		var buf bytes.Buffer
		w, _ := NewCSVWriter(&buf)
		for _, row := range rows {
			if err := w.Write(row); err != nil {
				return // e.g. a name with a quote: readable, but the writer refuses it
			}
		}
		w.Flush()
		r2, err := NewCSVReader(&buf, "again.csv")
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			got, err := r2.Next()
			if err != nil {
				t.Fatalf("re-read row %d: %v", i, err)
			}
			want := rows[i]
			want.Seq = int64(i + 1)
			if got != want {
				t.Fatalf("row %d: %+v != %+v", i, got, want)
			}
		}
	})
}

func FuzzManifest(f *testing.F) {
	for _, d := range []string{"warmstat-verified", "warmstat-aborted"} {
		if b, err := os.ReadFile(filepath.Join("..", "testdata", "runs", d, ManifestFile)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"schema":"warmstat.run/v1"}`))
	f.Add([]byte(`{"schema":"warmstat.run/v2"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest("m.json", data)
		if err != nil {
			oneLine(t, err, "m.json")
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("parsed but invalid: %v", err)
		}
		if m.ExitCode != ExitCodeFor(m.Outcome.Status, m.Verification.Status) {
			t.Fatal("exit code rule broken")
		}
	})
}

func FuzzHarnessLog(f *testing.F) {
	for _, sc := range []string{"ok", "golive-failed", "mismatch", "cs_CZ", "unverified", "capped-embedded"} {
		if b, err := os.ReadFile(filepath.Join("..", "testdata", "java", sc, "stdout.log")); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseHarness("h.log", data)
		if err != nil {
			oneLine(t, err, "h.log")
			return
		}
		m := r.Manifest("dir", HarnessImportOptions{})
		if m.Entities != r.Entities {
			t.Fatal("entities lost")
		}
		// a report that parses either yields a valid manifest or a clear validation error
		if err := m.Validate(); err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("multi-line validation error: %v", err)
		}
	})
}

// The one-pass parse of the writer's own layout reads every row as the general parse
// does: the same rows, the same error on the same line, whatever the bytes and wherever
// the read buffer's refills cut them.
func FuzzFastRowIsParse(f *testing.F) {
	for _, rows := range []string{
		"1,Product,7,1,0,7100000\n2,Tag,1,2,,12\n",
		"1,A,1,,,5\n2,A,2,3,4,5\n3,A,2147483648,3,4,5\n",
		"1,A,1,2,3,4,5\n", "1,,1,2,3,4\n", "2,A,1,1,1,1\n", "1,A,1,5,0,1\n2,A,1,4,0,1\n",
		"1,A,1,1,1,9999999999999999999\n", "1,A,1,1,1,\n", "1,A,-1,1,1,1\n", "1,A,1,1,1,1\r\n2,B,1,1,1,1\n",
		"01,A,0001,1,1,0000000000000000001\n", "1,A,1,1,1,1\n\n", "1,A,1,1,1,1\r2,A,1,1,1,1\n", "1,A,1,1,1,1\r\r\n",
		"1,A\n2,A,1,1,1,1\n", "1,Product,1,1,1,1\n2,Product,1,1,1,1\n3,Productx,1,1,1,1\n4,Product\n",
		// cost rows (read under the cost header; the rows above are refused under it, and these under the plain one)
		"1,Product,7,1,0,7100000,6900000,1234567,150000\n2,Tag,2,2,7200000,90000,,0,\n", "1,A,1,1,1,100,101,1,1\n",
		"1,A,1,1,1,100,1,1,101\n", "1,A,1,1,1,100,,,\n", "1,A,1,1,1,100,1,1\n", "1,A,1,1,1,100,1,1,1,1\n",
	} {
		f.Add([]byte(rows))
	}
	read := func(data []byte, fast bool, buf int, hdr string) (rows []Row, err error) {
		defer func(was int) { csvBufSize = was }(csvBufSize)
		csvBufSize = buf
		r, err := NewCSVReader(bytes.NewReader(append([]byte(hdr+"\n"), data...)), "f.csv")
		if err != nil {
			return nil, err
		}
		r.canonical = fast
		return rowsOf(r)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// a small read buffer puts rows across its refills, as a large file does
		for _, hdr := range []string{CSVHeader, CSVCostHeader} {
			for _, buf := range []int{64, 101, 256 << 10} {
				fastRows, fastErr := read(data, true, buf, hdr)
				rows, err := read(data, false, buf, hdr)
				if fmt.Sprint(fastErr) != fmt.Sprint(err) || !slices.Equal(fastRows, rows) {
					t.Fatalf("%s, buffer %d: one-pass parse: %v %+v\ngeneral parse: %v %+v", hdr, buf, fastErr, fastRows, err, rows)
				}
			}
		}
	})
}
