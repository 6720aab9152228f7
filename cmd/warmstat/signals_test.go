package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/warmstat/warmstat/base/interrupt"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/internal/evitatest"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/series"
	"github.com/warmstat/warmstat/workload"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// warmstatBinary builds the command once per test binary, for tests that must signal
// a real warmstat process.
func warmstatBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "warmstat-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "warmstat")
		if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
			binErr = err
			t.Log(string(out))
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// process is a warmstat child process.
type process struct {
	cmd      *exec.Cmd
	out, err bytes.Buffer
	done     chan struct{}
}

func startWarmstat(t *testing.T, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(warmstatBinary(t), args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.err
	// a test binary that dies (a timeout) takes its warmstat with it, and so its JVMs
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// exited waits up to d for the process to end and returns its exit code (-1 if it runs on).
func (p *process) exited(d time.Duration) int {
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(d):
		return -1
	}
}

// waitFor polls cond for up to d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("waited %s for %s", d, what)
}

// Ctrl-C and SIGTERM on a real warmstat process with real servers: one Ctrl-C ends the
// load between upserts with its manifest (interrupted); a second Ctrl-C ends warmstat
// at once even while an upsert is stuck (the writer JVM is frozen with SIGSTOP); one
// Ctrl-C ends an extraction between batches, leaving nothing; SIGTERM ends it at once
// (an embedded replay). Every JVM it started is gone afterwards.
func TestSignals(t *testing.T) {
	src := evitatest.Server(t)
	tmp := t.TempDir()
	pristine := filepath.Join(tmp, "pristine")
	if out, stderr, code := runCLI(t, "seed", "--pristine", pristine, "--catalog", "shop", "--scale", "0.003", "--evita-version", src.Ref, "--heap", "1g"); code != 0 {
		t.Fatalf("seed: %d %s %s", code, out, stderr)
	}
	load := func(id string, source ...string) (*process, string) {
		work := filepath.Join(tmp, "work-"+id)
		if source == nil {
			source = []string{"--pristine", pristine, "--catalog", "shop", "--reader-heap", "1g", "--batch-size", "10"}
		}
		p := startWarmstat(t, append([]string{"load", "--evita-version", src.Ref, "--server-heap", "1g",
			"--out", filepath.Join(tmp, "runs", id), "--work", work, "--build", "b", "--run-id", id}, source...)...)
		waitFor(t, 3*time.Minute, "the load of "+id+" to upsert", func() bool {
			files, _ := filepath.Glob(filepath.Join(tmp, "runs", "."+id+".partial-*", runfmt.EntitiesFile))
			if len(files) == 0 {
				return false
			}
			b, _ := os.ReadFile(files[0])
			return bytes.Count(b, []byte("\n")) > 20
		})
		return p, work
	}
	noJVM := func(work string) {
		t.Helper()
		if pids := evitatest.Processes(work); len(pids) > 0 {
			t.Fatalf("JVMs outlived warmstat: %v", pids)
		}
	}

	// one Ctrl-C: the load stops between upserts, its manifest says interrupted
	p, work := load("a")
	p.cmd.Process.Signal(os.Interrupt)
	if code := p.exited(2 * time.Minute); code != 1 {
		t.Fatalf("after one Ctrl-C: exit %d\n%s", code, p.err.String())
	}
	m, err := runfmt.ReadManifest(filepath.Join(tmp, "runs", "a", runfmt.ManifestFile))
	if err != nil || m.Outcome.Status != runfmt.OutcomeInterrupted || m.ExitCode != 1 {
		t.Fatalf("manifest after Ctrl-C: %v %+v", err, m)
	}
	noJVM(work)

	// an upsert stuck on a frozen writer (a replay's: the writer alone): the first Ctrl-C
	// cannot end it, the second does
	wl := filepath.Join(tmp, "shop.wsw")
	if out, stderr, code := runCLI(t, "extract", "--pristine", pristine, "--catalog", "shop", "--evita-version", src.Ref, "--reader-heap", "1g", "--out", wl); code != 0 {
		t.Fatalf("extract: %d %s %s", code, out, stderr)
	}
	p, work = load("b", "--replay", wl)
	writers := evitatest.Processes(filepath.Join(work, "writer", "storage"))
	if len(writers) != 1 {
		t.Fatalf("writer JVM: %v", writers)
	}
	syscall.Kill(writers[0], syscall.SIGSTOP)
	defer syscall.Kill(writers[0], syscall.SIGCONT)
	time.Sleep(time.Second)
	p.cmd.Process.Signal(os.Interrupt)
	if code := p.exited(3 * time.Second); code != -1 {
		t.Fatalf("a stuck upsert ended by the first Ctrl-C? exit %d", code)
	}
	begin := time.Now()
	p.cmd.Process.Signal(os.Interrupt)
	if code := p.exited(15 * time.Second); code != 130 {
		t.Fatalf("second Ctrl-C: exit %d after %s\n%s", code, time.Since(begin), p.err.String())
	}
	if !strings.Contains(p.err.String(), "stopped at once by a second Ctrl-C: 1 evitaDB JVM(s) killed") {
		t.Fatalf("stderr: %s", p.err.String())
	}
	noJVM(work)
	// the writer's copy of the catalog goes with it (its logs stay)
	if left, _ := os.ReadDir(filepath.Join(work, "writer")); len(left) != 1 || left[0].Name() != evitaserver.OwnerMarker {
		t.Fatalf("the writer's data directory after a second Ctrl-C: %v", left)
	}
	t.Logf("second Ctrl-C ended warmstat %s after it was sent", time.Since(begin).Round(time.Millisecond))

	// extract: one Ctrl-C stops it between batches; no workload, no temporary, no JVM
	cut := filepath.Join(tmp, "cut", "shop.wsw")
	os.MkdirAll(filepath.Dir(cut), 0o755)
	p = startWarmstat(t, "extract", "--pristine", pristine, "--catalog", "shop", "--evita-version", src.Ref, "--reader-heap", "1g",
		"--batch-size", "1", "--out", cut)
	for end := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) { // the file is created as reading starts
		if tmps, _ := filepath.Glob(filepath.Join(tmp, "cut", ".shop.wsw.partial-*")); len(tmps) > 0 {
			break
		}
		if time.Now().After(end) || p.exited(0) != -1 {
			t.Fatalf("the extraction never started writing\n%s", p.err.String())
		}
	}
	p.cmd.Process.Signal(os.Interrupt)
	if code := p.exited(time.Minute); code != 1 || !strings.Contains(p.err.String(), "extraction interrupted in") {
		t.Fatalf("extract after one Ctrl-C: exit %d\n%s", code, p.err.String())
	}
	if left, _ := os.ReadDir(filepath.Join(tmp, "cut")); len(left) != 0 {
		t.Fatalf("an interrupted extraction left %v", left)
	}
	noJVM(filepath.Join(tmp, "cut"))

	// SIGTERM, here on an embedded replay (the writer alone, warmstat's own JVM): at once
	p, work = load("c", "--replay", wl, "--target-mode", "embedded")
	begin = time.Now()
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.exited(15 * time.Second); code != 143 {
		t.Fatalf("SIGTERM: exit %d\n%s", code, p.err.String())
	}
	noJVM(work)

	// shape (spawn): SIGTERM at once removes its temporary workload directory too (a
	// deferred removal never runs after os.Exit; a hostile user's finding)
	shapes := filepath.Join(tmp, "shapes")
	os.MkdirAll(shapes, 0o755)
	p = startWarmstat(t, "shape", "--pristine", pristine, "--catalog", "shop", "--evita-version", src.Ref, "--reader-heap", "1g",
		"--batch-size", "1", "--out", filepath.Join(shapes, "shop.shape.json"))
	waitFor(t, 2*time.Minute, "shape's reading", func() bool { // its temporary workload is being written
		tmps, _ := filepath.Glob(filepath.Join(shapes, ".warmstat-shape-*", ".source.wsw.partial-*"))
		return len(tmps) > 0
	})
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.exited(20 * time.Second); code != 143 {
		t.Fatalf("shape after SIGTERM: exit %d\n%s", code, p.err.String())
	}
	noJVM(shapes)
	if left, _ := os.ReadDir(shapes); len(left) != 0 {
		t.Fatalf("shape stopped at once left %v", left)
	}

	// seed --pristine: Ctrl-C stops it, the server goes, and so does the directory it created
	dir := filepath.Join(tmp, "seeded")
	p = startWarmstat(t, "seed", "--pristine", dir, "--catalog", "shop", "--scale", "0.02", "--evita-version", src.Ref, "--heap", "1g")
	waitFor(t, 2*time.Minute, "the seeding server", func() bool { return len(evitatest.Processes(dir+".seeding")) > 0 })
	time.Sleep(3 * time.Second)
	p.cmd.Process.Signal(os.Interrupt)
	if code := p.exited(2 * time.Minute); code != 1 {
		t.Fatalf("seed after Ctrl-C: exit %d\n%s", code, p.err.String())
	}
	noJVM(dir)
	for _, d := range []string{dir, dir + ".seeding"} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s left behind after an interrupted seed", d)
		}
	}
}

// A real series: evitaDB 2026.2.2 against 2026.2.3 on a tiny seeded catalog, 2 pairs
// (its one paired look). The first invocation is killed (SIGKILL: no cleanup of its own)
// once the first pair is done and the next run has started; the same command then
// takes the series up: the killed run is excluded with its reason and run again, and
// the series completes with per-run health lines, its look, the machine time and the
// final (paired) comparison.
//
// The series replays (--replay): its workload is extracted once when it starts, kept
// across the kill, and every run of both releases replays it.
func TestABSeries(t *testing.T) {
	older, newer := evitatest.TwoReleases(t)
	tmp := t.TempDir()
	pristine, _ := evitatest.SmallSnapshot(t, older)
	dir := filepath.Join(tmp, "series")
	args := []string{"ab", "--pristine", pristine, "--catalog", "shop", "--a", older.Ref, "--b", newer.Ref, "--out", dir,
		"--max-runs", "2", "--server-heap", "1g", "--reader-heap", "1g"} // nothing else: the faithful method
	p := startWarmstat(t, args...)
	waitFor(t, 8*time.Minute, "the first pair and the next run", func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "series.json"))
		return err == nil && strings.Count(string(b), `"status": "done"`) == 2 && strings.Contains(string(b), `"status": "running"`)
	})
	time.Sleep(2 * time.Second)
	p.cmd.Process.Kill()
	p.exited(10 * time.Second)
	waitFor(t, 10*time.Second, "the killed series' JVMs to die", func() bool { return len(evitatest.Processes(filepath.Join(dir, "work"))) == 0 })

	out, stderr, code := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("resumed series: exit %d\n%s\n%s", code, out, stderr)
	}
	// a snapshot given and nothing else asks the faithful method, and says so: the
	// workload extracted once, when the series started, and every run of both sides
	// replayed it with the embedded writer alone, gated on the dominant collection's mean
	// with the machine's speed set aside, watching its allocation (a remote replay is
	// the same series with Embedded false: loader's TestSpawnedReplay and
	// TestSpawnModeCommand run it)
	for _, want := range []string{"the question is asked of the snapshot " + filepath.Join(pristine, "shop"), "read once into the series' workload.wsw by build A, replayed in every run by the embedded writer",
		"gated on Product/mean_adj", "watching Product/alloc", "the older way (a remote writer and a reader in every run, gated on Product/mean and */ingest): --target-mode remote"} {
		if !strings.Contains(stderr, want) {
			t.Fatalf("the first lines lack %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "extracting") {
		t.Fatalf("the resumed series extracted its workload again:\n%s", stderr)
	}
	info, err := workload.Verify(filepath.Join(dir, "workload.wsw"))
	if err != nil {
		t.Fatal(err)
	}
	for _, side := range []string{"A", "B"} {
		runs, _ := filepath.Glob(filepath.Join(dir, side, "run-*", runfmt.ManifestFile))
		for _, f := range runs {
			m, err := runfmt.ReadManifest(f)
			if err != nil || m.SourceMode() != runfmt.SourceReplay || m.Source.WorkloadSHA256 != info.SHA256 || m.Reader.MaxHeapBytes != nil ||
				m.TargetMode != runfmt.TargetEmbedded || m.Verification.Status != runfmt.Verified {
				t.Fatalf("%s: %v %+v", f, err, m.Source)
			}
		}
		if len(runs) < 2 {
			t.Fatalf("side %s: %d runs", side, len(runs))
		}
	}
	if logs, _ := filepath.Glob(filepath.Join(dir, "work", "reader-logs")); len(logs) != 0 {
		t.Fatalf("a reader ran during the replayed series: %v", logs)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "series.json"))
	if err != nil {
		t.Fatal(err)
	}
	st := string(raw)
	var plan struct {
		Plan series.Plan `json:"plan"`
	}
	if err := json.Unmarshal(raw, &plan); err != nil || !slices.Equal(plan.Plan.Gates, []string{"Product/mean_adj"}) || !slices.Equal(plan.Plan.Watch, []string{"Product/alloc"}) ||
		plan.Plan.TargetMode != runfmt.TargetEmbedded || !plan.Plan.Replay {
		t.Fatalf("the faithful method's plan: %v %+v", err, plan.Plan)
	}
	if !strings.Contains(st, "did not finish: the series was stopped") || !strings.Contains(st, `"rerun": true`) ||
		!strings.Contains(st, `"reason": "resolved"`) && !strings.Contains(st, `"reason": "max-runs"`) {
		t.Fatalf("series.json:\n%s", st)
	}
	for _, want := range []string{"Product mean", "load avg", "series ", "runs of the series", "(interrupted): did not finish", "== warmstat compare", "== warmstat table --group", "compare.svg",
		"look after 2 pairs", "within-pair noise", "run took", "machine time:", "outside the load and goLive", "95 % paired-t", "JIT cores"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	// the series' runs are ordinary run directories: compare works on them directly
	if _, _, code := runCLI(t, "compare", filepath.Join(dir, "A"), filepath.Join(dir, "B")); code != 0 {
		t.Fatalf("compare on the series: exit %d", code)
	}
	t.Logf("resumed series output:\n%s", out)
}

// Once a stop at once begins, every command's output is dropped but the stop's own
// line: the runs its kills end are not failures to report.
func TestQuietOnStop(t *testing.T) {
	var b bytes.Buffer
	w := quietOnStop{W: quietOnStop{W: &b}} // a command run inside another wraps twice
	fmt.Fprint(w, "before;")
	interrupt.Stopping.Store(true)
	defer interrupt.Stopping.Store(false)
	fmt.Fprint(w, " FAILED: the writer exited;")
	fmt.Fprint(interrupt.Loud(w), " stopped at once")
	if b.String() != "before; stopped at once" {
		t.Fatalf("%q", b.String())
	}
}
