package evitaserver

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A real JDK 17 log: young pauses from churn, a concurrent cycle (Remark, Cleanup)
// and exactly three full pauses. Counts are checked against an independent count of
// the [gc,start] lines, one per pause.
func TestParseGCLogFromRealJVM(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a JVM")
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("no java on PATH (.ci/run installs a JDK)")
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "gc.log")
	cmd := exec.Command(java, "-Xms64m", "-Xmx64m", "-XX:+UseG1GC", "-Xlog:gc*:file="+log+":time,uptime,level,tags",
		filepath.Join("..", "testdata", "gcgen", "GcWorkload.java"), "3")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	s, err := ParseGCFiles(log)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(log)
	starts := map[string]map[string]bool{}
	for _, m := range regexp.MustCompile(`\[gc,start\s*\]\s+GC\((\d+)\) Pause (\w+)`).FindAllStringSubmatch(string(raw), -1) {
		if starts[m[2]] == nil {
			starts[m[2]] = map[string]bool{}
		}
		starts[m[2]][m[1]] = true
	}
	if s.Full != 3 || int(s.Full) != len(starts["Full"]) {
		t.Errorf("full pauses %d, want 3 (start lines: %d)", s.Full, len(starts["Full"]))
	}
	if s.Young == 0 || int(s.Young) != len(starts["Young"]) {
		t.Errorf("young pauses %d, start lines say %d", s.Young, len(starts["Young"]))
	}
	if int(s.Other) != len(starts["Remark"])+len(starts["Cleanup"]) || s.Other == 0 {
		t.Errorf("remark/cleanup pauses %d, start lines say %d+%d", s.Other, len(starts["Remark"]), len(starts["Cleanup"]))
	}
	if lines := strings.Count(string(raw), "Pause Young"); int64(lines) != 2*s.Young {
		t.Errorf("JDK 17 should write 2 lines per young pause: %d lines, %d pauses", lines, s.Young)
	}
	if s.PauseNs <= 0 || s.MaxNs <= 0 || s.UptimeNs <= 0 || s.ShareOf(s.UptimeNs) >= 100 {
		t.Errorf("times: %+v", s)
	}
	t.Logf("young %d, full %d, remark/cleanup %d, paused %.1f ms of %.1f ms (%.1f %%)", s.Young, s.Full, s.Other,
		float64(s.PauseNs)/1e6, float64(s.UptimeNs)/1e6, s.ShareOf(s.UptimeNs))
}

func TestParseGCLogRotationCountsOnce(t *testing.T) {
	log := `[2026-11-29T19:27:56.390+0000][0.046s][info][gc,start    ] GC(0) Pause Young (Normal) (G1 Evacuation Pause)
[2026-11-29T19:27:56.392+0000][0.048s][info][gc          ] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 6M->1M(64M) 1.836ms
[2026-11-29T19:27:57.100+0000][0.750s][info][gc          ] GC(7) Pause Remark 40M->40M(64M) 0.900ms
[2026-11-29T19:27:57.200+0000][0.850s][info][gc          ] GC(7) Pause Cleanup 40M->40M(64M) 0.100ms
[2026-11-29T19:27:58.000+0000][1.500s][info][gc          ] GC(9) Pause Full (System.gc()) 38M->30M(64M) 12.5ms
`
	dir := t.TempDir()
	a, b := filepath.Join(dir, "gc.log.0"), filepath.Join(dir, "gc.log")
	os.WriteFile(a, []byte(log), 0o644)
	os.WriteFile(b, []byte(log), 0o644) // the same pauses again, as after a rotation overlap
	s, err := ParseGCFiles(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if s.Young != 1 || s.Other != 2 || s.Full != 1 || s.PauseNs != 15_336_000 || s.MaxNs != 12_500_000 || s.UptimeNs != 1_500_000_000 {
		t.Fatalf("%+v", s)
	}
	// after a warm-up that ended at 0.8 s: the Remark (0.750 s) and the Young are its
	if w, err := ParseGCFilesFrom(800_000_000, a, b); err != nil || w.Young != 0 || w.Other != 1 || w.Full != 1 ||
		w.PauseNs != 12_600_000 || w.UptimeNs != 1_500_000_000 {
		t.Fatalf("from 0.8 s: %+v %v", w, err)
	}
	if _, err := ParseGCFiles(filepath.Join(dir, "missing.log")); err == nil {
		t.Fatal("missing file accepted")
	}
}

// A file that is not a GC log must never be recorded as "0 pauses": unknown is not 0.
func TestParseGCRefusesWhatIsNotAGCLog(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		return p
	}
	good := write("gc.log", "[2026-11-29T19:27:56.392+0000][0.048s][info][gc          ] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 6M->1M(64M) 1.836ms\n")
	quiet := write("quiet.log", "[0.005s][info][gc,init] Version: 17.0.12+7 (release)\n[0.006s][info][gc     ] Using G1\n")
	for _, c := range []struct {
		name  string
		files []string
		want  string
	}{
		{"readme", []string{write("README.md", "# warmstat\n\nHow long does publishing take?\n")}, "README.md: not a JVM GC log: none of its 2 lines carries a [gc...] tag"},
		{"empty", []string{"/dev/null"}, "/dev/null: not a JVM GC log: it is empty"},
		{"readme among rotations", []string{write("README2.md", "text\n"), good}, "README2.md: not a JVM GC log"},
		{"no uptime", []string{write("time-only.log", "[2026-11-29T19:27:56.392+0000][info][gc] GC(0) Pause Young (Normal) 6M->1M(64M) 1.836ms\n")}, "no uptime decorator"},
	} {
		if _, err := ParseGCFiles(c.files...); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// a real log without a single pause is a real 0
	s, err := ParseGCFiles(quiet)
	if err != nil || s.Pauses() != 0 || s.UptimeNs != 6e6 {
		t.Fatalf("pause-free log: %+v %v", s, err)
	}
	if _, err := ParseGCLog(strings.NewReader(""), "stdin"); err == nil {
		t.Fatal("empty reader accepted")
	}
}

// A manifest's record of a GC summary: its pauses, and their share of the window the
// caller measured (a warm-up's part of the uptime left out).
func TestGCSummaryRecord(t *testing.T) {
	s := GCSummary{Young: 3, Full: 1, Other: 2, PauseNs: 50e6, UptimeNs: 2e9}
	r := s.Record(1e9)
	if r.Collections != 6 || *r.YoungPauses != 3 || *r.FullPauses != 1 || r.PauseNs != 50e6 || r.ShareOfWallPc != 5 {
		t.Errorf("record %+v", r)
	}
	if s.Record(0).ShareOfWallPc != 0 {
		t.Error("a window of nothing has a share")
	}
}
