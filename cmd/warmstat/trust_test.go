package main

// The hostile inputs of issue 12: each must give a right number or a clear refusal,
// never a confident wrong answer, a silent pass or a crash.

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/internal/synthrun"
	"github.com/warmstat/warmstat/runfmt"
)

type compareDoc struct {
	Comparable bool `json:"comparable"`
	Mismatches []struct {
		Field, A, B, Within, Detail string
	} `json:"mismatches"`
	Duplicates []struct {
		RunID string   `json:"run_id"`
		Runs  []string `json:"runs"`
	} `json:"duplicates"`
	A, B struct {
		Runs     int      `json:"runs"`
		Excluded []string `json:"excluded"`
	}
	Rows []struct {
		Collection, Metric, Verdict, Reason string
		A                                   *float64 `json:"a"`
		RunsA                               int      `json:"runs_a"`
		RunsB                               int      `json:"runs_b"`
		DeltaPct                            *float64 `json:"delta_pct"`
		Low                                 *float64 `json:"ci_low_pct"`
		High                                *float64 `json:"ci_high_pct"`
		ResolutionPct                       *float64 `json:"resolution_pct"`
	}
	Excluded []struct {
		Group, Run, Reason string
		Rows               []string
	} `json:"excluded_from_rows"`
	Gates []struct {
		Gate, Verdict, Reason string
		Judged, Regression    bool
	}
	Notes []string
}

func compareJSON(t *testing.T, args ...string) (compareDoc, string, int) {
	t.Helper()
	out, stderr, code := runCLI(t, append([]string{"compare", "--format", "json"}, args...)...)
	var d compareDoc
	if out != "" {
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("not JSON (%v): %s", err, out)
		}
	}
	return d, stderr, code
}

func (d compareDoc) row(coll, metric string) int {
	for i, r := range d.Rows {
		if r.Collection == coll && r.Metric == metric {
			return i
		}
	}
	return -1
}

// writeRuns writes one run per goLive figure (seconds) with the given clock resolution.
func writeRuns(t *testing.T, dir, label string, first uint64, res int64, golive ...float64) string {
	t.Helper()
	for i, g := range golive {
		ns := int64(math.Round(g * 1e9))
		_, err := synthrun.Write(filepath.Join(dir, label, fmt.Sprintf("run-%d", i+1)), synthrun.Spec{Label: label, Seed: first + uint64(i), Tau: 0.01,
			Mutate: func(m *runfmt.Manifest) { m.Timings.ResolutionNs = res; m.GoLive.Ns = &ns }})
		if err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, label)
}

// 1. An imported Java clock reads 0.1 s steps. 2 + 2 runs at goLive 2.1 s vs 2.2 s
// used to give [+4.76 %, +4.76 %] and "slower": no observed spread is unknown noise,
// and a difference of one step cannot be proven by a clock of that step.
func TestQuantisedClocksNeverProveLessThanAStep(t *testing.T) {
	tmp := t.TempDir()
	a := writeRuns(t, tmp, "a", 1, 1e8, 2.1, 2.1)
	b := writeRuns(t, tmp, "b", 10, 1e8, 2.2, 2.2)
	d, stderr, code := compareJSON(t, a, b)
	if code != 0 {
		t.Fatalf("exit %d %s", code, stderr)
	}
	r := d.Rows[d.row("*", "golive")]
	if r.Verdict != "insufficient" || r.Low != nil || !strings.Contains(r.Reason, "same figure") {
		t.Fatalf("2+2 identical 0.1 s readings: %+v", r)
	}
	// three equal readings: their mean log is not their log to the last bit, and must
	// not pass for spread
	a = writeRuns(t, tmp, "a3", 40, 1e8, 2.1, 2.1, 2.1)
	b = writeRuns(t, tmp, "b3", 50, 1e8, 2.2, 2.2, 2.2)
	d, _, _ = compareJSON(t, a, b)
	if r = d.Rows[d.row("*", "golive")]; r.Verdict != "insufficient" || r.Low != nil {
		t.Fatalf("3+3 identical 0.1 s readings: %+v", r)
	}
	// runs that do vary, read from a 0.1 s clock: a 4.6 % step apart on average, no verdict
	a = writeRuns(t, tmp, "a5", 20, 1e8, 2.1, 2.1, 2.2, 2.1, 2.1)
	b = writeRuns(t, tmp, "b5", 30, 1e8, 2.2, 2.2, 2.2, 2.3, 2.2)
	d, _, _ = compareJSON(t, "--threshold", "0", a, b)
	r = d.Rows[d.row("*", "golive")]
	if r.Verdict != "unresolved" || r.ResolutionPct == nil || *r.Low > 0 {
		t.Fatalf("5+5 readings one step apart from a 0.1 s clock: %+v", r)
	}
	// the same readings from an exact clock are a real difference: slower
	a = writeRuns(t, tmp, "a5ns", 20, 1, 2.1, 2.1, 2.2, 2.1, 2.1)
	b = writeRuns(t, tmp, "b5ns", 30, 1, 2.2, 2.2, 2.2, 2.3, 2.2)
	d, _, _ = compareJSON(t, "--threshold", "0", a, b)
	if r = d.Rows[d.row("*", "golive")]; r.Verdict != "slower" || r.ResolutionPct != nil {
		t.Fatalf("the same figures from an exact clock: %+v", r)
	}
}

// 2. A run directory copied under another name is the same run, not a second one:
// within a group, across groups, and compare X X are refused (exit 3).
func TestReplicatedRunsRefused(t *testing.T) {
	tmp := t.TempDir()
	a := group(t, tmp, 3, 1, synthrun.Spec{Label: "a", Tau: 0.01})
	b := group(t, tmp, 3, 10, synthrun.Spec{Label: "b", Tau: 0.01, Effect: 0.97})
	copyRun := func(from, to string) {
		os.MkdirAll(to, 0o755)
		for _, f := range []string{runfmt.ManifestFile, runfmt.EntitiesFile} {
			data, _ := os.ReadFile(filepath.Join(from, f))
			os.WriteFile(filepath.Join(to, f), data, 0o644)
		}
	}
	dup := filepath.Join(tmp, "b-dup")
	for _, r := range []string{"run-1", "run-2", "run-3"} {
		copyRun(filepath.Join(b, r), filepath.Join(dup, r))
	}
	copyRun(filepath.Join(b, "run-3"), filepath.Join(dup, "run-3-again"))
	stdout, stderr, code := runCLI(t, "compare", a, dup)
	if code != 3 || stdout != "" || !strings.Contains(stderr, "run b-12 is counted 2 times (B: "+filepath.Join(dup, "run-3")+"; B: "+filepath.Join(dup, "run-3-again")+")") {
		t.Fatalf("a copied run inside B: exit %d\n%s", code, stderr)
	}
	d, _, code := compareJSON(t, a, dup)
	if code != 3 || d.Comparable || len(d.Duplicates) != 1 || d.Duplicates[0].RunID != "b-12" || len(d.Rows) != 0 {
		t.Fatalf("JSON refusal: exit %d %+v", code, d)
	}
	if _, stderr, code := runCLI(t, "compare", b, b); code != 3 || strings.Count(stderr, "counted 2 times") != 3 {
		t.Fatalf("compare X X: exit %d\n%s", code, stderr)
	}
	// the same run on both sides, under another name in B
	mixed := filepath.Join(tmp, "mixed")
	copyRun(filepath.Join(b, "run-1"), filepath.Join(mixed, "run-1"))
	copyRun(filepath.Join(b, "run-2"), filepath.Join(mixed, "run-2"))
	copyRun(filepath.Join(b, "run-3"), filepath.Join(tmp, "b3-only", "run-x"))
	if _, stderr, code := runCLI(t, "compare", mixed, filepath.Join(b)); code != 3 || !strings.Contains(stderr, "A: "+filepath.Join(mixed, "run-1")+"; B: "+filepath.Join(b, "run-1")) {
		t.Fatalf("the same run on both sides: exit %d\n%s", code, stderr)
	}
	// a table of a group holding a run twice is refused too
	if _, stderr, code := runCLI(t, "table", "--group", dup); code != 3 || !strings.Contains(stderr, "counted 2 times") {
		t.Fatalf("table --group: exit %d %s", code, stderr)
	}
}

// 3. A folder a killed load left (entities.csv, no manifest.json) and runs without a
// figure (a failed goLive, a goLive within the clock's rounding) are listed with
// their reason in text and JSON, and each row says how many runs it rests on.
func TestRunsLeftOutAreListed(t *testing.T) {
	tmp := t.TempDir()
	a := group(t, tmp, 3, 1, synthrun.Spec{Label: "a", Tau: 0.01})
	killed := filepath.Join(a, "run-4")
	os.MkdirAll(killed, 0o755)
	os.WriteFile(filepath.Join(killed, runfmt.EntitiesFile), []byte(runfmt.CSVHeader+"\n1,Product,1,1,0,7000000\n"), 0o644)
	b := group(t, tmp, 2, 10, synthrun.Spec{Label: "b", Tau: 0.01})
	synthrun.Write(filepath.Join(b, "run-3"), synthrun.Spec{Label: "b", Seed: 12, Tau: 0.01, GoLiveFail: true})
	zero := int64(0)
	synthrun.Write(filepath.Join(b, "run-4"), synthrun.Spec{Label: "b", Seed: 13, Tau: 0.01, Mutate: func(m *runfmt.Manifest) {
		m.Timings.ResolutionNs = 1e8
		m.GoLive.Ns = &zero
	}})
	text, stderr, code := runCLI(t, "compare", a, b)
	if code != 0 {
		t.Fatalf("exit %d %s", code, stderr)
	}
	for _, want := range []string{
		"note: A: left out " + killed + ": has entities.csv but no manifest.json (a load that was killed, or is still running)",
		"note: B: " + filepath.Join(b, "run-3") + " left out of */golive, */total: goLive failed",
		"note: B: " + filepath.Join(b, "run-4") + " left out of */golive: goLive 0 s is within the clock's rounding (resolution 0.1 s)",
		"2.1 s (2 of 4 runs)", "s (3 of 4 runs)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	d, _, _ := compareJSON(t, a, b)
	if len(d.A.Excluded) != 1 || !strings.HasPrefix(d.A.Excluded[0], killed+": has entities.csv but no manifest.json") || d.A.Runs != 3 || d.B.Runs != 4 {
		t.Fatalf("JSON group exclusions: %+v %+v", d.A, d.B)
	}
	r := d.Rows[d.row("*", "golive")]
	if r.RunsA != 3 || r.RunsB != 2 || len(d.Excluded) != 2 || d.Rows[d.row("*", "total")].RunsB != 3 {
		t.Fatalf("golive rests on %d+%d runs; excluded %+v", r.RunsA, r.RunsB, d.Excluded)
	}
	if e := d.Excluded[0]; e.Group != "B" || e.Run != filepath.Join(b, "run-3") || strings.Join(e.Rows, ",") != "*/golive,*/total" || !strings.HasPrefix(e.Reason, "goLive failed") {
		t.Errorf("excluded: %+v", e)
	}
	if e := d.Excluded[1]; e.Run != filepath.Join(b, "run-4") || strings.Join(e.Rows, ",") != "*/golive" {
		t.Errorf("excluded: %+v", e)
	}
	// a table and a plot of the group say the same
	md, _, _ := runCLI(t, "table", a)
	if !strings.Contains(md, "not in the table: "+killed+": has entities.csv but no manifest.json") || strings.Contains(md, "¹") {
		t.Errorf("table (the killed load under the table, on no run's row):\n%s", md)
	}
	if md, _, _ := runCLI(t, "table", "--group", a); !strings.Contains(md, "| a¹ ") || !strings.Contains(md, killed+" is not in the table") {
		t.Errorf("table --group (the killed load marks its group's row):\n%s", md)
	}
	out, _, _ := runCLI(t, "plot", "--out", filepath.Join(tmp, "a.svg"), a)
	if !strings.Contains(out, "note: "+killed+" is not plotted") {
		t.Errorf("plot: %s", out)
	}
}

// 4. A gate that names no row is a usage error listing what there is; every gate is
// reported with its outcome; a gate that cannot be judged says so, and
// --require-verdict makes that fail.
func TestGatesNeverPassSilently(t *testing.T) {
	tmp := t.TempDir()
	a := group(t, tmp, 3, 1, synthrun.Spec{Label: "a", Tau: 0.01})
	slow := group(t, tmp, 3, 20, synthrun.Spec{Label: "slow", Tau: 0.01, Effect: 1.15})
	_, stderr, code := runCLI(t, "compare", "--fail-on-regression", "--gate", "product/mean", a, slow)
	if code != 2 || !strings.Contains(stderr, `--gate "product/mean": no such row; names are case-sensitive: did you mean Product/mean?`) || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("wrong case: exit %d %q", code, stderr)
	}
	_, stderr, code = runCLI(t, "compare", "--fail-on-regression", "--gate", "Voucher/mean", a, slow)
	if code != 2 || !strings.Contains(stderr, "COLLECTION one of Product, Category, Stock, Tag or *") {
		t.Fatalf("no such collection: exit %d %q", code, stderr)
	}
	out, _, code := runCLI(t, "compare", "--fail-on-regression", a, slow)
	if code != 4 || !strings.Contains(out, "gate Product/mean: REGRESSION (slower)") || !strings.Contains(out, "gate */ingest: REGRESSION") {
		t.Fatalf("regression: exit %d\n%s", code, out)
	}
	// one run per side: nothing can be judged; said, and fatal only when asked
	one, other := filepath.Join(a, "run-1"), filepath.Join(slow, "run-1")
	out, stderr, code = runCLI(t, "compare", "--fail-on-regression", one, other)
	if code != 0 || !strings.Contains(out, "gate Product/mean: NOT JUDGED (1 run(s) in A, 1 in B: an interval needs at least 2 per side)") ||
		!strings.Contains(stderr, "gates not judged: Product/mean") {
		t.Fatalf("1+1 runs: exit %d\n%s\n%s", code, out, stderr)
	}
	_, stderr, code = runCLI(t, "compare", "--fail-on-regression", "--require-verdict", one, other)
	if code != 3 || !strings.Contains(stderr, "gates not judged: Product/mean") {
		t.Fatalf("--require-verdict: exit %d %s", code, stderr)
	}
	d, _, _ := compareJSON(t, "--gate", "*/golive", one, other)
	if len(d.Gates) != 1 || d.Gates[0].Gate != "*/golive" || d.Gates[0].Judged || d.Gates[0].Reason == "" {
		t.Fatalf("JSON gates: %+v", d.Gates)
	}
	// without gating flags there is no gate section
	if out, _, _ := runCLI(t, "compare", a, slow); strings.Contains(out, "gate ") {
		t.Fatalf("gates shown unasked:\n%s", out)
	}
}

// 5. and 11. Usage errors exit 2 with one line, distinct from failed input (1),
// refusals (3) and regressions (4); the same across commands.
func TestUsageErrors(t *testing.T) {
	tmp := t.TempDir()
	a, b := filepath.Join(testdata, "groups", "v2026.2.0"), filepath.Join(testdata, "groups", "v2026.2.2")
	run := filepath.Join(testdata, "runs", "warmstat-verified")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"compare", "--threshold", "NaN", a, b}, `--threshold "NaN": the noise threshold is a percentage`},
		{[]string{"compare", "--threshold", "Inf", a, b}, `--threshold "+Inf"`},
		{[]string{"compare", "--threshold", "-1", a, b}, `--threshold "-1"`},
		{[]string{"compare", "--threshold", "abc", a, b}, `invalid value "abc" for flag -threshold`},
		{[]string{"compare", "--resamples", "5", "--method", "cluster-bootstrap", a, b}, `--resamples "5"`},
		{[]string{"compare", "--method", "magic", a, b}, `--method: unknown method "magic"`},
		{[]string{"compare", a}, "compare needs two arguments, A and B (got 1)"},
		{[]string{"compare"}, "compare needs two arguments"},
		{[]string{"compare", "--bogus", a, b}, "flag provided but not defined: -bogus (warmstat compare --help)"},
		{[]string{"report"}, "report needs exactly one RUN directory"},
		{[]string{"report", "--format", "xml", run}, `--format: unknown format "xml"`},
		{[]string{"table"}, "table needs at least one RUN or GROUP directory"},
		{[]string{"table", "--format", "xlsx", a}, `unknown format "xlsx"`},
		{[]string{"plot", a}, `Required flag "out" not set (warmstat plot --help)`},
		{[]string{"plot", "--out", filepath.Join(tmp, "x.svg")}, "plot needs at least one RUN or GROUP directory"},
		{[]string{"import", "--out", filepath.Join(tmp, "r")}, `Required flag "java" not set`},
		{[]string{"import", "--java", filepath.Join(testdata, "java", "ok"), "--out", filepath.Join(tmp, "r"), "--server-heap", "0"}, "--server-heap 0: a size must be positive"},
		{[]string{"import", "--java", filepath.Join(testdata, "java", "ok"), "--out", filepath.Join(tmp, "r"), "--machine", "that"}, `--machine "that"`},
	}
	for _, c := range cases {
		stdout, stderr, code := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 || strings.Contains(stderr, "USAGE") || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line containing %q", c.args, code, stdout, stderr, c.want)
		}
	}
	// a valid threshold gives valid JSON
	if d, stderr, code := compareJSON(t, "--threshold", "0", a, b); code != 0 || len(d.Rows) == 0 {
		t.Fatalf("--threshold 0: %d %s", code, stderr)
	}
	// import --server-heap 0 never names warmstat's staging directory
	_, stderr, _ := runCLI(t, "import", "--java", filepath.Join(testdata, "java", "ok"), "--out", filepath.Join(tmp, "r"), "--server-heap", "0")
	if strings.Contains(stderr, ".partial") || strings.Contains(stderr, "manifest.json") {
		t.Fatalf("internal path in %q", stderr)
	}
	if _, err := os.Stat(filepath.Join(tmp, "r")); err == nil {
		t.Fatal("a refused import wrote its output")
	}
}

// 11. warmstat help works, for the tool and for a command.
func TestHelp(t *testing.T) {
	out, stderr, code := runCLI(t, "help")
	if code != 0 || !strings.Contains(out, "compare") || !strings.Contains(out, "Exit codes: 0 ok") || stderr != "" {
		t.Fatalf("warmstat help: exit %d %q %q", code, out, stderr)
	}
	out, _, code = runCLI(t, "help", "compare")
	if code != 0 || !strings.Contains(out, "--fail-on-regression") {
		t.Fatalf("warmstat help compare: exit %d %q", code, out)
	}
	if out, _, code := runCLI(t, "compare", "--help"); code != 0 || !strings.Contains(out, "--require-verdict") {
		t.Fatalf("compare --help: exit %d", code)
	}
}

// 6. An upsert of the largest int64, sums beyond the clocks, a 0 ns load: refused in
// one line naming file, line and field, never a negative mean or a 200 % share.
func TestImpossibleFiguresRefused(t *testing.T) {
	src := filepath.Join(testdata, "runs", "warmstat-verified")
	d := copyDir(t, src)
	csvData, _ := os.ReadFile(filepath.Join(d, runfmt.EntitiesFile))
	lines := strings.SplitAfter(string(csvData), "\n")
	f := strings.Split(strings.TrimSpace(lines[100]), ",")
	f[len(f)-1] = strconv.FormatInt(math.MaxInt64, 10)
	lines[100] = strings.Join(f, ",") + "\n"
	os.WriteFile(filepath.Join(d, runfmt.EntitiesFile), []byte(strings.Join(lines, "")), 0o644)
	out, stderr, code := runCLI(t, "report", d)
	if code != 1 || out != "" || !strings.Contains(stderr, "entities.csv:101: field upsert_ns: 9223372036854775807 ns takes the upserts of") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("overflowing upsert: exit %d %q %q", code, out, stderr)
	}
	for _, c := range []struct{ old, new, want string }{
		{`"load_wall_ns": 3134311088`, `"load_wall_ns": 0`, "field timings.load_wall_ns: 0 ns for a load of 700 entities"},
		{`"upsert_ns": 2961942549`, `"upsert_ns": 6961942549`, "field timings.upsert_ns: the upserts take 6.961942549 s, longer than the load wall-clock"},
		{`"source_read_ns": 154068539`, `"source_read_ns": 3154068539`, "field timings.source_read_ns: the source reads take"},
	} {
		d := copyDir(t, src)
		man, _ := os.ReadFile(filepath.Join(d, runfmt.ManifestFile))
		os.WriteFile(filepath.Join(d, runfmt.ManifestFile), []byte(strings.Replace(string(man), c.old, c.new, 1)), 0o644)
		_, stderr, code := runCLI(t, "report", d)
		if code != 1 || !strings.Contains(stderr, "manifest.json:") || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d %q", c.new, code, stderr)
		}
	}
}

// 7. A file that is not a GC log is refused at import: unknown is not 0.
func TestImportRefusesNonGCLog(t *testing.T) {
	for _, log := range []string{"../../README.md", "/dev/null"} {
		out := filepath.Join(t.TempDir(), "run")
		_, stderr, code := runCLI(t, "import", "--java", filepath.Join(testdata, "java", "ok"), "--out", out, "--writer-gc-log", log)
		if code != 1 || !strings.Contains(stderr, log+": not a JVM GC log") {
			t.Errorf("%s: exit %d %q", log, code, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: a refused import wrote its output", log)
		}
	}
}

// 8. One statistic, one place: a group's row in table --group is the figure compare
// shows for that group, with the log-scale interval of the same per-run figures.
func TestTableGroupAgreesWithCompare(t *testing.T) {
	a, b := filepath.Join(testdata, "groups", "v2026.2.0"), filepath.Join(testdata, "groups", "v2026.2.2")
	out, _, code := runCLI(t, "table", "--group", "--format", "json", "--columns", "build,load", a, b)
	if code != 0 {
		t.Fatal(out)
	}
	var tab struct {
		Rows []struct {
			Values []*float64 `json:"values"`
			CILow  []*float64 `json:"ci_low"`
			CIHigh []*float64 `json:"ci_high"`
		}
	}
	if err := json.Unmarshal([]byte(out), &tab); err != nil {
		t.Fatal(err)
	}
	d, _, _ := compareJSON(t, a, b)
	load := d.Rows[d.row("*", "load_wall")]
	// the interval, computed here from the manifests by hand: exp(mean ± t(0.975, 2)·s/√3)
	var y []float64
	for k := 1; k <= 3; k++ {
		m, err := runfmt.ReadManifest(filepath.Join(a, fmt.Sprintf("run-%d", k), runfmt.ManifestFile))
		if err != nil {
			t.Fatal(err)
		}
		y = append(y, math.Log(float64(m.Timings.LoadWallNs)/1e9))
	}
	mean := (y[0] + y[1] + y[2]) / 3
	ss := 0.0
	for _, v := range y {
		ss += (v - mean) * (v - mean)
	}
	h := 4.302652729911275 * math.Sqrt(ss/2) / math.Sqrt(3)
	row := tab.Rows[0]
	if got := *row.Values[1]; math.Abs(got-*load.A) > 1e-12 || math.Abs(got-math.Exp(mean)) > 1e-9 {
		t.Fatalf("table %v, compare's A %v, geometric mean %v", got, *load.A, math.Exp(mean))
	}
	if math.Abs(*row.CILow[1]-math.Exp(mean-h)) > 1e-9 || math.Abs(*row.CIHigh[1]-math.Exp(mean+h)) > 1e-9 {
		t.Fatalf("interval [%v, %v], want [%v, %v]", *row.CILow[1], *row.CIHigh[1], math.Exp(mean-h), math.Exp(mean+h))
	}
}

// 8. The plots follow --quantiles: the marked percentiles move with the definition.
func TestPlotsFollowQuantiles(t *testing.T) {
	tmp := t.TempDir()
	run := filepath.Join(testdata, "groups", "v2026.2.0", "run-1")
	for _, kind := range []string{"cdf", "timeline"} {
		java, linear := filepath.Join(tmp, kind+"-java.svg"), filepath.Join(tmp, kind+"-linear.svg")
		runCLI(t, "plot", "--kind", kind, "--out", java, run)
		if _, stderr, code := runCLI(t, "plot", "--kind", kind, "--quantiles", "linear", "--out", linear, run); code != 0 {
			t.Fatal(stderr)
		}
		x, _ := os.ReadFile(java)
		y, _ := os.ReadFile(linear)
		if len(x) == 0 || string(x) == string(y) {
			t.Errorf("%s: --quantiles linear draws the same picture as java", kind)
		}
	}
}

// 9. Size arguments are bounded: no panic, no out-of-memory, no half-written file.
func TestPlotSizesBounded(t *testing.T) {
	tmp := t.TempDir()
	a := filepath.Join(testdata, "groups", "v2026.2.0")
	out := filepath.Join(tmp, "p.png")
	os.WriteFile(out, []byte("an earlier picture"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--kind", "timeline", "--block", "-1"}, "--block -1"},
		{[]string{"--width", "100000", "--height", "100000"}, "--width/--height: 100000x100000 px is outside 200x150 to 4096x4096"},
		{[]string{"--width", "0"}, "--width/--height"},
	} {
		_, stderr, code := runCLI(t, append(append([]string{"plot", "--out", out}, c.args...), a)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d %q", c.args, code, stderr)
		}
	}
	if b, _ := os.ReadFile(out); string(b) != "an earlier picture" {
		t.Fatal("a refused plot touched the existing file")
	}
	// a refused comparison leaves the existing file as it was, and no temporary file
	other := filepath.Join(tmp, "b")
	synthrun.Group(tmp, 2, 5, synthrun.Spec{Label: "b", Mutate: func(m *runfmt.Manifest) { v := int64(8 << 30); m.Reader.MaxHeapBytes = &v }})
	if _, _, code := runCLI(t, "plot", "--kind", "compare", "--out", out, a, other); code != 3 {
		t.Fatalf("refusal: exit %d", code)
	}
	ents, _ := os.ReadDir(tmp)
	if b, _ := os.ReadFile(out); string(b) != "an earlier picture" || len(ents) != 2 {
		t.Fatalf("after a refusal: %q, %d entries", b, len(ents))
	}
	if _, stderr, code := runCLI(t, "plot", "--kind", "timeline", "--block", "1", "--out", out, a); code != 0 {
		t.Fatal(stderr)
	}
}

// 11. A byte-order mark before the harness's CSV header and a Latin-1 cs_CZ log both
// import.
func TestImportBOMAndLatin1(t *testing.T) {
	d := copyDir(t, filepath.Join(testdata, "java", "cs_CZ"))
	csvData, _ := os.ReadFile(filepath.Join(d, "per-entity.csv"))
	os.WriteFile(filepath.Join(d, "per-entity.csv"), append([]byte("\xef\xbb\xbf"), csvData...), 0o644)
	log, _ := os.ReadFile(filepath.Join(d, "stdout.log"))
	os.WriteFile(filepath.Join(d, "stdout.log"), []byte(strings.ReplaceAll(string(log), "\u00a0", "\xa0")), 0o644)
	if _, stderr, code := runCLI(t, "import", "--java", d, "--out", filepath.Join(t.TempDir(), "r")); code != 0 {
		t.Fatalf("exit %d %s", code, stderr)
	}
}

// 12. import records the machine; a harness run and a warmstat run on the same
// machine then differ in the loader alone, and the refusal says what differs in what
// is timed.
func TestImportRecordsMachine(t *testing.T) {
	tmp := t.TempDir()
	here, err := evitaserver.ReadMachine()
	if err != nil {
		t.Skip(err)
	}
	imp := filepath.Join(tmp, "java")
	if _, stderr, code := runCLI(t, "import", "--java", filepath.Join(testdata, "java", "ok"), "--out", imp, "--machine", "this",
		"--server-heap", "23g", "--storage-compress", "true", "--cache", "false", "--traffic-recording", "false"); code != 0 {
		t.Fatal(stderr)
	}
	m, err := runfmt.ReadManifest(filepath.Join(imp, runfmt.ManifestFile))
	if err != nil || m.Machine.Cores == nil || *m.Machine.Cores != here.Cores || *m.Machine.MemoryBytes != here.MemoryBytes ||
		m.Machine.CPUModel != here.CPUModel || m.Machine.Kernel != here.Kernel {
		t.Fatalf("machine %+v (this machine %+v) %v", m.Machine, here, err)
	}
	if sd := m.Import.SourceDir; !filepath.IsAbs(sd) || !strings.HasSuffix(sd, filepath.Join("testdata", "java", "ok")) {
		t.Fatalf("import.source_dir %q: want the --java directory made absolute", sd)
	}
	explicit := filepath.Join(tmp, "explicit")
	runCLI(t, "import", "--java", filepath.Join(testdata, "java", "ok"), "--out", explicit, "--machine", "this", "--cores", "64", "--memory", "256g")
	if e, _ := runfmt.ReadManifest(filepath.Join(explicit, runfmt.ManifestFile)); e == nil || *e.Machine.Cores != 64 || *e.Machine.MemoryBytes != 256<<30 {
		t.Fatalf("explicit machine flags must win: %+v", e)
	}
	// a warmstat run of the same catalog under the same conditions on this machine
	ws := filepath.Join(tmp, "warmstat")
	synthrun.Write(filepath.Join(ws, "run-1"), synthrun.Spec{Label: "ws", Seed: 1, Mutate: func(w *runfmt.Manifest) {
		w.Server.MaxHeapBytes, w.Reader.MaxHeapBytes, w.Server.Version = m.Server.MaxHeapBytes, m.Reader.MaxHeapBytes, m.Server.Version
		w.TargetMode, w.Conditions, w.Dataset = m.TargetMode, m.Conditions, m.Dataset
		w.Machine = here.Record() // what a load on this machine records (a real load: TestSpawnModeCommand)
	}})
	d, stderr, code := compareJSON(t, imp, ws)
	if code != 3 || len(d.Mismatches) != 1 || d.Mismatches[0].Field != "loader" {
		t.Fatalf("exit %d, mismatches %+v\n%s", code, d.Mismatches, stderr)
	}
	if !strings.Contains(d.Mismatches[0].Detail, "about 15 µs per Voucher, 270 µs per Product") {
		t.Fatalf("detail: %q", d.Mismatches[0].Detail)
	}
	_, stderr, _ = runCLI(t, "compare", imp, ws)
	if !strings.Contains(stderr, "loader differs: A=java-harness (run 1), B=warmstat (run 1)") || !strings.Contains(stderr, "builds the entity's mutation inside the timed call") {
		t.Fatalf("%s", stderr)
	}
	// without the machine, cores and memory differ too: unknown is not this machine
	unknown := filepath.Join(tmp, "unknown")
	runCLI(t, "import", "--java", filepath.Join(testdata, "java", "ok"), "--out", unknown,
		"--server-heap", "23g", "--storage-compress", "true", "--cache", "false", "--traffic-recording", "false")
	d, _, _ = compareJSON(t, unknown, ws)
	var fields []string
	for _, x := range d.Mismatches {
		fields = append(fields, x.Field)
	}
	if strings.Join(fields, ",") != "loader,cores,cpu,memory-limit" {
		t.Fatalf("mismatches %v", fields)
	}
}

// 13. A CSV table is for machines: one number per cell, units in the header, a
// group's interval ends in columns of their own.
func TestTableCSVIsNumeric(t *testing.T) {
	a, b := filepath.Join(testdata, "groups", "v2026.2.0"), filepath.Join(testdata, "groups", "v2026.2.2")
	out, stderr, code := runCLI(t, "table", "--group", "--format", "csv", "--columns", "build,Product.load,load,golive,total,Product.mean,entities", a, b)
	if code != 0 {
		t.Fatal(stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := strings.Join(recs[0], ",")
	if head != "label,runs,build,Product load (s),Product load 95% low (s),Product load 95% high (s),total load (s),total load 95% low (s),total load 95% high (s),"+
		"goLive (s),goLive 95% low (s),goLive 95% high (s),TOTAL (s),TOTAL 95% low (s),TOTAL 95% high (s),"+
		"Product mean upsert (µs),Product mean upsert 95% low (µs),Product mean upsert 95% high (µs),entities,notes" {
		t.Fatalf("header %s", head)
	}
	for _, rec := range recs[1:] {
		for i := 3; i < len(rec)-1; i++ {
			if _, err := strconv.ParseFloat(rec[i], 64); err != nil {
				t.Errorf("column %q holds %q, not a number", recs[0][i], rec[i])
			}
		}
		if lo, v, hi := rec[4], rec[3], rec[5]; !(atof(lo) < atof(v) && atof(v) < atof(hi)) {
			t.Errorf("interval %s < %s < %s", lo, v, hi)
		}
	}
}

func atof(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

// With prefetch the source reads overlap the upserts: ingest (load - read) has no
// meaning. The report says so instead of printing a number, the default gates judge
// the load wall-clock instead, and a gate on ingest is not judged, with the reason.
func TestPrefetchHasNoIngest(t *testing.T) {
	tmp := t.TempDir()
	prefetch := func(m *runfmt.Manifest) { m.Conditions.Prefetch = true }
	a := group(t, tmp, 3, 1, synthrun.Spec{Label: "a", Tau: 0.01, Mutate: prefetch})
	slow := group(t, tmp, 3, 20, synthrun.Spec{Label: "slow", Tau: 0.01, Effect: 1.15, Mutate: prefetch})
	out, _, code := runCLI(t, "report", filepath.Join(a, "run-1"))
	if code != 0 || !regexp.MustCompile(`ingest \(load - read\) +- +not defined: with prefetch the source reads overlap the upserts`).MatchString(out) ||
		strings.Contains(out, "loop overhead") || strings.Contains(out, "entities/s (ingest)") {
		t.Fatalf("report of a prefetch run:\n%s", out)
	}
	out, _, _ = runCLI(t, "report", "--format", "json", filepath.Join(a, "run-1"))
	if !strings.Contains(out, `"ingest_s": null`) || !strings.Contains(out, `"loop_overhead_s": null`) {
		t.Fatalf("report JSON of a prefetch run:\n%s", out)
	}
	out, _, code = runCLI(t, "compare", "--fail-on-regression", a, slow)
	if code != 4 || !strings.Contains(out, "gate */load_wall: REGRESSION") || strings.Contains(out, "gate */ingest") {
		t.Fatalf("default gates under prefetch: exit %d\n%s", code, out)
	}
	out, _, _ = runCLI(t, "compare", "--fail-on-regression", "--gate", "*/ingest", a, slow)
	if !strings.Contains(out, "gate */ingest: NOT JUDGED (with prefetch the source reads overlap the upserts") {
		t.Fatalf("an ingest gate under prefetch:\n%s", out)
	}
}
