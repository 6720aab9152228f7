package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/internal/evitatest"
	"github.com/warmstat/warmstat/runfmt"
)

// Two real builds (the two newest releases) replaying one workload with the writer profiled, and one
// unprofiled: profile shows each run's hottest frames by phase in every format,
// profile --diff explains the change between the builds per upsert (the self
// shares add up to the whole change), report and table say the runs were profiled,
// and compare refuses profiled against unprofiled unless allowed.
func TestProfileTwoRealBuilds(t *testing.T) {
	older, newer := evitatest.TwoReleases(t)
	evitatest.Profiler(t)
	tmp := t.TempDir()
	t.Chdir(tmp)
	pristine, _ := evitatest.SmallSnapshot(t, newer)
	// read once; every load replays it with the writer alone (the writer is what is profiled)
	if out, stderr, code := runCLI(t, "extract", "--pristine", pristine, "--catalog", "shop", "--evita-version", newer.Ref, "--reader-heap", "1g",
		"--out", "shop.wsw"); code != 0 {
		t.Fatalf("extract: %d %s %s", code, out, stderr)
	}
	load := func(id, version string, extra ...string) {
		t.Helper()
		args := append([]string{"load", "--replay", "shop.wsw", "--server-heap", "1g",
			"--out", filepath.Join("runs", id), "--build", version, "--run-id", id, "--evita-version", version}, extra...)
		if out, stderr, code := runCLI(t, args...); code != 0 {
			t.Fatalf("load %s: %d\n%s\n%s", id, code, out, stderr)
		}
	}
	profiled := []string{"--writer-profile", "cpu", "--writer-profile-interval", "1ms"}
	load("a", older.Ref, profiled...)
	load("b", newer.Ref, profiled...)
	load("u", newer.Ref)

	out, stderr, code := runCLI(t, "profile", "--top", "200", "runs/a")
	if code != 0 || !strings.Contains(out, "load: ") || !strings.Contains(out, "goLive: ") || !strings.Contains(out, "hottest by self:") ||
		!strings.Contains(out, "io.evitadb.") || !strings.Contains(out, "async-profiler cpu") {
		t.Fatalf("profile: %d\n%s\n%s", code, out, stderr)
	}
	if out, _, code = runCLI(t, "profile", "--format", "md", "runs/a"); code != 0 || !strings.Contains(out, "| self % | self |") {
		t.Fatalf("profile --format md: %d\n%s", code, out)
	}
	out, stderr, code = runCLI(t, "profile", "--diff", "--top", "100000", "--format", "json", "runs/a", "runs/b")
	if code != 0 {
		t.Fatalf("profile --diff: %d %s", code, stderr)
	}
	var d struct {
		Schema string
		A, B   struct{ Build string }
		Phases []struct {
			Phase  string
			Delta  float64
			BySelf []struct {
				SharePct *float64 `json:"share_pct"`
			} `json:"by_self"`
		}
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.Schema != "warmstat.profile-diff/v1" || d.A.Build != older.Ref || d.B.Build != newer.Ref || len(d.Phases) != 2 || d.Phases[1].Phase != "golive" {
		t.Fatalf("diff: %s", out)
	}
	for _, ph := range d.Phases {
		var sum float64
		for _, r := range ph.BySelf {
			if ph.Delta == 0 { // no change in the phase at all (a short goLive can sample alike): no shares of it
				if r.SharePct != nil {
					t.Fatalf("%s: a share of no change", ph.Phase)
				}
				continue
			}
			sum += *r.SharePct
		}
		if ph.Delta == 0 {
			if ph.Phase == "load" {
				t.Fatalf("two builds' loads profiled exactly alike: %s", out)
			}
			continue
		}
		if math.Abs(sum-100) > 1e-6 {
			t.Fatalf("%s: the frames' shares of the change add up to %v %%", ph.Phase, sum)
		}
	}
	if out, _, code = runCLI(t, "profile", "--diff", "runs/a", "runs/b"); code != 0 || !strings.Contains(out, "largest changes by self") || !strings.Contains(out, "share of change") {
		t.Fatalf("profile --diff text: %d\n%s", code, out)
	}
	// how faithful the workload is: a cpu profile measures the cpu entries, the alloc ones are named as missing
	out, stderr, code = runCLI(t, "profile", "--fidelity", "--callers", "2", "runs/a")
	if code != 0 || !strings.Contains(out, "against production-2026.2.2") || !strings.Contains(out, "getReference") ||
		!strings.Contains(out, "not measured") || !strings.Contains(out, "(2 not measured: no alloc profile given)") ||
		!strings.Contains(out, "where each entry's samples come from") || !strings.Contains(out, "writer GC over runs/a") {
		t.Fatalf("profile --fidelity: %d\n%s\n%s", code, out, stderr)
	}
	if out, _, code = runCLI(t, "profile", "--fidelity", "--format", "md", "runs/a"); code != 0 || !strings.Contains(out, "| entry | class |") ||
		!strings.Contains(out, "**") {
		t.Fatalf("profile --fidelity --format md: %d\n%s", code, out)
	}
	// one build's writer at a time: runs of two builds are refused
	if _, stderr, code = runCLI(t, "profile", "--fidelity", "runs/a", "runs/b"); code != 3 || !strings.Contains(stderr, "a fidelity report is of one build's writer") {
		t.Fatalf("profile --fidelity of two builds: %d %s", code, stderr)
	}
	out, _, code = runCLI(t, "profile", "--fidelity", "--format", "json", "runs/a")
	var fd struct {
		Schema  string
		Line    string
		Entries []struct {
			ID       string
			RunShare *float64 `json:"run_share_pct"`
		}
	}
	if err := json.Unmarshal([]byte(out), &fd); code != 0 || err != nil || fd.Schema != "warmstat.fidelity/v1" || fd.Entries[0].ID != "getReference" ||
		fd.Entries[0].RunShare == nil || *fd.Entries[0].RunShare == 15.36 || !strings.Contains(fd.Line, "of 7 main entries") {
		t.Fatalf("profile --fidelity --format json: %d %v\n%s", code, err, out)
	}
	if _, stderr, code = runCLI(t, "profile", "--fidelity", "runs/u"); code != 1 || !strings.Contains(stderr, "runs/u") || !strings.Contains(stderr, "--writer-profile") {
		t.Fatalf("profile --fidelity of an unprofiled run: %d %s", code, stderr)
	}
	// profiled runs say so; an unprofiled run is refused against them
	if out, _, _ = runCLI(t, "report", "runs/a"); !strings.Contains(out, "writer PROFILED: async-profiler cpu") || !strings.Contains(out, "profile/load.html") {
		t.Fatalf("report:\n%s", out)
	}
	if out, _, _ = runCLI(t, "table", "runs/a", "runs/b"); !strings.Contains(out, "writer profile=async-profiler cpu") {
		t.Fatalf("table:\n%s", out)
	}
	if out, _, _ = runCLI(t, "table", "runs/a", "runs/u"); !strings.Contains(out, "writer profile") || !strings.Contains(out, "none") {
		t.Fatalf("table of profiled and unprofiled runs:\n%s", out)
	}
	if _, stderr, code = runCLI(t, "compare", "runs/a", "runs/u"); code != 3 || !strings.Contains(stderr, "writer-profile differs: A=async-profiler cpu") {
		t.Fatalf("compare profiled vs unprofiled: %d %s", code, stderr)
	}
	if out, _, code = runCLI(t, "compare", "--allow-mismatch", "writer-profile", "runs/a", "runs/u"); code != 0 || !strings.Contains(out, "NOT COMPARABLE") {
		t.Fatalf("--allow-mismatch writer-profile: %d %s", code, out)
	}
	if _, stderr, code = runCLI(t, "compare", "runs/a", "runs/b"); code != 0 {
		t.Fatalf("compare of two builds profiled alike: %d %s", code, stderr)
	}
	if _, stderr, code = runCLI(t, "profile", "--diff", "runs/a", "runs/u"); code != 1 || !strings.Contains(stderr, "runs/u") || !strings.Contains(stderr, "--writer-profile") {
		t.Fatalf("profile --diff with an unprofiled run: %d %s", code, stderr)
	}
	// profiles sampled at another interval are not compared
	m, _ := runfmt.ReadManifest("runs/b/manifest.json")
	m.WriterProfile.Interval *= 2
	os.CopyFS("runs/b2", os.DirFS("runs/b"))
	if err := runfmt.WriteManifest("runs/b2/manifest.json", m); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code = runCLI(t, "profile", "--diff", "runs/a", "runs/b2"); code != 3 || !strings.Contains(stderr, "profiles differ") {
		t.Fatalf("profiles at different intervals: %d %s", code, stderr)
	}
}

// Bad profiler flags are usage errors (exit 2; load's 64), before anything starts.
func TestProfileUsageErrors(t *testing.T) {
	tmp := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"load", "--source", "127.0.0.1:1", "--source-catalog", "s", "--target", "127.0.0.1:2", "--out", filepath.Join(tmp, "r"), "--build", "x",
			"--writer-profile", "cpu"}, "--writer-profile needs spawn mode"},
		{[]string{"load", "--pristine", tmp, "--catalog", "shop", "--server-heap", "1g", "--reader-heap", "1g", "--evita-version", "0.0.0-none",
			"--out", filepath.Join(tmp, "r"), "--build", "x", "--writer-profile-interval", "5ms"}, "--writer-profile-interval needs --writer-profile"},
		{[]string{"profile"}, "profile needs exactly one RUN"},
		{[]string{"profile", "--diff", "a"}, "needs two arguments"},
		{[]string{"profile", "--top", "0", "x"}, "--top"},
		{[]string{"profile", "--format", "csv", "x"}, "--format"},
		{[]string{"profile", "--fidelity"}, "needs one or more RUN"},
		{[]string{"profile", "--fidelity", "--diff", "a", "b"}, "one at a time"},
		{[]string{"profile", "--reference", "x", "r"}, "--reference needs --fidelity"},
		{[]string{"profile", "--callers", "2", "r"}, "--callers needs --fidelity"},
		{[]string{"profile", "--fidelity", "--callers", "-1", "r"}, "--callers -1"},
		{[]string{"profile", "--fidelity", "--within", "1", "r"}, "--within"},
		{[]string{"profile", "--fidelity", "--within", "Inf", "r"}, "a finite factor above 1"},
		{[]string{"profile", "--fidelity", "--top", "5", "r"}, "--top lists frames"},
	} {
		_, stderr, code := runCLI(t, c.args...)
		want := 2
		if c.args[0] == "load" {
			want = 64
		}
		if code != want || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d %q", c.args, code, stderr)
		}
	}
}
