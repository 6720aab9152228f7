package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/internal/synthrun"
	"github.com/warmstat/warmstat/runfmt"
)

func group(t *testing.T, parent string, n int, first uint64, s synthrun.Spec) string {
	t.Helper()
	dir, err := synthrun.Group(parent, n, first, s)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// A known 12 % speed-up across 3+3 runs with 1 % between-run noise: Product mean and
// ingest come out faster; the output matches the golden files in every format.
func TestCompareGolden(t *testing.T) {
	tmp := t.TempDir()
	a := group(t, tmp, 3, 1, synthrun.Spec{Label: "v2026.2.0", Tau: 0.01})
	b := group(t, tmp, 3, 10, synthrun.Spec{Label: "v2026.2.2", Tau: 0.01, Effect: 0.88})
	for _, f := range []string{"text", "json", "md"} {
		out, stderr, code := runCLI(t, "compare", "--format", f, a, b)
		if code != 0 {
			t.Fatalf("%s: exit %d %s", f, code, stderr)
		}
		golden(t, "compare."+f, strings.ReplaceAll(out, tmp, "$TMP"))
	}
	out, _, _ := runCLI(t, "compare", "--format", "json", a, b)
	var j struct {
		Comparable bool
		Rows       []struct {
			Collection, Metric, Verdict string
			DeltaPct                    *float64 `json:"delta_pct"`
		}
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, r := range j.Rows {
		if (r.Collection == "Product" && r.Metric == "mean") || (r.Collection == "*" && r.Metric == "ingest") {
			found++
			if r.Verdict != "faster" || *r.DeltaPct > -5 || *r.DeltaPct < -20 {
				t.Errorf("%s %s: %s %.1f%%", r.Collection, r.Metric, r.Verdict, *r.DeltaPct)
			}
		}
	}
	if found != 2 || !j.Comparable {
		t.Fatalf("rows missing or not comparable: %s", out)
	}
	// --all adds every collection; compact shows Product and the overall rows only
	all, _, _ := runCLI(t, "compare", "--all", a, b)
	if !strings.Contains(all, "Stock") || strings.Contains(out, `"Stock"`) {
		t.Error("--all / compact view")
	}
	// the bootstrap methods are reproducible with --seed
	x, _, _ := runCLI(t, "compare", "--method", "two-stage-bootstrap", "--resamples", "500", "--seed", "3", "--format", "json", a, b)
	y, _, _ := runCLI(t, "compare", "--method", "two-stage-bootstrap", "--resamples", "500", "--seed", "3", "--format", "json", a, b)
	z, _, _ := runCLI(t, "compare", "--method", "two-stage-bootstrap", "--resamples", "500", "--seed", "4", "--format", "json", a, b)
	if x != y || x == z {
		t.Error("bootstrap output must be reproducible by seed and change with it")
	}
}

func TestCompareGate(t *testing.T) {
	tmp := t.TempDir()
	a := group(t, tmp, 3, 1, synthrun.Spec{Label: "base", Tau: 0.01})
	slow := group(t, tmp, 3, 20, synthrun.Spec{Label: "slow", Tau: 0.01, Effect: 1.15})
	same := group(t, tmp, 3, 30, synthrun.Spec{Label: "same", Tau: 0.01})
	if _, stderr, code := runCLI(t, "compare", "--fail-on-regression", a, slow); code != 4 || !strings.Contains(stderr, "Product/mean") {
		t.Errorf("regression: exit %d %q", code, stderr)
	}
	if _, _, code := runCLI(t, "compare", "--fail-on-regression", a, same); code != 0 {
		t.Errorf("A/A with --fail-on-regression: exit %d", code)
	}
	if _, _, code := runCLI(t, "compare", "--fail-on-regression", "--gate", "*/golive", a, slow); code != 4 {
		t.Errorf("custom gate: exit %d", code)
	}
	if _, stderr, code := runCLI(t, "compare", "--gate", "Product/speed", a, slow); code != 2 || !strings.Contains(stderr, "--gate") {
		t.Errorf("bad gate: %d %q", code, stderr)
	}
}

// Every refusal: exit 3, each field named with both values and run ranges, nothing on
// stdout (no partial comparison).
func TestCompareRefusals(t *testing.T) {
	g := func(m *runfmt.Manifest) {}
	set := map[string]func(*runfmt.Manifest){
		"server-heap":       func(m *runfmt.Manifest) { v := int64(16 << 30); m.Server.MaxHeapBytes = &v },
		"reader-heap":       func(m *runfmt.Manifest) { m.Reader.MaxHeapBytes = nil },
		"loader":            func(m *runfmt.Manifest) { m.Loader.Name = runfmt.LoaderJavaHarness },
		"target-mode":       func(m *runfmt.Manifest) { m.TargetMode = runfmt.TargetEmbedded },
		"storage-compress":  func(m *runfmt.Manifest) { f := false; m.Conditions.StorageCompress = &f },
		"cache":             func(m *runfmt.Manifest) { v := true; m.Conditions.CacheEnabled = &v },
		"traffic-recording": func(m *runfmt.Manifest) { v := true; m.Conditions.TrafficRecording = &v },
		"batch-size":        func(m *runfmt.Manifest) { m.Conditions.BatchSize = 1000 },
		"cap": func(m *runfmt.Manifest) { // a cap above every collection: the counts stay what they were
			m.Conditions.MaxPerCollection = 1_000_000
		},
		"collections":        func(m *runfmt.Manifest) { m.Conditions.CollectionSubset = []string{"Product"} },
		"prefetch":           func(m *runfmt.Manifest) { m.Conditions.Prefetch = true },
		"writer-jvm-options": func(m *runfmt.Manifest) { m.Conditions.WriterJVMOptions = []string{"-XX:+AlwaysPreTouch"} },
		"writer-warm-up": func(m *runfmt.Manifest) {
			m.Conditions.WarmUpLoads, m.WarmUp = 1, []runfmt.WarmUpLoad{{Entities: m.Entities, LoadWallNs: 1e9, GoLiveNs: 1e8}}
		},
		"dataset": func(m *runfmt.Manifest) {
			m.Dataset.SourceCounts["Product"]++
			m.Dataset.Fingerprint = runfmt.Fingerprint(m.Dataset.SourceCounts)
		},
		"cores":        func(m *runfmt.Manifest) { c := 8; m.Machine.Cores = &c },
		"memory-limit": func(m *runfmt.Manifest) { v := int64(16 << 30); m.Machine.CgroupMemoryLimitBytes = &v },
		"writer-profile": func(m *runfmt.Manifest) {
			m.WriterProfile = &runfmt.WriterProfile{Profiler: runfmt.ProfilerAsync, Mode: "cpu", Event: "cpu", Interval: 1e7,
				IntervalUnit: runfmt.UnitNanoseconds, Phases: []runfmt.ProfilePhase{{Name: runfmt.PhaseLoad}}}
		},
	}
	for field, mut := range set {
		t.Run(field, func(t *testing.T) {
			tmp := t.TempDir()
			a := group(t, tmp, 3, 1, synthrun.Spec{Label: "a", Mutate: g})
			b := group(t, tmp, 2, 10, synthrun.Spec{Label: "b", Mutate: mut})
			stdout, stderr, code := runCLI(t, "compare", a, b)
			if code != 3 || stdout != "" || !strings.Contains(stderr, field+" differs: A=") || !strings.Contains(stderr, "(runs 1-3), B=") {
				t.Fatalf("exit %d stdout %q stderr %q", code, stdout, stderr)
			}
			// the override proceeds and stamps the output
			stdout, stderr, code = runCLI(t, "compare", "--allow-mismatch", field, a, b)
			if code != 0 || !strings.HasPrefix(stdout, "!! NOT COMPARABLE (allowed to differ: "+field+")") || !strings.Contains(stdout, "\n!! NOT COMPARABLE") {
				t.Fatalf("override: exit %d %q %q", code, stdout, stderr)
			}
			js, _, _ := runCLI(t, "compare", "--format", "json", "--allow-mismatch", field, a, b)
			var j struct {
				Comparable bool     `json:"comparable"`
				Allowed    []string `json:"allowed_mismatches"`
			}
			json.Unmarshal([]byte(js), &j)
			if j.Comparable || len(j.Allowed) != 1 || j.Allowed[0] != field {
				t.Fatalf("JSON must record the override: %s", js)
			}
		})
	}
	t.Run("options from the environment", func(t *testing.T) {
		tmp := t.TempDir()
		a := group(t, tmp, 3, 1, synthrun.Spec{Label: "a"})
		b := group(t, tmp, 2, 10, synthrun.Spec{Label: "b", Mutate: func(m *runfmt.Manifest) {
			m.Server.JVM = &runfmt.JVM{EnvOptions: []string{"JDK_JAVA_OPTIONS=-XX:TieredStopAtLevel=1"}}
		}})
		_, stderr, code := runCLI(t, "compare", a, b)
		if code != 3 || !strings.Contains(stderr, "writer-jvm-options differs: A=none (runs 1-3), B=JDK_JAVA_OPTIONS=-XX:TieredStopAtLevel=1 (runs 1-2)") {
			t.Fatalf("a writer given options by its environment: exit %d %q", code, stderr)
		}
	})
	t.Run("example wording", func(t *testing.T) {
		tmp := t.TempDir()
		a := group(t, tmp, 3, 1, synthrun.Spec{Label: "a"})
		b := group(t, tmp, 2, 10, synthrun.Spec{Label: "b", Mutate: set["server-heap"]})
		_, stderr, _ := runCLI(t, "compare", a, b)
		if !strings.Contains(stderr, "server-heap differs: A=23g (runs 1-3), B=16g (runs 1-2)") {
			t.Fatalf("%q", stderr)
		}
		js, _, code := runCLI(t, "compare", "--format", "json", a, b)
		if code != 3 || !strings.Contains(js, `"comparable": false`) || !strings.Contains(js, `"rows": []`) {
			t.Fatalf("JSON refusal: %d %s", code, js)
		}
		// the refusal states what was compared and how, not zero values
		var r struct {
			A, B struct {
				Label string `json:"label"`
				Runs  int    `json:"runs"`
			}
			Threshold float64 `json:"threshold_pct"`
			Method    string  `json:"method"`
		}
		if err := json.Unmarshal([]byte(js), &r); err != nil || r.A.Runs != 3 || r.B.Runs != 2 || r.A.Label != "a" || r.B.Label != "b" ||
			r.Threshold != 2 || r.Method == "" {
			t.Fatalf("JSON refusal's groups and options: %+v %v\n%s", r, err, js)
		}
	})
	t.Run("within a group", func(t *testing.T) {
		tmp := t.TempDir()
		a := group(t, tmp, 2, 1, synthrun.Spec{Label: "a"})
		synthrun.Write(filepath.Join(a, "run-3"), synthrun.Spec{Label: "a", Seed: 3, Mutate: func(m *runfmt.Manifest) { m.Server.Version = "2026.2.4" }})
		b := group(t, tmp, 2, 10, synthrun.Spec{Label: "b"})
		stdout, stderr, code := runCLI(t, "compare", a, b)
		if code != 3 || stdout != "" || !strings.Contains(stderr, "server-version differs within A: 2026.2.3 (runs 1-2), 2026.2.4 (run 3)") {
			t.Fatalf("exit %d %q", code, stderr)
		}
	})
	t.Run("mixed build", func(t *testing.T) {
		tmp := t.TempDir()
		a := group(t, tmp, 2, 1, synthrun.Spec{Label: "a"})
		synthrun.Write(filepath.Join(a, "run-3"), synthrun.Spec{Label: "other", Seed: 3})
		b := group(t, tmp, 2, 10, synthrun.Spec{Label: "b"})
		_, stderr, code := runCLI(t, "compare", "--allow-mismatch", "server-heap", a, b)
		if code != 3 || !strings.Contains(stderr, "build differs within A: a (runs 1-2), other (run 3)") {
			t.Fatalf("exit %d %q", code, stderr)
		}
		if _, stderr, code := runCLI(t, "compare", "--allow-mismatch", "build", a, b); code != 2 || !strings.Contains(stderr, "cannot be mixed") {
			t.Fatalf("--allow-mismatch build: %d %q", code, stderr)
		}
	})
	t.Run("failed run", func(t *testing.T) {
		tmp := t.TempDir()
		a := group(t, tmp, 2, 1, synthrun.Spec{Label: "a"})
		synthrun.Write(filepath.Join(a, "run-3"), synthrun.Spec{Label: "a", Seed: 3, Mutate: func(m *runfmt.Manifest) {
			m.Verification.Status = runfmt.Mismatch
			m.Verification.Counts[1].Target--
		}})
		b := group(t, tmp, 2, 10, synthrun.Spec{Label: "b"})
		stdout, stderr, code := runCLI(t, "compare", a, b)
		if code != 1 || stdout != "" || !strings.Contains(stderr, "run-3 failed (mismatch, exit 1) and is never used") {
			t.Fatalf("exit %d %q", code, stderr)
		}
	})
}

func TestCompareUnverifiedAndInsufficient(t *testing.T) {
	tmp := t.TempDir()
	a := group(t, tmp, 2, 1, synthrun.Spec{Label: "a"})
	synthrun.Write(filepath.Join(a, "run-3"), synthrun.Spec{Label: "a", Seed: 3, Mutate: func(m *runfmt.Manifest) {
		m.Verification = runfmt.Verification{Status: runfmt.Unverified, Error: "target gone"}
	}})
	b := group(t, tmp, 2, 10, synthrun.Spec{Label: "b", GoLiveFail: false})
	out, _, code := runCLI(t, "compare", a, b)
	if code != 0 || !strings.Contains(out, "note: A: left out "+filepath.Join(a, "run-3")+": unverified") || !strings.Contains(out, "(2 in A, 2 in B)") {
		t.Fatalf("unverified excluded by default: %d\n%s", code, out)
	}
	out, _, _ = runCLI(t, "compare", "--include-unverified", a, b)
	if !strings.Contains(out, "UNVERIFIED") || !strings.Contains(out, "(3 in A, 2 in B)") {
		t.Fatalf("--include-unverified must include and label:\n%s", out)
	}
	// one run a side: figures, no interval, verdict insufficient
	one := group(t, tmp, 1, 40, synthrun.Spec{Label: "one"})
	out, _, code = runCLI(t, "compare", "--format", "json", one, filepath.Join(b, "run-1"))
	if code != 0 || strings.Contains(out, `"verdict": "faster"`) || strings.Contains(out, `"verdict": "unresolved"`) || !strings.Contains(out, `"verdict": "insufficient"`) {
		t.Fatalf("single runs: %s", out)
	}
	// a failed goLive contributes no goLive and no TOTAL sample
	gl := group(t, tmp, 3, 50, synthrun.Spec{Label: "gl"})
	os.RemoveAll(filepath.Join(gl, "run-3"))
	synthrun.Write(filepath.Join(gl, "run-3"), synthrun.Spec{Label: "gl", Seed: 52, GoLiveFail: true})
	out, _, _ = runCLI(t, "compare", "--format", "json", a, gl)
	var j struct {
		Rows []struct {
			Collection, Metric string
			RunsB              int `json:"runs_b"`
		}
	}
	json.Unmarshal([]byte(out), &j)
	for _, r := range j.Rows {
		want := 3
		if r.Metric == "golive" || r.Metric == "total" {
			want = 2
		}
		if r.RunsB != want {
			t.Errorf("%s %s: runs_b %d, want %d", r.Collection, r.Metric, r.RunsB, want)
		}
	}
}

// testdata/groups holds two synthetic builds (3 runs each) used by `make demo` and the
// table tests; they must be exactly what synthrun writes (go test -update rewrites).
func TestDemoGroupsFresh(t *testing.T) {
	specs := []struct {
		first uint64
		spec  synthrun.Spec
	}{{1, synthrun.Spec{Label: "v2026.2.0", Tau: 0.015}}, {10, synthrun.Spec{Label: "v2026.2.2", Tau: 0.015, Effect: 0.9}}}
	dir := filepath.Join(testdata, "groups")
	if *update {
		os.RemoveAll(dir)
		for _, s := range specs {
			group(t, dir, 3, s.first, s.spec)
		}
	}
	fresh := t.TempDir()
	for _, s := range specs {
		group(t, fresh, 3, s.first, s.spec)
		for k := 1; k <= 3; k++ {
			for _, f := range []string{runfmt.ManifestFile, runfmt.EntitiesFile} {
				rel := filepath.Join(s.spec.Label, "run-"+string(rune('0'+k)), f)
				a, err1 := os.ReadFile(filepath.Join(dir, rel))
				b, err2 := os.ReadFile(filepath.Join(fresh, rel))
				if err1 != nil || err2 != nil || string(a) != string(b) {
					t.Fatalf("testdata/groups/%s is stale (go test ./cmd/warmstat -update): %v %v", rel, err1, err2)
				}
			}
		}
	}
}
