package runfmt

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func validManifestJSON(t *testing.T) (string, *Manifest) {
	t.Helper()
	dir := t.TempDir()
	m := nativeRun(t, dir, false)
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	return string(data), m
}

func TestManifestRoundTrip(t *testing.T) {
	data, m := validManifestJSON(t)
	got, err := ParseManifest("m.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(m)
	b, _ := json.Marshal(got)
	if string(a) != string(b) {
		t.Fatalf("round trip differs:\n%s\n%s", a, b)
	}
}

func TestManifestErrors(t *testing.T) {
	data, _ := validManifestJSON(t)
	edit := func(old, new string) string {
		if !strings.Contains(data, old) {
			t.Fatalf("fixture lacks %q", old)
		}
		return strings.Replace(data, old, new, 1)
	}
	line := func(s string) string { // line number of s in the fixture
		i := strings.Index(data, s)
		return "m.json:" + strconv.Itoa(strings.Count(data[:i], "\n")+1)
	}
	cases := []struct{ name, data, want string }{
		{"unknown schema", edit(`"warmstat.run/v1"`, `"warmstat.run/v9"`), `m.json:2: field schema: unknown schema version "warmstat.run/v9"`},
		{"no schema", edit(`"schema": "warmstat.run/v1",`, ``), "m.json:1: field schema: missing"},
		{"truncated", data[:len(data)/2], "m.json:"},
		{"bad number", edit(`"batch_size": 100`, `"batch_size": "100"`), line(`"batch_size"`) + ": field conditions.batch_size: expected int, got JSON string"},
		{"unknown field", edit(`"batch_size": 100`, `"batch_sise": 100`), line(`"batch_size"`) + ": field batch_sise: unknown field"},
		{"exit code", edit(`"exit_code": 0`, `"exit_code": 2`), line(`"exit_code"`) + ": field exit_code: 2, but outcome complete with verification verified means 0"},
		{"entities sum", edit(`"entities": 700`, `"entities": 701`), "field entities: 701, but the collections add up to 700"},
		{"golive status", edit(`"status": "ok"`, `"status": "fine"`), `field golive.status: "fine" is not one of ok, failed, unconfirmed, skipped`},
		{"fingerprint", edit(`"Product": 400`, `"Product": 401`), "field dataset.fingerprint:"},
		{"loader", edit(`"name": "warmstat"`, `"name": "jmeter"`), `field loader.name: "jmeter" is neither`},
		{"heap", edit(`"max_heap_bytes": 2147483648`, `"max_heap_bytes": -1`), "field server.max_heap_bytes: must be positive or null"},
		{"verified but differs", edit(`"target": 400`, `"target": 399`), "field verification.status: verified, but 1 collection(s) have target != expected"},
		{"catalog line", edit(`"batch_size": 100`, `"batch_size": 100, "catalog_line": "2025.6"`), `field conditions.catalog_line: "2025.6": known are "2026.1" or none`},
		{"trailing", data + "{}", "invalid JSON: invalid character '{' after top-level value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseManifest("m.json", []byte(c.data))
			if err == nil {
				t.Fatalf("accepted; want %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "m.json") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error\n  %v\nwant (one line, naming the file) containing\n  %s", err, c.want)
			}
		})
	}
}

func TestWriteManifestRefusesInvalid(t *testing.T) {
	m := &Manifest{Schema: SchemaV1}
	if err := WriteManifest(filepath.Join(t.TempDir(), "m.json"), m); err == nil {
		t.Fatal("invalid manifest written")
	}
}

func TestScanAgainstManifest(t *testing.T) {
	dir := t.TempDir()
	nativeRun(t, dir, false)
	run, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	csv, _ := os.ReadFile(filepath.Join(dir, EntitiesFile))
	lines := strings.SplitAfter(string(csv), "\n")
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(dir, EntitiesFile), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// one row short
	write(strings.Join(lines[:len(lines)-2], ""))
	if err := run.ScanRows(nil); err == nil || !strings.Contains(err.Error(), "699 rows, but") {
		t.Fatalf("short CSV: %v", err)
	}
	// a collection the manifest does not know
	write(strings.Join(lines[:len(lines)-2], "") + strings.Replace(lines[len(lines)-2], "Tag", "Voucher", 1))
	if err := run.ScanRows(nil); err == nil || !strings.Contains(err.Error(), `field collection: "Voucher" is not a collection of`) {
		t.Fatalf("foreign collection: %v", err)
	}
	// right total, wrong split between collections (the moved row takes 0 ns, so the
	// sums still fit)
	moved := strings.Split(strings.Replace(lines[len(lines)-2], "Tag", "Stock", 1), ",")
	moved[len(moved)-1] = "0\n"
	write(strings.Join(lines[:len(lines)-2], "") + strings.Join(moved, ","))
	if err := run.ScanRows(nil); err == nil || !strings.Contains(err.Error(), `151 rows of "Stock"`) {
		t.Fatalf("wrong split: %v", err)
	}
}

// A row that cannot be true is refused where it stands, naming line and field, before
// any sum of it can overflow: the largest int64 as an upsert time used to print a
// negative mean. A CSV whose sums fall short of the manifest's is another run's.
func TestScanRefusesImpossibleSums(t *testing.T) {
	dir := t.TempDir()
	nativeRun(t, dir, false)
	run, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	csv, _ := os.ReadFile(filepath.Join(dir, EntitiesFile))
	lines := strings.SplitAfter(string(csv), "\n")
	setUpsert := func(i int, v string) {
		f := strings.Split(strings.TrimSuffix(lines[i], "\n"), ",")
		f[len(f)-1] = v
		body := append(slices.Clone(lines[:i]), strings.Join(f, ",")+"\n")
		os.WriteFile(filepath.Join(dir, EntitiesFile), []byte(strings.Join(append(body, lines[i+1:]...), "")), 0o644)
	}
	setUpsert(70, "9223372036854775807") // a Product row
	err = run.ScanRows(func(Row) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "entities.csv:71: field upsert_ns: 9223372036854775807 ns takes the upserts of \"Product\" past") {
		t.Fatalf("overflowing row: %v", err)
	}
	setUpsert(70, "1")
	err = run.ScanRows(nil)
	if err == nil || !strings.Contains(err.Error(), `field upsert_ns: the upserts of "Product" add up to`) || !strings.Contains(err.Error(), "collections[1].upsert_ns") {
		t.Fatalf("short sum: %v", err)
	}
}

// Clocks that cannot all be true are refused with the field and its line: a part
// longer than the whole it was timed inside (negative ingest, 200 % shares), a load of
// many entities in 0 ns, or totals that overflow.
func TestManifestClockChecks(t *testing.T) {
	data, m := validManifestJSON(t)
	set := func(path []string, v int64) string {
		var doc map[string]any
		json.Unmarshal([]byte(data), &doc)
		var node any = doc
		for _, k := range path[:len(path)-1] {
			if i, err := strconv.Atoi(k); err == nil {
				node = node.([]any)[i]
			} else {
				node = node.(map[string]any)[k]
			}
		}
		node.(map[string]any)[path[len(path)-1]] = v
		out, _ := json.MarshalIndent(doc, "", "  ")
		return string(out)
	}
	line := func(doc, parent, key string, nth int) string { // line of the nth key after parent
		off := strings.Index(doc, `"`+parent+`"`)
		for k := 0; k <= nth; k++ {
			i := strings.Index(doc[off:], `"`+key+`"`)
			off += i + 1
		}
		return "m.json:" + strconv.Itoa(strings.Count(doc[:off], "\n")+1) + ": "
	}
	load := m.Timings.LoadWallNs
	cases := []struct {
		name string
		doc  string
		want func(doc string) string
	}{
		{"upsert beyond load", set([]string{"timings", "upsert_ns"}, 2*load), func(d string) string {
			return line(d, "timings", "upsert_ns", 0) + "field timings.upsert_ns: the upserts take"
		}},
		{"read beyond load", set([]string{"timings", "source_read_ns"}, load+1), func(d string) string {
			return line(d, "timings", "source_read_ns", 0) + "field timings.source_read_ns: the source reads take"
		}},
		{"zero load", set([]string{"timings", "load_wall_ns"}, 0), func(d string) string {
			return line(d, "timings", "load_wall_ns", 0) + "field timings.load_wall_ns: 0 ns for a load of 700 entities"
		}},
		{"collection upsert beyond its wall", set([]string{"collections", "2", "upsert_ns"}, m.Collections[2].WallNs+1), func(d string) string {
			return line(d, "collections", "upsert_ns", 2) + `field collections[2].upsert_ns: the upserts take 0.023004673 s, longer than the wall-clock of "Stock"`
		}},
		{"golive overflows total", set([]string{"golive", "ns"}, math.MaxInt64), func(d string) string {
			return "field golive.ns: 9223372036854775807: load wall-clock plus goLive overflows"
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseManifest("m.json", []byte(c.doc))
			if want := c.want(c.doc); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v\nwant %s", err, want)
			}
		})
	}
	// a coarse clock may print 0.0 s for a tiny load; exact upserts within half a step
	// of the printed figures are consistent with it
	coarse := *m
	coarse.Timings = Timings{ResolutionNs: 1e8, LoadWallNs: 0, UpsertNs: 4e7, SourceReadNs: 0}
	coarse.Collections = []Collection{{Name: "Tag", Entities: 700, UpsertNs: 4e7}}
	coarse.GoLive = GoLive{Status: GoLiveSkipped}
	if err := coarse.Validate(); err != nil {
		t.Fatalf("0.0 s at 0.1 s resolution: %v", err)
	}
	coarse.Timings.UpsertNs, coarse.Collections[0].UpsertNs = 2e8, 2e8
	if err := coarse.Validate(); err == nil {
		t.Fatal("0.2 s of upserts inside a load printed as 0.0 s accepted")
	}
}

func TestStageRefusesForeignDirectory(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	os.MkdirAll(out, 0o755)
	os.WriteFile(filepath.Join(out, "precious.txt"), []byte("mine"), 0o644)
	if _, err := Stage(out); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("Stage over a non-empty dir: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "precious.txt")); string(b) != "mine" {
		t.Fatal("foreign file touched")
	}
	// an empty directory is fine, and an aborted stage leaves nothing behind
	empty := filepath.Join(dir, "empty")
	os.MkdirAll(empty, 0o755)
	st, err := Stage(empty)
	if err != nil {
		t.Fatal(err)
	}
	st.Abort()
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Fatalf("leftovers after abort: %v", ents)
	}
}

// A folder a killed load left (entities.csv, no manifest.json) is reported, not
// silently skipped; a folder that is no run at all is not a run.
func TestRunDirsReportsIncompleteRuns(t *testing.T) {
	dir := t.TempDir()
	nativeRun(t, filepath.Join(dir, "run-1"), false)
	os.MkdirAll(filepath.Join(dir, "run-2"), 0o755)
	os.WriteFile(filepath.Join(dir, "run-2", EntitiesFile), []byte(CSVHeader+"\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "run-1.work"), 0o755)
	runs, skipped, err := RunDirs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || len(skipped) != 1 || skipped[0].Dir != filepath.Join(dir, "run-2") || !strings.Contains(skipped[0].Reason, "no manifest.json") {
		t.Fatalf("runs %v, skipped %+v", runs, skipped)
	}
	os.RemoveAll(filepath.Join(dir, "run-1"))
	if _, _, err := RunDirs(dir); err == nil || !strings.Contains(err.Error(), "1 incomplete: "+filepath.Join(dir, "run-2")) {
		t.Fatalf("only an incomplete run: %v", err)
	}
}

// A failed write leaves the old file as it was and no temporary file behind.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.svg")
	os.WriteFile(p, []byte("old"), 0o644)
	err := WriteFileAtomic(p, func(w io.Writer) error {
		w.Write([]byte("half of the new"))
		return errors.New("renderer ran out of memory")
	})
	if err == nil {
		t.Fatal("error lost")
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Fatalf("old file changed to %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("leftovers: %v", ents)
	}
	if err := WriteFileAtomic(p, func(w io.Writer) error { _, err := w.Write([]byte("new")); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Fatalf("got %q", b)
	}
}

// After FreezeCommits (a second Ctrl-C) no run is moved into place: a commit blocks
// until the process exits. Freezing is for good, so it runs in a child process.
func TestFreezeCommits(t *testing.T) {
	if dir := os.Getenv("WARMSTAT_FREEZE_CHILD"); dir != "" {
		st, err := Stage(filepath.Join(dir, "run"))
		if err != nil {
			t.Fatal(err)
		}
		FreezeCommits()
		done := make(chan error, 1)
		go func() { done <- st.Commit() }()
		select {
		case err := <-done:
			t.Fatalf("a commit after FreezeCommits returned (%v)", err)
		case <-time.After(500 * time.Millisecond):
		}
		if _, err := os.Stat(filepath.Join(dir, "run")); !os.IsNotExist(err) {
			t.Fatalf("the run was moved into place after FreezeCommits: %v", err)
		}
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFreezeCommits$", "-test.v")
	cmd.Env = append(os.Environ(), "WARMSTAT_FREEZE_CHILD="+dir)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "--- PASS: TestFreezeCommits") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "run")); !os.IsNotExist(err) {
		t.Fatalf("run committed: %v", err)
	}
}
