package runfmt

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func fixture(t *testing.T, scenario string) (*HarnessReport, string) {
	t.Helper()
	p := filepath.Join("..", "testdata", "java", scenario, "stdout.log")
	r, err := ParseHarnessLog(p)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	return r, string(data)
}

func TestHarnessLogOK(t *testing.T) {
	r, _ := fixture(t, "ok")
	if r.SourceCatalog != "catalog" || r.TargetCatalog != "catalog" || r.TargetMode != TargetRemote || r.TargetAddress != "localhost:5555" {
		t.Errorf("catalogs: %+v", r)
	}
	if r.Entities != 1249 || r.BatchSize != 1000 || *r.ReaderMaxHeap != 14<<30 {
		t.Errorf("header: entities %d batch %d heap %v", r.Entities, r.BatchSize, r.ReaderMaxHeap)
	}
	if r.GoLiveFailed || r.GoLiveNs <= 30e9 || r.Verification.Status != Verified || *r.ExitStatus != 0 {
		t.Errorf("outcome: %+v %+v", r.GoLiveNs, r.Verification)
	}
	if len(r.Collections) != 4 || r.Collections[0].Name != "Product" || r.Collections[0].Entities != 1000 {
		t.Errorf("collections: %+v", r.Collections)
	}
	if r.ServerHeap != nil {
		t.Error("server heap invented: the loader log does not print it")
	}
	m := r.Manifest("x/ok", HarnessImportOptions{})
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if m.Collections[0].Name != "Category" { // load order is alphabetical
		t.Errorf("load order: %v", m.CollectionNames())
	}
	if m.Server.MaxHeapBytes != nil || m.Reader.MaxHeapBytes == nil || m.StartedAt != nil || m.Machine.Cores != nil {
		t.Error("unknowns must stay unknown, knowns known")
	}
	// flags win over the log
	h := int64(8 << 30)
	m = r.Manifest("x/ok", HarnessImportOptions{ReaderHeap: &h, ServerHeap: &h, Build: "v2026.2.0"})
	if *m.Reader.MaxHeapBytes != h || *m.Server.MaxHeapBytes != h || m.Build.Label != "v2026.2.0" {
		t.Error("flags did not win")
	}
}

func TestHarnessLogScenarios(t *testing.T) {
	r, _ := fixture(t, "golive-failed")
	if !r.GoLiveFailed || r.GoLiveNs != 15_000_000_000 || !strings.HasPrefix(r.GoLiveError, "StatusRuntimeException: DEADLINE_EXCEEDED") ||
		!strings.Contains(r.GoLiveError, "remote_addr") { // continuation line kept
		t.Errorf("golive: %v %d %q", r.GoLiveFailed, r.GoLiveNs, r.GoLiveError)
	}
	if m := r.Manifest("d", HarnessImportOptions{}); m.GoLive.Status != GoLiveFailed || m.ExitCode != 0 {
		t.Errorf("a goLive failure alone keeps exit 0: %+v %d", m.GoLive, m.ExitCode)
	}

	r, _ = fixture(t, "unverified")
	if m := r.Manifest("d", HarnessImportOptions{}); m.Verification.Status != Unverified || m.ExitCode != 2 || m.Dataset.Fingerprint != "" {
		t.Errorf("unverified: %+v exit %d", m.Verification, m.ExitCode)
	}

	r, _ = fixture(t, "mismatch")
	m := r.Manifest("d", HarnessImportOptions{})
	if m.Verification.Status != Mismatch || m.ExitCode != 1 {
		t.Fatalf("mismatch: %+v", m.Verification)
	}
	for _, c := range m.Verification.Counts {
		if c.Collection == "Product" && (c.Expected != 1000 || c.Target != 993) {
			t.Errorf("Product check %+v", c)
		}
	}

	r, _ = fixture(t, "capped-embedded")
	if r.TargetMode != TargetEmbedded || !r.Capped || r.CapInferred != 150 || r.BatchSize != 100 {
		t.Errorf("capped embedded: mode %s capped %v cap %d", r.TargetMode, r.Capped, r.CapInferred)
	}
	if m := r.Manifest("d", HarnessImportOptions{}); m.Verification.Status != Verified || m.Conditions.MaxPerCollection != 150 {
		t.Errorf("capped: %+v", m.Conditions)
	}

	r, _ = fixture(t, "cs_CZ")
	if !r.CommaDecimal || r.Entities != 1780 || r.LoadWallNs != 1_318_400_000_000 || r.Collections[0].WallNs != 1_310_800_000_000 {
		t.Errorf("cs_CZ: comma %v entities %d wall %d", r.CommaDecimal, r.Entities, r.LoadWallNs)
	}
	if r.Overall.Mean != 6815888 || r.Overall.Max != 38999037 {
		t.Errorf("cs_CZ latency %+v", r.Overall)
	}
}

func TestHarnessLogWrapperLines(t *testing.T) {
	_, data := fixture(t, "ok")
	wrapped := "[10:00:00] git      : a808b4e46 (dev)\n[10:00:00] heaps    : writer 23g, reader 14g/8g\n" + data +
		"LOAD_EXIT=0\nRUN_STATUS=MEASUREMENT-DONE-a808b4e46\n"
	r, err := parseHarness("w.log", []byte(wrapped))
	if err != nil {
		t.Fatal(err)
	}
	if r.ServerHeap == nil || *r.ServerHeap != 23<<30 || r.GitCommit != "a808b4e46" || r.RunName != "a808b4e46" {
		t.Fatalf("wrapper lines: heap %v git %q run %q", r.ServerHeap, r.GitCommit, r.RunName)
	}
	if m := r.Manifest("d", HarnessImportOptions{}); m.Build.Label != "a808b4e46" || m.RunID != "a808b4e46" {
		t.Fatalf("label %q id %q", m.Build.Label, m.RunID)
	}
}

// A plain-space grouping (some locales) and ANSI colours must not break the parse.
func TestHarnessLogSpaceGroupingAndANSI(t *testing.T) {
	_, data := fixture(t, "cs_CZ")
	data = strings.ReplaceAll(data, "\u00a0", " ")
	data = strings.Replace(data, "per-collection breakdown", "\x1b[1mper-collection breakdown\x1b[0m", 1)
	r, err := parseHarness("s.log", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if r.Collections[0].Entities != 1500 || r.Entities != 1780 {
		t.Fatalf("%+v", r.Collections[0])
	}
}

// A cs_CZ JVM writing to a Latin-1 terminal groups digits with the single byte 0xA0,
// not UTF-8's C2 A0: the README promises any JVM locale, so the parse must not care.
func TestHarnessLogLatin1(t *testing.T) {
	want, data := fixture(t, "cs_CZ")
	latin1 := strings.ReplaceAll(data, "\u00a0", "\xa0")
	if latin1 == data || strings.Contains(latin1, "\u00a0") {
		t.Fatal("fixture has no NBSP to re-encode")
	}
	r, err := parseHarness("latin1.log", []byte(latin1))
	if err != nil {
		t.Fatal(err)
	}
	if r.Entities != want.Entities || r.LoadWallNs != want.LoadWallNs || r.Overall != want.Overall || len(r.Collections) != len(want.Collections) {
		t.Fatalf("Latin-1 parse differs: %+v vs %+v", r.Overall, want.Overall)
	}
}

func TestHarnessLogErrors(t *testing.T) {
	_, data := fixture(t, "ok")
	lines := strings.Split(data, "\n")
	lineOf := func(prefix string) int {
		for i, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return i + 1
			}
		}
		t.Fatalf("no line %q", prefix)
		return 0
	}
	replace := func(old, new string) string {
		if !strings.Contains(data, old) {
			t.Fatalf("fixture lacks %q", old)
		}
		return strings.Replace(data, old, new, 1)
	}
	cut := strings.Index(data, "throughput (pure upsert)")
	cases := []struct{ name, data, want string }{
		{"no report", "10:00 INFO starting\n", "x.log: no report block"},
		{"cut in block", data[:cut], "x.log:" + itoa(strings.Count(data[:cut], "\n")) + ": report block truncated: no closing rule"},
		{"bad number", replace("entities upserted       : 1,249", "entities upserted       : 1,2x9"),
			"x.log:" + itoa(lineOf("entities upserted")) + `: field entities upserted: "1,2x9" is not an integer`},
		{"bad duration", replace("(65.0 s)", "(65 s)"), "field load wall-clock"},
		{"missing field", replace("read batch size", "read bunch size"), "field read batch size: missing from the report block"},
		{"bad latency", replace("per-upsert latency (microseconds)\n        mean", "per-upsert latency (microseconds)\n  mean"), ""},
		{"bad row", replace("Tag                              34", "Tag                              3x4"), "field entities"},
		{"sum", replace("entities upserted       : 1,249", "entities upserted       : 1,250"), "per-collection rows add up to 1249, but entities upserted is 1250"},
		{"target mode", replace("(remote server localhost:5555 over gRPC)", "(carrier pigeon)"), `field target catalog: unknown target mode "carrier pigeon"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseHarness("x.log", []byte(c.data))
			if c.want == "" { // a reformatted header line alone is harmless
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "x.log") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error\n  %v\nwant one line containing\n  %s", err, c.want)
			}
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestParseTenths(t *testing.T) {
	for in, want := range map[string]int64{"0.0": 0, "1,209.4": 12094, "1\u00a0209,4": 12094, "1.209,4": 12094, "52129.2": 521292, "85.3%": 853, "-0.5": -5} {
		got, err := parseTenths(in)
		if err != nil || got != want {
			t.Errorf("parseTenths(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "12", "1.23", "1,2,3x", ".5", "abc"} {
		if _, err := parseTenths(bad); err == nil {
			t.Errorf("parseTenths(%q) accepted", bad)
		}
	}
}

// An imported run does not know the Java harness's version, nor the server's unless
// --server-version gives it: the manifest says null, as it promises for every unknown
// (it once wrote ""). A manifest with "" still reads, as unknown.
func TestUnknownVersionsAreNull(t *testing.T) {
	r, _ := fixture(t, "ok")
	versions := func(m *Manifest) (loader, server any) {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Loader map[string]any `json:"loader"`
			Server map[string]any `json:"server"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		lv, ok1 := doc.Loader["version"]
		sv, ok2 := doc.Server["version"]
		if !ok1 || !ok2 {
			t.Fatalf("the manifest leaves out a version field: %s", b)
		}
		return lv, sv
	}
	if l, s := versions(r.Manifest("x/ok", HarnessImportOptions{})); l != nil || s != nil {
		t.Errorf("unknown versions written as %#v and %#v, want null", l, s)
	}
	if _, s := versions(r.Manifest("x/ok", HarnessImportOptions{ServerVersion: "  "})); s != nil {
		t.Errorf("a blank server version written as %#v, want null", s)
	}
	if _, s := versions(r.Manifest("x/ok", HarnessImportOptions{ServerVersion: " 2026.2.2 "})); s != "2026.2.2" {
		t.Errorf("a given server version written as %#v, want it trimmed", s)
	}
	if _, s := versions(r.Manifest("x/ok", HarnessImportOptions{ServerVersion: "2026.2.2"})); s != "2026.2.2" {
		t.Errorf("a given server version written as %#v", s)
	}
	var old Server
	if err := json.Unmarshal([]byte(`{"version":"","max_heap_bytes":null}`), &old); err != nil || old.Version != "" {
		t.Errorf("an older manifest's \"\" does not read as unknown: %v %q", err, old.Version)
	}
	if err := json.Unmarshal([]byte(`{"version":7}`), &old); err == nil {
		t.Error("a number for a version was accepted")
	}
}
