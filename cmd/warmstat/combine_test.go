package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warmstat/warmstat/internal/synthrun"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/series"
)

// fleetMachine is one synthetic machine of a fleet: its speed, its run-to-run noise,
// the change B brings on it, and how it describes itself.
type fleetMachine struct {
	seed   uint64 // runs of different machines must be different runs
	speed  float64
	noise  float64
	effect float64
	cpu    string
	cores  int
	pairs  int
	mutate func(*runfmt.Manifest)
}

// writeFleetSeries lays out a fixed-size series (ab --pairs N) of one machine as ab
// leaves it: ABBA, the machine wandering between pairs (10 %) while both runs of a
// pair share its state.
func writeFleetSeries(t *testing.T, dir string, m fleetMachine) {
	t.Helper()
	rng := rand.New(rand.NewPCG(m.seed, 9))
	st := series.State{Schema: series.Schema, Plan: series.Plan{Catalog: "shop", MinRuns: m.pairs, MaxRuns: m.pairs, Pairs: m.pairs, ThresholdPct: 2, AlphaPct: 5,
		A: series.Build{Label: "A", Identity: "a"}, B: series.Build{Label: "B", Identity: "b"}}, Started: time.Now().UTC()}
	seq := 0
	for k := range m.pairs {
		wander := m.speed * math.Exp(0.10*rng.NormFloat64())
		order := []string{"A", "B"}
		if k%2 == 1 {
			order = []string{"B", "A"}
		}
		for _, side := range order {
			effect := wander * math.Exp(m.noise*rng.NormFloat64())
			if side == "B" {
				effect *= m.effect
			}
			rel := filepath.Join(side, fmt.Sprintf("run-%d", k+1))
			seq++
			spec := synthrun.Spec{Label: side, Seed: m.seed*1000 + uint64(seq), Effect: effect, Tau: 0.001, Mutate: func(mf *runfmt.Manifest) {
				mf.Machine.CPUModel, mf.Machine.Cores = m.cpu, &m.cores
				if m.mutate != nil {
					m.mutate(mf)
				}
			}}
			if _, err := synthrun.Write(filepath.Join(dir, rel), spec); err != nil {
				t.Fatal(err)
			}
			st.Entries = append(st.Entries, series.Entry{Seq: seq, Side: side, Kind: series.Measured, Dir: rel, Status: series.Done})
		}
	}
	st.Outcome = &series.Outcome{Reason: "fixed-size", Runs: m.pairs}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, series.File), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// combine on synthetic fleets: two machines of different speed, CPU and cores, each
// seeing B 8 % slower, give one verdict with each machine's own change beside it and
// no claim that they differ; a third machine seeing +30 % is said to differ, with its
// evidence; --fail-on-regression, --format json and --plot as compare's. Refused: a
// series of another heap, a copied series, series of another size; input errors: a
// sequential or unfinished series, a directory without a series.
func TestCombineFleet(t *testing.T) {
	tmp := t.TempDir()
	m := func(name string, fm fleetMachine) string {
		dir := filepath.Join(tmp, name)
		writeFleetSeries(t, dir, fm)
		return dir
	}
	m1 := m("m1", fleetMachine{seed: 1, speed: 1.0, noise: 0.01, effect: 1.08, cpu: "AMD EPYC", cores: 2, pairs: 5})
	m2 := m("m2", fleetMachine{seed: 2, speed: 1.3, noise: 0.02, effect: 1.08, cpu: "Intel Xeon", cores: 4, pairs: 5})
	out, stderr, code := runCLI(t, "combine", m1, m2)
	t.Logf("combine:\n%s%s", out, stderr)
	if code != 0 {
		t.Fatalf("combine: exit %d", code)
	}
	for _, want := range []string{"warmstat combine: B B vs A A on 2 machines (10 pairs)", "AMD EPYC, 2 cores", "Intel Xeon, 4 cores",
		"Product mean upsert, machine by machine:", "no evidence that the change differs between the machines", "gate Product/mean: REGRESSION (slower)"} {
		if !strings.Contains(out, want) {
			t.Errorf("combine lacks %q", want)
		}
	}
	if _, _, code := runCLI(t, "combine", "--fail-on-regression", m1, m2); code != 4 {
		t.Errorf("--fail-on-regression: exit %d", code)
	}
	svg := filepath.Join(tmp, "fleet.svg")
	js, _, code := runCLI(t, "combine", "--format", "json", "--plot", svg, m1, m2)
	var doc struct {
		Schema string `json:"schema"`
		Rows   []struct {
			Collection    string   `json:"collection"`
			Metric        string   `json:"metric"`
			DeltaPct      *float64 `json:"delta_pct"`
			Verdict       string   `json:"verdict"`
			Machines      []struct{ Pairs int }
			Heterogeneity *struct{ P float64 }
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil || code != 0 || doc.Schema != "warmstat.combine/v1" {
		t.Fatalf("json: exit %d %v\n%s", code, err, js)
	}
	if r := doc.Rows[0]; r.Collection != "Product" || r.Metric != "mean" || r.Verdict != "slower" || len(r.Machines) != 2 || r.Heterogeneity == nil ||
		*r.DeltaPct < 4 || *r.DeltaPct > 12 {
		t.Errorf("json row: %+v", r)
	}
	if st, err := os.Stat(svg); err != nil || st.Size() < 1000 {
		t.Errorf("plot: %v", err)
	}
	// a plot that cannot be written is a usage error before any verdict is printed
	out, errs, code := runCLI(t, "combine", "--plot", filepath.Join(tmp, "no-such-dir", "fleet.svg"), m1, m2)
	if code != 2 || out != "" || !strings.Contains(errs, "no-such-dir does not exist") {
		t.Errorf("--plot into a missing directory: exit %d\n%s\n%s", code, out, errs)
	}

	// a machine that really sees another change
	m3 := m("m3", fleetMachine{seed: 3, speed: 0.9, noise: 0.01, effect: 1.30, cpu: "AMD EPYC", cores: 2, pairs: 5})
	out, _, code = runCLI(t, "combine", m1, m2, m3)
	if code != 0 || !strings.Contains(out, "the change DIFFERS between the machines") {
		t.Errorf("heterogeneous fleet: exit %d\n%s", code, out)
	}

	// refusals and input errors, each one line (refusals may list their reasons below)
	heap := m("heap", fleetMachine{seed: 4, speed: 1, noise: 0.01, effect: 1.08, cpu: "AMD EPYC", cores: 2, pairs: 5,
		mutate: func(mf *runfmt.Manifest) { h := int64(16 << 30); mf.Server.MaxHeapBytes = &h }})
	copied := filepath.Join(tmp, "copy")
	if out, err := exec.Command("cp", "-r", m1, copied).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	six := m("six", fleetMachine{seed: 5, speed: 1, noise: 0.01, effect: 1.08, cpu: "AMD EPYC", cores: 2, pairs: 6})
	seq := m("seq", fleetMachine{seed: 6, speed: 1, noise: 0.01, effect: 1.08, cpu: "AMD EPYC", cores: 2, pairs: 5})
	editPlan(t, seq, func(st *series.State) { st.Plan.Pairs, st.Plan.MaxRuns = 0, 10 })
	unfinished := m("unfinished", fleetMachine{seed: 7, speed: 1, noise: 0.01, effect: 1.08, cpu: "AMD EPYC", cores: 2, pairs: 5})
	editPlan(t, unfinished, func(st *series.State) { st.Outcome = nil })
	// a refusal in JSON is a document too
	if js, _, code := runCLI(t, "combine", "--format", "json", m1, six); code != 3 || !strings.Contains(js, `"combinable": false`) || !strings.Contains(js, `"field": "pairs"`) {
		t.Errorf("a JSON refusal of other plans: exit %d\n%s", code, js)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{m1, heap}, 3, "server-heap of A differs: 23g (" + m1 + ") against 16g (" + heap + ")"},
		{[]string{m1, copied}, 3, "a run is in more than one series"},
		{[]string{m1, six}, 3, "pairs differs: 5 (" + m1 + ") against 6 (" + six + ")"},
		{[]string{m1, seq}, 1, "a sequential series"},
		{[]string{m1, unfinished}, 1, "unfinished, 5 of 5 pairs: run its warmstat ab command again"},
		{[]string{m1, tmp}, 1, "not a series directory"},
		{[]string{m1, filepath.Join(tmp, "nope")}, 1, "nope: no such file or directory"},
		{[]string{m1, filepath.Join(m1, series.File)}, 1, "not a directory: give the series' directory"},
		{[]string{m1, m1 + "/"}, 2, "is given twice"},
		{[]string{m1}, 2, "combine needs the series of at least 2 machines (got 1)"},
	} {
		_, stderr, code := runCLI(t, append([]string{"combine"}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("combine %v: exit %d %q, want %d %q", c.args, code, stderr, c.code, c.want)
		}
	}
}

func editPlan(t *testing.T, dir string, edit func(*series.State)) {
	t.Helper()
	st, err := series.Read(dir)
	if err != nil || st == nil {
		t.Fatal(err)
	}
	edit(st)
	if err := runfmt.WriteJSONAtomic(filepath.Join(dir, series.File), st); err != nil {
		t.Fatal(err)
	}
}
