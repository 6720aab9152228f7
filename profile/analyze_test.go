package profile

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/internal/synthrun"
	"github.com/warmstat/warmstat/runfmt"
)

// profiledRun writes a synthetic run whose writer profile's load phase holds the
// folded stacks given (counts; cpu mode at 1 ms), and returns its upserts.
func profiledRun(t *testing.T, dir, label string, seed uint64, load, golive string) int64 {
	t.Helper()
	return profiledRunMode(t, "cpu", dir, label, seed, load, golive)
}

// profiledRunMode is profiledRun in a profiler mode: cpu (counts of 1 ms) or alloc
// (counts of bytes, one sample each).
func profiledRunMode(t *testing.T, mode, dir, label string, seed uint64, load, golive string) int64 {
	t.Helper()
	wp := &runfmt.WriterProfile{Profiler: runfmt.ProfilerAsync, Version: "4.2", Mode: mode, Event: "cpu", Engine: "perf_events",
		Interval: 1e6, IntervalUnit: runfmt.UnitNanoseconds}
	unit := "nanoseconds"
	if mode == "alloc" {
		wp.Event, wp.Engine, wp.Interval, wp.IntervalUnit, unit = "alloc", "", 512<<10, runfmt.UnitBytes, "bytes"
	}
	m, err := synthrun.Write(dir, synthrun.Spec{Label: label, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, ProfileDir), 0o755)
	for _, ps := range [][2]string{{runfmt.PhaseLoad, load}, {runfmt.PhaseGoLive, golive}} { // the recorder's order
		phase, stacks := ps[0], ps[1]
		col := filepath.Join(dir, ProfileDir, phase+".collapsed")
		if err := os.WriteFile(col, []byte(stacks), 0o644); err != nil {
			t.Fatal(err)
		}
		p, n, v, err := buildPprof(col, col, kindOf(mode), wp.Interval, phase)
		if err != nil {
			t.Fatal(err)
		}
		if err := writePprof(filepath.Join(dir, ProfileDir, phase+".pb.gz"), p); err != nil {
			t.Fatal(err)
		}
		wp.Phases = append(wp.Phases, runfmt.ProfilePhase{Name: phase, Samples: n, Value: v, ValueUnit: unit,
			Pprof: ProfileDir + "/" + phase + ".pb.gz", Collapsed: ProfileDir + "/" + phase + ".collapsed"})
	}
	m.WriterProfile = wp
	if err := runfmt.WriteManifest(filepath.Join(dir, runfmt.ManifestFile), m); err != nil {
		t.Fatal(err)
	}
	return m.Entities
}

// Folded stacks become a pprof profile: one function per method however it was
// compiled (the converter's _[j] _[i] suffixes), kernel frames marked, values =
// samples x interval, leaf first.
func TestCollapsedToPprof(t *testing.T) {
	dir := t.TempDir()
	col := filepath.Join(dir, "x.collapsed")
	os.WriteFile(col, []byte("a.Main.run_[j];a.B.put_[i] 3\na.Main.run_[0];a.B.put_[j];do_syscall_64_[k] 2\na.Main.run_[j] 1\n"), 0o644)
	p, n, v, err := buildPprof(col, col, kindOf("cpu"), 10e6, "load")
	if err != nil {
		t.Fatal(err)
	}
	if n != 6 || v != 60e6 || len(p.Function) != 3 || p.Sample[1].Location[0].Line[0].Function.Filename != "[kernel]" ||
		p.Sample[0].Location[0].Line[0].Function.Name != "a.B.put" {
		t.Fatalf("n %d v %d functions %v", n, v, p.Function)
	}
	s := sums(p)
	if s.self["a.B.put"] != 30e6 || s.total["a.B.put"] != 50e6 || s.total["a.Main.run"] != 60e6 || s.self["do_syscall_64"] != 20e6 {
		t.Fatalf("self %v total %v", s.self, s.total)
	}
	// weighted (alloc): sample counts from one file, bytes from the other
	tot := filepath.Join(dir, "t.collapsed")
	os.WriteFile(tot, []byte("a.Main.run_[j];a.B.put_[i] 3000\na.Main.run_[0];a.B.put_[j];do_syscall_64_[k] 200\na.Main.run_[j] 1\n"), 0o644)
	if _, n, v, err = buildPprof(tot, col, kindOf("alloc"), 512<<10, "load"); err != nil || n != 6 || v != 3201 {
		t.Fatalf("alloc: %d %d %v", n, v, err)
	}
}

// Generated class names lose what differs from JVM to JVM.
func TestGeneratedNamesNormalised(t *testing.T) {
	for in, want := range map[string]string{
		"com.linecorp.armeria.common.stream.DeferredStreamMessage$$Lambda$1012.apply":                                 "com.linecorp.armeria.common.stream.DeferredStreamMessage$$Lambda.apply",
		"a.B$$Lambda$77/0x0000000800c4b440.run":                                                                       "a.B$$Lambda.run",
		"a.B$$Lambda/0x00007f0a1c0d2a48.accept":                                                                       "a.B$$Lambda.accept",
		"jdk.internal.reflect.GeneratedMethodAccessor123.invoke":                                                      "jdk.internal.reflect.GeneratedMethodAccessor.invoke",
		"com.sun.proxy.$Proxy42.get":                                                                                  "com.sun.proxy.$Proxy.get",
		"java.lang.invoke.LambdaForm$MH/0x0000000800d0c800.invoke":                                                    "java.lang.invoke.LambdaForm$MH.invoke",
		"io.evitadb.store.offsetIndex.OffsetIndex$VolatileValues.getNonFlushedValueIfVersionMatches":                  "io.evitadb.store.offsetIndex.OffsetIndex$VolatileValues.getNonFlushedValueIfVersionMatches",
		"/usr/lib/x86_64-linux-gnu/libz.so.1.2.13":                                                                    "/usr/lib/x86_64-linux-gnu/libz.so.1.2.13",
		"io.evitadb.index.mutation.local.EntityIndexLocalMutationExecutor.lambda$deferFacetExpressionReEvaluation$29": "io.evitadb.index.mutation.local.EntityIndexLocalMutationExecutor.lambda$deferFacetExpressionReEvaluation",
		"a.B.lambda$static$3":                  "a.B.lambda$static",
		"a.B.lambda$new$0":                     "a.B.lambda$new",
		"a.B$Inner.lambda$run$12":              "a.B$Inner.lambda$run",
		"a.B$$Lambda$9/0x0000000800c4b440.run": "a.B$$Lambda.run",
	} {
		if got, _ := frameName(in + "_[j]"); got != want {
			t.Errorf("%s -> %s, want %s", in, got, want)
		}
	}
}

// A folded-stack file that is not one is refused where it stands.
func TestCollapsedErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ text, want string }{
		{"a;b 1\nnocount\n", ":2: not a folded stack"},
		{"a;b 1\na;c x1\n", `:2: field count: "x1" is not a non-negative integer`},
		{"a;b -3\n", `:1: field count: "-3"`},
		{"a 9223372036854775807\na 1\n", ":2: field count: the stack's total overflows"},
	} {
		p := filepath.Join(dir, "bad.collapsed")
		os.WriteFile(p, []byte(c.text), 0o644)
		if _, _, err := readCollapsed(p); err == nil || !strings.Contains(err.Error(), p+c.want) {
			t.Errorf("%q: %v", c.text, err)
		}
	}
}

// A known change: B spends 30 ms more per run in index, 10 ms in a new frame, the same
// in serialize. Normalised per upsert over each group's runs, the whole change splits
// 75 % / 25 % / 0 % by self value, and the callers' totals carry all of it.
func TestDiffKnownEffect(t *testing.T) {
	tmp := t.TempDir()
	var na, nb int64
	for i, seed := range []uint64{1, 2} {
		na += profiledRun(t, filepath.Join(tmp, "a", "run"+string(rune('1'+i))), "a", seed,
			"main;upsert;index 60\nmain;upsert;serialize 40\n", "main;golive;flush 5\n")
	}
	for i, seed := range []uint64{3, 4, 5} {
		nb += profiledRun(t, filepath.Join(tmp, "b", "run"+string(rune('1'+i))), "b", seed,
			"main;upsert;index 90\nmain;upsert;serialize 40\nmain;upsert;check 10\n", "main;golive;flush 5\n")
	}
	d, err := DiffGroups(filepath.Join(tmp, "a"), filepath.Join(tmp, "b"), 10)
	if err != nil {
		t.Fatal(err)
	}
	load := d.Phases[0]
	perA, perB := 1e6/float64(na)*2, 1e6/float64(nb)*3 // ns per sample, per upsert, times runs
	wantDelta := 140*perB - 100*perA
	if load.Phase != "load" || math.Abs(load.Delta-wantDelta) > 1e-6 || len(d.Phases) != 2 {
		t.Fatalf("load delta %v, want %v", load.Delta, wantDelta)
	}
	share := map[string]float64{}
	var sum float64
	for _, r := range load.BySelf {
		share[r.Name] = *r.SharePct
		sum += *r.SharePct
	}
	if math.Abs(sum-100) > 1e-9 {
		t.Fatalf("self shares add up to %v %%", sum)
	}
	wantIndex := 100 * (90*perB - 60*perA) / wantDelta
	if math.Abs(share["index"]-wantIndex) > 1e-9 || math.Abs(share["check"]-100*10*perB/wantDelta) > 1e-9 {
		t.Fatalf("shares %v (index want %v)", share, wantIndex)
	}
	if load.ByTotal[0].Name != "main" || math.Abs(*load.ByTotal[0].SharePct-100) > 1e-9 {
		t.Fatalf("by total: %+v", load.ByTotal[0])
	}
	// top frames of one run
	top, err := TopFrames(filepath.Join(tmp, "b", "run1"), 2)
	if err != nil {
		t.Fatal(err)
	}
	if ph := top.Phases[0]; ph.Total != 140e6 || len(ph.BySelf) != 2 || ph.BySelf[0].Name != "index" || ph.BySelf[0].Self != 90e6 ||
		ph.ByTotal[0].Name != "main" || ph.ByTotal[0].TotalPct != 100 {
		t.Fatalf("top: %+v", top.Phases[0])
	}
}

// Profiles of different profilers or intervals are refused; an unprofiled run and a
// missing profile file are named.
func TestDiffRefusals(t *testing.T) {
	tmp := t.TempDir()
	a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	profiledRun(t, a, "a", 1, "m;x 1\n", "m;y 1\n")
	profiledRun(t, b, "b", 2, "m;x 2\n", "m;y 1\n")
	m, _ := runfmt.ReadManifest(filepath.Join(b, runfmt.ManifestFile))
	m.WriterProfile.Interval = 2e6
	runfmt.WriteManifest(filepath.Join(b, runfmt.ManifestFile), m)
	var ref *Refusal
	if _, err := DiffGroups(a, b, 5); !errors.As(err, &ref) || !strings.Contains(err.Error(), "every 1ms") || !strings.Contains(err.Error(), "every 2ms") {
		t.Fatalf("different intervals: %v", err)
	}
	m.WriterProfile = nil
	runfmt.WriteManifest(filepath.Join(b, runfmt.ManifestFile), m)
	if _, err := DiffGroups(a, b, 5); !errors.Is(err, ErrNotProfiled) || !strings.Contains(err.Error(), b) {
		t.Fatalf("unprofiled: %v", err)
	}
	os.Remove(filepath.Join(a, ProfileDir, "golive.pb.gz"))
	if _, err := TopFrames(a, 5); err == nil || !strings.Contains(err.Error(), "golive.pb.gz") {
		t.Fatalf("missing pprof: %v", err)
	}
	if _, err := TopFrames(a, 0); err == nil {
		t.Fatal("top 0 accepted")
	}
}
