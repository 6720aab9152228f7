package profile_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	gpprof "github.com/google/pprof/profile"
	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/internal/evitatest"
	"github.com/warmstat/warmstat/loader"
	"github.com/warmstat/warmstat/profile"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/workload"
)

// A real spawned load (a replay: the writer alone) with each profiler: the manifest lists the profiler, its
// version, the event and engine the recording states, the interval and the measured
// control cost; each phase (load, goLive) has a recording, an interactive flame graph,
// folded stacks and a pprof profile that pprof itself reads, with the writer's own
// frames in it.
func TestWriterProfilesOnRealServer(t *testing.T) {
	src := evitatest.Server(t)
	art := evitatest.Profiler(t)
	ctx := context.Background()
	tmp := t.TempDir()
	pristine, _ := evitatest.SmallSnapshot(t, src)
	// the snapshot read once; every mode's load replays it with the writer alone (what is
	// profiled is the writer, and no reader competes with it for the cores)
	wl := filepath.Join(tmp, "shop.wsw")
	info, err := loader.SpawnExtract(ctx, loader.SpawnConfig{Server: src, Pristine: pristine, Catalog: "shop", WorkDir: filepath.Join(tmp, "extract"),
		ReaderHeap: 1 << 30, Probe: evitatest.Probe}, loader.ExtractConfig{Out: wl, BatchSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range profile.Modes {
		t.Run(mode, func(t *testing.T) {
			work := filepath.Join(tmp, "work-"+mode)
			rec, err := profile.New(profile.Options{Mode: mode, Artifact: art, WorkDir: filepath.Join(work, "writer-profile"),
				Warn: func(s string) { t.Log(s) }})
			if err != nil {
				t.Fatal(err)
			}
			sc := loader.SpawnConfig{Server: src, WorkDir: work, ServerHeap: 1 << 30, Compress: true, Probe: evitatest.Probe, Profiler: rec}
			r, err := workload.Open(wl)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			out := filepath.Join(tmp, "runs", mode)
			res, err := loader.Spawn(ctx, sc, loader.Config{Out: out, Replay: r, ReplayPath: wl, ReplaySHA256: info.SHA256,
				Manifest: runfmt.Manifest{RunID: mode, Build: runfmt.Build{Label: "local"}}})
			if err != nil {
				t.Fatal(err)
			}
			m, err := runfmt.ReadManifest(filepath.Join(out, runfmt.ManifestFile)) // as written, validated
			if err != nil {
				t.Fatal(err)
			}
			w := m.WriterProfile
			if w == nil || w.Error != "" || w.Mode != mode || w.Version == "" || w.Event == "" || w.Interval <= 0 || w.Cost.ControlNs <= 0 {
				t.Fatalf("writer profile in the manifest: %+v", w)
			}
			if mode == "cpu" && w.Engine == "" {
				t.Fatalf("the CPU engine used is not recorded: %+v", w)
			}
			// a manifest states what this run measured: the control time, never a slowdown
			// measured once on another machine
			if w.Cost.LoadWallPct != nil || w.Cost.Measured != "" {
				t.Fatalf("a cost this run did not measure, in its manifest: %+v", w.Cost)
			}
			if mode == "jfr" && (w.Profiler != runfmt.ProfilerJFR || w.Event != "jdk.ExecutionSample") {
				t.Fatalf("jfr: %+v", w)
			}
			if mode != "jfr" && !strings.Contains(strings.Join(m.Server.JVM.Options, " "), "-agentpath:"+art.Lib) {
				t.Fatalf("the agent is not among the writer's recorded options: %v", m.Server.JVM.Options)
			}
			if res.Manifest.ExitCode != 0 {
				t.Fatalf("exit %d", res.Manifest.ExitCode)
			}
			for _, phase := range []string{runfmt.PhaseLoad, runfmt.PhaseGoLive} {
				ph := w.Phase(phase)
				if ph == nil {
					t.Fatalf("no %s phase: %+v", phase, w.Phases)
				}
				for _, f := range ph.Files() {
					if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
						t.Fatalf("%s: %v", f, err)
					}
				}
				html, _ := os.ReadFile(filepath.Join(out, ph.FlameGraph))
				if !bytes.Contains(html, []byte("<!DOCTYPE html>")) || !bytes.Contains(html, []byte("<canvas")) {
					t.Fatalf("%s is not an interactive flame graph", ph.FlameGraph)
				}
				f, err := os.Open(filepath.Join(out, ph.Pprof))
				if err != nil {
					t.Fatal(err)
				}
				p, err := gpprof.Parse(f)
				f.Close()
				if err != nil {
					t.Fatalf("%s: %v", ph.Pprof, err)
				}
				var n int64
				for _, s := range p.Sample {
					n += s.Value[0]
				}
				if n != ph.Samples {
					t.Fatalf("%s: pprof holds %d samples, the manifest says %d", ph.Pprof, n, ph.Samples)
				}
				// the load keeps the writer busy: every sampler but the lock one (which records
				// contention only) sees the evitaDB write path
				if phase == runfmt.PhaseLoad && mode != "lock" && !hasFrame(p, "io.evitadb.") {
					t.Fatalf("%s: no io.evitadb frame in %d samples", ph.Pprof, n)
				}
			}
		})
	}
	t.Run("fidelity", func(t *testing.T) {
		checkFidelityOfRealRuns(t, filepath.Join(tmp, "runs", "cpu"), filepath.Join(tmp, "runs", "alloc"))
	})
}

// stackShare reads a run's folded load stacks (values: cpu samples or allocated bytes)
// and returns the share, in percent, of those whose frames (root first, compilation
// annotations dropped) satisfy pick, the JIT compiler's stacks left out as the report
// leaves them out: a fidelity figure computed apart, from the profiler's own output.
func stackShare(t *testing.T, run string, pick func(frames []string) bool) float64 {
	t.Helper()
	f, err := os.Open(filepath.Join(run, profile.ProfileDir, "load.collapsed.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var all, hit int64
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		if i <= 0 {
			t.Fatalf("%q: not a folded stack", line)
		}
		n, err := strconv.ParseInt(line[i+1:], 10, 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		frames := strings.Split(line[:i], ";")
		if slices.ContainsFunc(frames, func(f string) bool { return strings.HasPrefix(f, "CompileBroker::") }) {
			continue
		}
		all += n
		for k, fr := range frames {
			if j := strings.LastIndex(fr, "_["); j > 0 && strings.HasSuffix(fr, "]") {
				frames[k] = fr[:j]
			}
		}
		if pick(frames) {
			hit += n
		}
	}
	if all == 0 {
		t.Fatalf("%s: no samples", run)
	}
	return 100 * float64(hit) / float64(all)
}

// The fidelity report of real profiled runs: with a cpu and an alloc run, every main
// entry of the production reference is measured; and on entries that a small load
// surely exercises, the report's shares are those of the profiler's own stacks.
func checkFidelityOfRealRuns(t *testing.T, cpuRun, allocRun string) {
	ref, err := profile.LoadReference(profile.DefaultReference)
	if err != nil {
		t.Fatal(err)
	}
	f, err := profile.FidelityReport(ref, profile.DefaultWithin, 3, cpuRun, allocRun)
	if err != nil {
		t.Fatal(err)
	}
	if f.Summary.MainMeasured != f.Summary.Main || f.Summary.Main != 7 || len(f.Runs) != 2 {
		t.Fatalf("summary %+v, runs %+v", f.Summary, f.Runs)
	}
	t.Log(f.Line())
	refFile := filepath.Join(t.TempDir(), "small.ref")
	os.WriteFile(refFile, []byte("warmstat-fidelity-reference 1\nname small\n"+
		"entry leaf-getNode cpu self 5 main java.util.HashMap.getNode | test\n"+
		"entry evitadb cpu total 50 main io.evitadb.* | test\n"+
		"entry bytes alloc self 10 main byte[] | test\n"), 0o644)
	if ref, err = profile.LoadReference(refFile); err != nil {
		t.Fatal(err)
	}
	if f, err = profile.FidelityReport(ref, profile.DefaultWithin, 0, cpuRun, allocRun); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"leaf-getNode": stackShare(t, cpuRun, func(fr []string) bool { return fr[len(fr)-1] == "java.util.HashMap.getNode" }),
		"evitadb": stackShare(t, cpuRun, func(fr []string) bool {
			return slices.ContainsFunc(fr, func(s string) bool { return strings.HasPrefix(s, "io.evitadb.") })
		}),
		"bytes": stackShare(t, allocRun, func(fr []string) bool { return fr[len(fr)-1] == "byte[]" }),
	}
	for _, e := range f.Entries {
		if e.RunShare == nil {
			t.Errorf("%s: not measured", e.ID)
		} else if math.Abs(*e.RunShare-want[e.ID]) > 1e-6 {
			t.Errorf("%s: the report says %v %%, the profiler's stacks %v %%", e.ID, *e.RunShare, want[e.ID])
		}
	}
	if want["evitadb"] < 10 || want["bytes"] == 0 {
		t.Errorf("a real load whose writer's stacks hold %.1f %% evitaDB frames and %.1f %% byte[] allocation", want["evitadb"], want["bytes"])
	}
}

func hasFrame(p *gpprof.Profile, prefix string) bool {
	for _, f := range p.Function {
		if strings.HasPrefix(f.Name, prefix) {
			return true
		}
	}
	return false
}

// Where perf events are not permitted (here: perf_event_open forbidden to the JVM by
// a seccomp filter, as a container's policy or a paranoid kernel does), the cpu
// profile still runs: async-profiler falls back to its CPU timer, the recording says
// so and the manifest records the engine actually used.
func TestCPUProfileFallsBackWithoutPerfEvents(t *testing.T) {
	src := evitatest.Server(t)
	art := evitatest.Profiler(t)
	java, err := exec.LookPath("java")
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java, err = filepath.Join(home, "bin", "java"), nil
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(noPerfJava, java) // the JVM below is this binary's launcher (TestMain), then java
	tmp := t.TempDir()
	rec, err := profile.New(profile.Options{Mode: "cpu", Artifact: art, WorkDir: filepath.Join(tmp, "recordings"), Java: java})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := evitaserver.Start(ctx, evitaserver.Config{Java: os.Args[0], Server: src, DataDir: filepath.Join(tmp, "data"), HeapBytes: 1 << 30,
		Compress: true, Probe: evitatest.Probe, JVMOptions: rec.JVMOptions(), WaitForMemory: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(30 * time.Second)
	c, err := evita.Dial(ctx, s.Addr, evita.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := rec.Attach(s.Pid()); err != nil {
		t.Fatal(err)
	}
	if err := rec.Window(runfmt.PhaseLoad, true); err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // the writer's work: a catalog built, three times over
		evitatest.LoadFixture(t, ctx, c, fmt.Sprintf("shop%d", i))
	}
	if err := rec.Window(runfmt.PhaseLoad, false); err != nil {
		t.Fatal(err)
	}
	s.Stop(30 * time.Second)
	run := filepath.Join(tmp, "run")
	os.MkdirAll(run, 0o755)
	w := rec.Finish(run)
	if w.Error != "" || w.Event != "cpu" || (w.Engine != "ctimer" && w.Engine != "itimer") || len(w.Phases) != 1 || w.Phases[0].Samples == 0 ||
		w.Cost.LoadWallPct != nil { // no slowdown this run did not measure
		t.Fatalf("without perf events: %+v", w)
	}
}
