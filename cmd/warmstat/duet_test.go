package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/internal/evitatest"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/series"
)

// A duet series on real servers (two releases, the small snapshot, embedded writers):
// it pauses when asked (--stop-after) and the same command continues it; every pair
// is one duet, both runs at once in lock-step — the same barriers met on both sides,
// each writer's every thread on its own CPU set, told its CPU count, on G1 — the slots
// alternating pair by pair; the analysis sets the slot aside (slot_effect_pct), and
// compare refuses duet runs beside a run made alone.
func TestABDuet(t *testing.T) {
	older, newer := evitatest.TwoReleases(t)
	pristine, _ := evitatest.SmallSnapshot(t, older)
	cpus, err := evitaserver.AvailableCPUs()
	if err != nil || len(cpus) < 2 {
		t.Skipf("a duet needs 2 CPUs: %v %v", cpus, err)
	}
	halves, _ := evitaserver.SplitCPUs(cpus)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "duet")
	args := []string{"ab", "--pristine", pristine, "--catalog", "shop", "--a", older.Ref, "--b", newer.Ref, "--out", dir,
		"--pairs", "4", "--server-heap", "1g", "--reader-heap", "1g", "--replay", "--target-mode", "embedded", "--duet", "--format", "json"}
	out, stderr, code := runCLI(t, append(args, "--stop-after", "1")...)
	if code != 0 || out != "" || !strings.Contains(stderr, "stopped after 1 pair as asked (--stop-after): 1 of the series' pairs done; the same command continues it") {
		t.Fatalf("first sitting: exit %d\n%s\n%s", code, out, stderr)
	}
	out, stderr, code = runCLI(t, args...)
	if code != 0 {
		t.Fatalf("second sitting: exit %d\n%s\n%s", code, out, stderr)
	}
	if strings.Count(stderr, "extracting") != 0 || !strings.Contains(stderr, " duet: A/run-2") && !strings.Contains(stderr, " duet: B/run-2") {
		t.Fatalf("the continued series:\n%s", stderr)
	}
	st, err := series.Read(dir)
	if err != nil || st == nil || !st.Plan.Duet || st.Outcome == nil || st.Outcome.Reason != "fixed-size" || st.Done("A", series.Measured) != 4 {
		t.Fatalf("series.json: %v %+v", err, st)
	}
	// the entries come in duets: partners, the slot-1 run first, A in slot 1 in odd pairs
	for i := 0; i+1 < len(st.Entries); i += 2 {
		e, p := st.Entries[i], st.Entries[i+1]
		k := i/2 + 1
		wantA := 1
		if k%2 == 0 {
			wantA = 2
		}
		slotA := e.Slot
		if e.Side != "A" {
			slotA = p.Slot
		}
		if e.Slot != 1 || p.Slot != 2 || e.Partner != p.Seq || p.Partner != e.Seq || e.Side == p.Side || slotA != wantA {
			t.Fatalf("duet %d: %+v / %+v", k, e, p)
		}
	}
	// every run records its duet; partners name each other, met the same barriers, and
	// their writers were placed apart
	runs := map[string]*runfmt.Manifest{}
	for _, side := range []string{"A", "B"} {
		for k := 1; k <= 4; k++ {
			m, err := runfmt.ReadManifest(filepath.Join(dir, side, "run-"+strconv.Itoa(k), runfmt.ManifestFile))
			if err != nil {
				t.Fatal(err)
			}
			runs[m.RunID] = m
		}
	}
	for id, m := range runs {
		d := m.Duet
		if d == nil || m.Verification.Status != runfmt.Verified {
			t.Fatalf("%s: no duet record, or unverified: %+v %+v", id, d, m.Verification)
		}
		p := runs[d.Partner]
		if p == nil || p.Duet.Partner != id || p.Duet.Slot == d.Slot || p.Build.Label == m.Build.Label || d.PartnerBuild != p.Build.Label {
			t.Fatalf("%s and its partner %s: %+v / %+v", id, d.Partner, d, p)
		}
		want := evitaserver.FormatCPUs(halves[d.Slot-1])
		if d.CPUs != want || d.CPUsAllowed != want {
			t.Fatalf("%s in slot %d: writer CPUs %q, every thread's %q, want %q", id, d.Slot, d.CPUs, d.CPUsAllowed, want)
		}
		if d.BatchWaits == 0 || d.BatchWaits != p.Duet.BatchWaits {
			t.Fatalf("%s met %d batch barriers, its partner %d", id, d.BatchWaits, p.Duet.BatchWaits)
		}
		opts := m.Server.JVM.Options
		if !slices.Contains(opts, "-XX:ActiveProcessorCount="+strconv.Itoa(len(halves[0]))) || m.Server.JVM.GC != "G1" {
			t.Fatalf("%s: writer options %v, GC %s", id, opts, m.Server.JVM.GC)
		}
		if gap := m.StartedAt.Sub(*p.StartedAt).Abs(); gap.Seconds() > 30 {
			t.Fatalf("%s started %s apart from its partner", id, gap)
		}
	}
	// the answer is the duet analysis: the slot is a factor
	var ans report.SeriesAnswer
	if err := json.Unmarshal([]byte(out), &ans); err != nil {
		t.Fatalf("the answer is not JSON: %v\n%s", err, out)
	}
	cmpOut, _, code := runCLI(t, "compare", "--format", "json", filepath.Join(dir, "A"), filepath.Join(dir, "B"))
	if code != 0 || !strings.Contains(cmpOut, `"slot_effect_pct"`) {
		t.Fatalf("compare of the duet series: exit %d\n%s", code, cmpOut)
	}
	// a run made alone is not comparable with duet runs: the same run without its
	// duet record, beside them, is refused by name
	alone := filepath.Join(tmp, "alone", "run-1")
	if err := os.MkdirAll(filepath.Dir(alone), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(alone, os.DirFS(filepath.Join(dir, "B", "run-1"))); err != nil {
		t.Fatal(err)
	}
	m, _ := runfmt.ReadManifest(filepath.Join(alone, runfmt.ManifestFile))
	m.Duet, m.RunID = nil, "alone-1"
	if err := runfmt.WriteJSONAtomic(filepath.Join(alone, runfmt.ManifestFile), m); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runCLI(t, "compare", filepath.Join(dir, "A"), filepath.Dir(alone)); code != 3 || !strings.Contains(stderr, "duet") {
		t.Fatalf("duet runs against a run made alone: exit %d\n%s", code, stderr)
	}
	// a table may put them side by side, but never silently: the condition gets its column
	if out, _, code := runCLI(t, "table", "--group", filepath.Join(dir, "A"), filepath.Dir(alone)); code != 0 ||
		!strings.Contains(out, "yes (writers pinned apart)") || !strings.Contains(out, "no (alone)") {
		t.Fatalf("a table of duet runs beside a run made alone: exit %d\n%s", code, out)
	}
}

// A duet's refusals, before any server starts: it replays (no live source), it is
// paired, and its plan is its own (a sequential series is not continued as a duet).
func TestABDuetRefusals(t *testing.T) {
	tmp := t.TempDir()
	wl := filepath.Join(tmp, "none.wsw")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--pristine", tmp, "--catalog", "shop", "--target-mode", "remote"}, "--duet replays one workload in both writers at once: it needs --replay or --workload"},
		{[]string{"--workload", wl, "--unpaired"}, "--duet is analysed by its duets (paired, with the slot as a factor): --unpaired does not apply"},
		{[]string{"--workload", wl, "--stop-after", "-1"}, "--stop-after"},
		{[]string{"--workload", wl, "--duet-placement", "apart"}, "--duet-placement \"apart\": split or shared"},
	} {
		args := append([]string{"ab", "--a", "2026.2.2", "--b", "2026.2.3", "--duet", "--out", filepath.Join(tmp, "s")}, c.args...)
		_, stderr, code := runCLI(t, args...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d %q", c.args, code, stderr)
		}
	}
}
