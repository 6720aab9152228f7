package runfmt

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
	// right total, wrong split between collections
	write(strings.Join(lines[:len(lines)-2], "") + strings.Replace(lines[len(lines)-2], "Tag", "Stock", 1))
	if err := run.ScanRows(nil); err == nil || !strings.Contains(err.Error(), `151 rows of "Stock"`) {
		t.Fatalf("wrong split: %v", err)
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
