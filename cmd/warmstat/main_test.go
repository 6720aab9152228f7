package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/internal/synthrun"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/golden")

const testdata = "../../testdata"

func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"warmstat"}, args...), &out, &errb)
	return out.String(), errb.String(), code
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	// the import records its source directory absolute; golden files hold the
	// repository-relative path, whatever the checkout's location
	if abs, err := filepath.Abs(testdata); err == nil {
		got = strings.ReplaceAll(got, abs, testdata)
	}
	p := filepath.Join(testdata, "golden", name)
	if *update {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/warmstat -update)", err)
	}
	if string(want) != got {
		t.Fatalf("%s differs from golden (go test ./cmd/warmstat -update to accept):\n--- got\n%s", name, got)
	}
}

var javaScenarios = []string{"ok", "golive-failed", "unverified", "mismatch", "capped-embedded", "cs_CZ"}

// Each Java-harness fixture imports (its CSV reproducing every printed figure) and
// reports identically to the golden files in all three formats.
func TestImportAndReportGolden(t *testing.T) {
	for _, sc := range javaScenarios {
		t.Run(sc, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), sc)
			stdout, stderr, code := runCLI(t, "import", "--java", filepath.Join(testdata, "java", sc), "--out", out, "--server-heap", "23g", "--build", "v2026.2.0")
			if code != 0 {
				t.Fatalf("import exit %d: %s", code, stderr)
			}
			if !strings.Contains(stdout, "imported") {
				t.Fatalf("import said %q", stdout)
			}
			for _, f := range []string{"text", "json", "md"} {
				stdout, stderr, code := runCLI(t, "report", "--format", f, out)
				if code != 0 {
					t.Fatalf("report exit %d: %s", code, stderr)
				}
				golden(t, "java-"+sc+"."+f, stdout)
			}
		})
	}
	for _, name := range []string{"warmstat-verified", "warmstat-aborted"} {
		for _, f := range []string{"text", "json", "md"} {
			stdout, stderr, code := runCLI(t, "report", "--format", f, filepath.Join(testdata, "runs", name))
			if code != 0 {
				t.Fatalf("report %s exit %d: %s", name, code, stderr)
			}
			golden(t, name+"."+f, stdout)
		}
	}
}

// What a reader must see first, in every scenario.
func TestReportFlags(t *testing.T) {
	imp := func(sc string) string {
		out := filepath.Join(t.TempDir(), sc)
		if _, e, c := runCLI(t, "import", "--java", filepath.Join(testdata, "java", sc), "--out", out); c != 0 {
			t.Fatal(e)
		}
		return out
	}
	text, _, _ := runCLI(t, "report", imp("golive-failed"))
	if !strings.HasPrefix(text, "!! goLive FAILED client-side") || !strings.Contains(text, "FAILED @ 15.0 s") || strings.Contains(text, "80.0 s") {
		t.Errorf("failed goLive: TOTAL must be absent and the failure first:\n%s", text)
	}
	text, _, _ = runCLI(t, "report", imp("unverified"))
	if !strings.HasPrefix(text, "!! UNVERIFIED RUN") || !strings.Contains(text, "exit code 2") {
		t.Errorf("unverified:\n%s", text)
	}
	text, _, _ = runCLI(t, "report", imp("mismatch"))
	if !strings.HasPrefix(text, "!! COUNT MISMATCH: Product expected 1,000, target 993") {
		t.Errorf("mismatch:\n%s", text)
	}
	text, _, _ = runCLI(t, "report", filepath.Join(testdata, "runs", "warmstat-aborted"))
	if !strings.HasPrefix(text, "!! ABORTED RUN") {
		t.Errorf("aborted:\n%s", text)
	}
	text, _, _ = runCLI(t, "report", imp("ok"))
	if strings.HasPrefix(text, "!!") && !strings.HasPrefix(text, "!! server heap unknown") {
		t.Errorf("a clean run got a warning:\n%s", text)
	}
}

func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	ents, _ := os.ReadDir(from)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(to, e.Name()), b, 0o644)
	}
	return to
}

func TestImportRefusals(t *testing.T) {
	ok := filepath.Join(testdata, "java", "ok")
	check := func(name, dir, want string) {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			_, stderr, code := runCLI(t, "import", "--java", dir, "--out", out)
			if code != 1 || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("exit %d, stderr %q; want exit 1 and one line containing %q", code, stderr, want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Fatal("a refused import left an output directory")
			}
			ents, _ := os.ReadDir(filepath.Dir(out))
			if len(ents) != 0 {
				t.Fatalf("staging leftovers: %v", ents)
			}
		})
	}
	// CSV one row short of "entities upserted"
	d := copyDir(t, ok)
	csv, _ := os.ReadFile(filepath.Join(d, "per-entity.csv"))
	lines := strings.SplitAfter(string(csv), "\n")
	os.WriteFile(filepath.Join(d, "per-entity.csv"), []byte(strings.Join(lines[:len(lines)-2], "")), 0o644)
	check("short csv", d, "1248 rows, but")
	// the CSV of another run: same rows, one Product latency 0.5 ms longer (the
	// upsert sum stays within the report's 0.1 s rounding, the printed mean does not)
	d = copyDir(t, ok)
	body := strings.SplitAfter(string(csv), "\n")
	for i, l := range body {
		if strings.HasPrefix(l, "Product,") {
			f := strings.Split(strings.TrimSpace(l), ",")
			ns, _ := strconv.ParseInt(f[2], 10, 64)
			body[i] = f[0] + "," + f[1] + "," + strconv.FormatInt(ns+500_000, 10) + "\n"
			break
		}
	}
	os.WriteFile(filepath.Join(d, "per-entity.csv"), []byte(strings.Join(body, "")), 0o644)
	check("csv of another run", d, "printed by the harness, but the CSV gives")
	// a log with no report block
	d = copyDir(t, ok)
	os.WriteFile(filepath.Join(d, "stdout.log"), []byte("10:00:00.000 INFO starting\nException in thread \"main\" boom\n"), 0o644)
	check("no report", d, "no report block")
	// a truncated CSV line
	d = copyDir(t, ok)
	os.WriteFile(filepath.Join(d, "per-entity.csv"), csv[:len(csv)-3], 0o644)
	check("truncated csv", d, "truncated: last line has no line end")
	// "Load verified" printed over a count table that does not prove it: a target short of
	// its source, or a loaded collection missing from the table (both imported as verified before)
	log, _ := os.ReadFile(filepath.Join(ok, "stdout.log"))
	d = copyDir(t, ok)
	os.WriteFile(filepath.Join(d, "stdout.log"), []byte(strings.Replace(string(log),
		"Product                        1000         1000         1000", "Product                        1000          999         1000", 1)), 0o644)
	check("verified short target", d, "verified, but 1 collection(s) have target != expected")
	d = copyDir(t, ok)
	os.WriteFile(filepath.Join(d, "stdout.log"), []byte(strings.Replace(string(log),
		"Category                        200          200          200\n", "", 1)), 0o644)
	check("verified without a collection", d, "no count for Category, which the run loaded")
	// a bad heap flag
	_, stderr, code := runCLI(t, "import", "--java", ok, "--out", filepath.Join(t.TempDir(), "r"), "--server-heap", "lots")
	if code != 2 || !strings.Contains(stderr, "--server-heap") {
		t.Errorf("bad heap: %d %q", code, stderr)
	}
}

func TestImportNeverOverwrites(t *testing.T) {
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "notes.txt"), []byte("keep"), 0o644)
	_, stderr, code := runCLI(t, "import", "--java", filepath.Join(testdata, "java", "ok"), "--out", out)
	if code != 1 || !strings.Contains(stderr, "not empty") {
		t.Fatalf("exit %d %q", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "notes.txt")); string(b) != "keep" {
		t.Fatal("foreign file touched")
	}
}

func TestReportErrors(t *testing.T) {
	_, stderr, code := runCLI(t, "report", t.TempDir())
	if code != 1 || !strings.Contains(stderr, "not a run directory") {
		t.Errorf("%d %q", code, stderr)
	}
	_, stderr, code = runCLI(t, "report", "--format", "xml", filepath.Join(testdata, "runs", "warmstat-verified"))
	if code != 2 || !strings.Contains(stderr, `unknown format "xml"`) {
		t.Errorf("%d %q", code, stderr)
	}
	// a run whose CSV lost rows since it was written
	d := copyDir(t, filepath.Join(testdata, "runs", "warmstat-verified"))
	csv, _ := os.ReadFile(filepath.Join(d, "entities.csv"))
	os.WriteFile(filepath.Join(d, "entities.csv"), csv[:len(csv)/2+1], 0o644)
	_, stderr, code = runCLI(t, "report", d)
	if code != 1 || !strings.Contains(stderr, "entities.csv:") {
		t.Errorf("%d %q", code, stderr)
	}
	_, stderr, code = runCLI(t, "report", "--quantiles", "median-of-means", filepath.Join(testdata, "runs", "warmstat-verified"))
	if code != 2 || !strings.Contains(stderr, "unknown quantile method") {
		t.Errorf("%d %q", code, stderr)
	}
}

// --writer-warm-up outside 0..5 is a usage error in ab, before any server starts (load
// shares the check: writerWarmUp).
func TestWriterWarmUpIsChecked(t *testing.T) {
	tmp := t.TempDir()
	_, stderr, code := runCLI(t, "ab", "--pristine", tmp, "--catalog", "shop", "--a", "2026.2.3", "--b", "2026.2.3", "--out", filepath.Join(tmp, "s"),
		"--server-heap", "1g", "--reader-heap", "1g", "--writer-warm-up", "9")
	if code != 2 || !strings.Contains(stderr, "--writer-warm-up 9: 0 to 5 loads") {
		t.Errorf("ab: exit %d %q", code, stderr)
	}
}

// A series of a snapshot that is not there is refused naming the flag, before its
// directory is made.
func TestABWithoutItsSnapshotIsRefused(t *testing.T) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "s")
	_, stderr, code := runCLI(t, "ab", "--pristine", filepath.Join(tmp, "nowhere"), "--catalog", "shop", "--a", "2026.2.3", "--b", "2026.2.3",
		"--out", out, "--server-heap", "1g", "--reader-heap", "1g")
	if code != 2 || !strings.Contains(stderr, `--pristine `+filepath.Join(tmp, "nowhere")+`: no catalog directory "shop" there`) {
		t.Fatalf("exit %d %q", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("the refused series made its directory: %v", err)
	}
}

// A size without its unit is a usage error for every size flag, before any server
// starts: "--server-heap 1.5" means 1.5 GiB to a person and 1 byte to a parser.
func TestSizesNeedTheirUnit(t *testing.T) {
	tmp := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"ab", "--pristine", tmp, "--catalog", "shop", "--a", "2026.2.3", "--b", "2026.2.3", "--out", filepath.Join(tmp, "s"),
			"--server-heap", "1.5", "--reader-heap", "1g"}, 2, "--server-heap 1.5: give the size with its unit (k, m, g or t: 1536m, 1.5g)"},
		{[]string{"load", "--pristine", tmp, "--catalog", "shop", "--evita-version", "2026.2.3", "--out", filepath.Join(tmp, "r"),
			"--build", "x", "--server-heap", "2g", "--reader-heap", "1536"}, 64, "--reader-heap 1536: give the size with its unit"},
		{[]string{"seed", "--pristine", filepath.Join(tmp, "p"), "--evita-version", "2026.2.3", "--heap", "2"}, 2, "--heap 2: give the size with its unit"},
		// a size no JVM heap or machine has is not taken either
		{[]string{"import", "--java", filepath.Join(testdata, "java", "ok"), "--out", filepath.Join(tmp, "i"), "--server-heap", "1b"}, 2,
			"--server-heap 1b: below 2m, the smallest heap a JVM takes"},
	} {
		_, stderr, code := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d %q, want %d %q", c.args[0], code, stderr, c.code, c.want)
		}
	}
}

// warmstat completion prints each shell's script, and the script's questions are
// answered: the commands, and a command's flags.
func TestShellCompletion(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		out, stderr, code := runCLI(t, "completion", sh)
		if code != 0 || !strings.Contains(out, "warmstat") || len(out) < 200 {
			t.Errorf("completion %s: exit %d %q\n%s", sh, code, stderr, out)
		}
	}
	// the root's answer reads os.Args: the real binary
	if out, err := exec.Command(warmstatBinary(t), "--generate-shell-completion").Output(); err != nil || !strings.Contains(string(out), "combine:") ||
		!strings.Contains(string(out), "bisect:") {
		t.Errorf("the commands: %v\n%s", err, out)
	}
	if out, _, code := runCLI(t, "ab", "--pa", "--generate-shell-completion"); code != 0 || !strings.HasPrefix(out, "--pairs:") {
		t.Errorf("ab's flags: exit %d\n%s", code, out)
	}
}

// A warmstat built without the Makefile's stamp (go build, go install) names its
// version from what the Go toolchain recorded, never a bare "dev" for a build of a
// checkout; the Makefile's stamp wins.
func TestVersionWithoutTheMakefile(t *testing.T) {
	if buildVersion("v9.9.9-stamped") != "v9.9.9-stamped" {
		t.Fatal("the stamp is not the version")
	}
	bin := filepath.Join(t.TempDir(), "warmstat")
	if out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || !regexp.MustCompile(`^warmstat version v\d+\.\d+\.\d+-\S*[0-9a-f]{12}`).Match(out) {
		t.Fatalf("--version: %v %q", err, out)
	}
}

// A command run from inside another (ab's compare and table, for --format md|json)
// writes where it is told, not to its caller's writers, which urfave/cli would find in
// the context it is given.
func TestNestedRunWritesWhereItIsTold(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := synthrun.Write(dir, synthrun.Spec{Label: "nested"}); err != nil {
		t.Fatal(err)
	}
	var outer, outerErr, inner, innerErr bytes.Buffer
	code := -1
	caller := &cli.Command{Name: "caller", Writer: &outer, ErrWriter: &outerErr, Action: func(ctx context.Context, _ *cli.Command) error {
		code = run(ctx, []string{"warmstat", "table", dir}, &inner, &innerErr)
		return nil
	}}
	if err := caller.Run(context.Background(), []string{"caller"}); err != nil {
		t.Fatal(err)
	}
	if code != 0 || !strings.Contains(inner.String(), "| nested") || outer.Len() != 0 || outerErr.Len() != 0 {
		t.Fatalf("exit %d; the nested table wrote %q where told, %q to its caller's stdout, %q to its stderr", code, inner.String(), outer.String(), outerErr.String())
	}
}

// A value flag given twice is refused, never "the last one wins"; a repeatable flag
// repeats.
func TestValueFlagsOnlyOnce(t *testing.T) {
	for _, args := range [][]string{
		{"table", "--format", "md", "--format", "csv", "x"},
		{"ab", "--pristine", "/nonexistent", "--catalog", "shop", "--a", "2026.2.2", "--a", "2026.2.3", "--b", "2026.2.3", "--out", "/nonexistent/s"},
		{"compare", "--threshold", "2", "--threshold", "3", "a", "b"},
	} {
		if _, stderr, code := runCLI(t, args...); code != 2 || !strings.Contains(stderr, "can't duplicate this flag") {
			t.Errorf("%v: exit %d %q", args, code, stderr)
		}
	}
	if _, stderr, _ := runCLI(t, "ab", "--writer-jvm-option", "-Xss2m", "--writer-jvm-option", "-Xss4m"); strings.Contains(stderr, "duplicate") {
		t.Errorf("a repeatable flag refused: %q", stderr)
	}
}

// A repeatable flag's value is taken whole, commas and all: a JVM option such as an
// agent's is not cut at its commas into options that are not.
func TestRepeatableFlagsKeepTheirCommas(t *testing.T) {
	app := newApp(io.Discard, io.Discard)
	var got []string
	for _, c := range app.Commands {
		if c.Name == "ab" {
			c.Action = func(_ context.Context, cmd *cli.Command) error {
				got = cmd.StringSlice("writer-jvm-option")
				return nil
			}
		}
	}
	agent := "-agentpath:/x/lib.so=start,event=cpu,interval=1"
	if err := app.Run(context.Background(), []string{"warmstat", "ab", "--a", "x", "--b", "y", "--out", "o",
		"--writer-jvm-option", agent, "--writer-jvm-option", "-Xss2m"}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{agent, "-Xss2m"}) {
		t.Fatalf("--writer-jvm-option read as %q", got)
	}
}
