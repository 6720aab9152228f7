package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/internal/synthrun"
	"github.com/warmstat/warmstat/report"
)

// writeLine writes one run per build of a line whose Product mean steps by -14 % at
// build stepAt (0-based), on a machine that swings.
func writeLine(t *testing.T, dir string, n, stepAt int) []string {
	t.Helper()
	rng := rand.New(rand.NewPCG(21, 22))
	var out []string
	for i := range n {
		effect := 1.0
		if i >= stepAt {
			effect = 0.86
		}
		d := filepath.Join(dir, fmt.Sprintf("c%02d", i+1))
		if _, err := synthrun.Write(d, synthrun.Spec{Label: fmt.Sprintf("c%02d", i+1), Seed: uint64(i + 1), Effect: effect, Tau: 0.004,
			Machine: 0.04 * rng.NormFloat64(), Theta: 2.5, Cost: true}); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// warmstat history, end to end on synthetic runs: added one build at a time, the
// line's one step found where it is, in text and JSON; a run added twice and a damaged
// point refused, naming what; the page published, and opened in a real browser
// (headless Chromium): no console error, and its DOM holds every build's point, the
// change point between the builds the history puts it, and its linked entry.
func TestHistoryCommand(t *testing.T) {
	tmp := t.TempDir()
	hist := filepath.Join(tmp, "hist")
	runs := writeLine(t, filepath.Join(tmp, "runs"), 20, 12)
	for i, r := range runs {
		if _, stderr, code := runCLI(t, "history", "add", hist, r, "--order", fmt.Sprint(i+1), "--ref", "jar:/b/"+filepath.Base(r)+".jar"); code != 0 {
			t.Fatalf("history add %s: %d %s", r, code, stderr)
		}
	}
	out, stderr, code := runCLI(t, "history", hist)
	if code != 0 || !strings.Contains(out, "line 1 of 1: 20 builds, 20 runs") || !strings.Contains(out, "Product mean upsert (the machine's speed set aside") ||
		!strings.Contains(out, "between c12 and c13 (builds 12 and 13)") {
		t.Fatalf("history: %d\n%s\n%s", code, out, stderr)
	}
	js, _, code := runCLI(t, "history", hist, "--format", "json")
	var h report.HistoryJSON
	if err := json.Unmarshal([]byte(js), &h); code != 0 || err != nil || len(h.Lines) != 1 {
		t.Fatalf("history --format json: %d %v", code, err)
	}
	s := h.Lines[0].Series[0]
	if len(s.ChangePoints) != 1 || s.ChangePoints[0].Index != 12 || s.Slope == nil || len(s.Levels) != 2 {
		t.Fatalf("the Product mean's series: %+v", s)
	}
	// refusals
	if _, stderr, code := runCLI(t, "history", "add", hist, runs[3], "--order", "4"); code != 1 || !strings.Contains(stderr, "in the history already") {
		t.Errorf("a run added twice: %d %s", code, stderr)
	}
	if _, stderr, code := runCLI(t, "history", "add", hist, runs[3]); code != 2 || !strings.Contains(stderr, "--evita-home") {
		t.Errorf("a run with no placement: %d %s", code, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(hist, "points", "*", "*.json"))
	b, _ := os.ReadFile(files[0])
	os.WriteFile(files[0], []byte(strings.Replace(string(b), `"label": "`, `"label": 7, "x": "`, 1)), 0o644)
	if _, stderr, code := runCLI(t, "history", hist); code != 1 || !strings.Contains(stderr, files[0]) {
		t.Errorf("a damaged point: %d %s", code, stderr)
	}
	os.WriteFile(files[0], b, 0o644)

	// the page
	site := filepath.Join(tmp, "site")
	if out, stderr, code := runCLI(t, "history", "publish", hist, "--out", site); code != 0 || !strings.Contains(out, "index.html") {
		t.Fatalf("publish: %d %s %s", code, out, stderr)
	}
	if _, stderr, code := runCLI(t, "history", "publish", hist, "--out", site); code != 0 {
		t.Errorf("publishing again into its own site: %d %s", code, stderr)
	}
	foreign := filepath.Join(tmp, "foreign")
	os.MkdirAll(foreign, 0o755)
	os.WriteFile(filepath.Join(foreign, "index.html"), []byte("mine"), 0o644)
	if _, stderr, code := runCLI(t, "history", "publish", hist, "--out", foreign); code != 1 || !strings.Contains(stderr, "did not publish") {
		t.Errorf("publishing over a directory warmstat did not make: %d %s", code, stderr)
	}
	dom, console := browse(t, filepath.Join(site, "index.html"), filepath.Join(tmp, "page.png"))
	if len(console) > 0 {
		t.Errorf("the browser's console: %s", strings.Join(console, "\n"))
	}
	points := regexp.MustCompile(`<circle class="point" data-build="(\d+)"`).FindAllStringSubmatch(dom, -1)
	if len(points) != 4*20 { // four metrics, each build once
		t.Errorf("%d points in the DOM, want 80", len(points))
	}
	if !regexp.MustCompile(`<line class="cp" data-change="1" data-after-build="13"`).MatchString(dom) ||
		!regexp.MustCompile(`<li id="line-1-s1-cp1" data-change="1" data-after-build="13">`).MatchString(dom) ||
		!strings.Contains(dom, `href="#line-1-s1-cp1"`) {
		t.Errorf("the change point is not where the history puts it (after build 13), or not linked to its entry")
	}
	if !strings.Contains(dom, `role="img"`) || !strings.Contains(dom, "<desc") || !strings.Contains(dom, "Change point 1 between c12 and c13") {
		t.Error("the charts have no text alternative naming the change point")
	}
}

// browse opens page in headless Chromium: its DOM once loaded, and what its console
// said at the level of a warning or worse. A screenshot goes to png. Without a browser
// the test is skipped, unless WARMSTAT_REQUIRE_BROWSER=1 (CI installs Debian's chromium).
func browse(t *testing.T, page, png string) (string, []string) {
	t.Helper()
	bin := ""
	for _, c := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(c); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		if os.Getenv("WARMSTAT_REQUIRE_BROWSER") == "1" {
			t.Fatal("no Chromium on PATH (WARMSTAT_REQUIRE_BROWSER=1): apt-get install chromium")
		}
		t.Skip("no Chromium on PATH: apt-get install chromium")
	}
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0", "--window-size=1200,2400"}
	url := "file://" + page
	cmd := exec.Command(bin, append(flags, "--dump-dom", url)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v\n%s", err, stderr.String())
	}
	if out, err := exec.Command(bin, append(flags, "--screenshot="+png, url)...).CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, out)
	}
	if st, err := os.Stat(png); err != nil || st.Size() < 10_000 {
		t.Errorf("the screenshot: %v", err)
	}
	var console []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, "CONSOLE") || strings.Contains(l, "Uncaught") {
			console = append(console, l)
		}
	}
	return string(dom), console
}

// What history add refuses so that no point stands under the wrong build or twice: one
// order for runs of two builds, an order beside a checkout, a negative order, two builds
// at one order, one build at two, a run whose files were rewritten (its run id and start are the same),
// a history holding one run twice (a merge of two copies), a bad significance, publish
// without a site; and two adds making one new history at once both land.
func TestHistoryAddRefusals(t *testing.T) {
	tmp := t.TempDir()
	runs := writeLine(t, filepath.Join(tmp, "runs"), 4, 2)
	hist := filepath.Join(tmp, "hist")
	series := filepath.Join(tmp, "series")
	for side, r := range map[string]string{"A": runs[0], "B": runs[3]} {
		if err := os.CopyFS(filepath.Join(series, side, "run-1"), os.DirFS(r)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{series, "--order", "1"}, 2, "the runs are of 2 builds (c01, c04)"},
		{[]string{runs[0], "--order", "1", "--evita-home", tmp}, 2, "give one"},
		{[]string{runs[0], "--order", "-3"}, 2, "0 or more"},
		{[]string{runs[0], "--evita-home", filepath.Join(tmp, "nope")}, 2, "--evita-home: "},
	} {
		if _, stderr, code := runCLI(t, append([]string{"history", "add", hist}, c.args...)...); code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("history add %v: %d %s, want %d %q", c.args, code, stderr, c.code, c.want)
		}
	}
	if _, err := os.Stat(hist); err == nil {
		t.Fatal("a refused add made the history")
	}
	if _, stderr, code := runCLI(t, "history", "add", hist, runs[0], "--order", "1"); code != 0 {
		t.Fatal(stderr)
	}
	if _, stderr, code := runCLI(t, "history", "add", hist, runs[1], "--order", "1"); code != 1 || !strings.Contains(stderr, "two builds at one place") {
		t.Errorf("a second build at order 1: %d %s", code, stderr)
	}
	// another run of the first build, at another order
	again := filepath.Join(tmp, "c01-again")
	if _, err := synthrun.Write(again, synthrun.Spec{Label: "c01", Seed: 99, Effect: 1, Tau: 0.004, Theta: 2.5, Cost: true}); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runCLI(t, "history", "add", hist, again, "--order", "2"); code != 1 || !strings.Contains(stderr, "at order 1 already") || !strings.Contains(stderr, "one build at two places") {
		t.Errorf("the first build at order 2 too: %d %s", code, stderr)
	}
	// the same run, its manifest rewritten (re-indented): the same run id and start
	copied := filepath.Join(tmp, "copy")
	os.MkdirAll(copied, 0o755)
	var m map[string]any
	b, _ := os.ReadFile(filepath.Join(runs[0], "manifest.json"))
	json.Unmarshal(b, &m)
	b2, _ := json.MarshalIndent(m, "", "    ")
	os.WriteFile(filepath.Join(copied, "manifest.json"), b2, 0o644)
	e, _ := os.ReadFile(filepath.Join(runs[0], "entities.csv"))
	os.WriteFile(filepath.Join(copied, "entities.csv"), e, 0o644)
	if _, stderr, code := runCLI(t, "history", "add", hist, copied, "--order", "1"); code != 1 || !strings.Contains(stderr, "its files rewritten") {
		t.Errorf("a rewritten copy: %d %s", code, stderr)
	}
	// a merge of two copies of the history that each added the run
	files, _ := filepath.Glob(filepath.Join(hist, "points", "*", "*.json"))
	dup := strings.Replace(files[0], ".json", "x.json", 1)
	b, _ = os.ReadFile(files[0])
	os.WriteFile(dup, b, 0o644)
	if _, stderr, code := runCLI(t, "history", hist); code != 3 || !strings.Contains(stderr, "is held by") || !strings.Contains(stderr, files[0]) {
		t.Errorf("a run held twice: %d %s", code, stderr)
	}
	os.Remove(dup)
	if _, stderr, code := runCLI(t, "history", hist, "--cp-alpha", "0"); code != 2 || !strings.Contains(stderr, "--cp-alpha") {
		t.Errorf("--cp-alpha 0: %d %s", code, stderr)
	}
	if _, stderr, code := runCLI(t, "history", "publish", hist); code != 2 || strings.Count(stderr, "\n") > 2 {
		t.Errorf("publish without --out: %d %s", code, stderr)
	}
	// two adds making one new history at once
	for trial := range 5 {
		h := filepath.Join(tmp, fmt.Sprintf("race%d", trial))
		errs := make(chan string, 2)
		for i := range 2 {
			go func() {
				_, stderr, code := runCLI(t, "history", "add", h, runs[i], "--order", fmt.Sprint(i+1))
				if code != 0 {
					errs <- stderr
					return
				}
				errs <- ""
			}()
		}
		for range 2 {
			if e := <-errs; e != "" {
				t.Fatalf("two adds making one history: %s", e)
			}
		}
		if files, _ := filepath.Glob(filepath.Join(h, "points", "*", "*.json")); len(files) != 2 {
			t.Fatalf("%d points after two adds at once", len(files))
		}
	}
}
