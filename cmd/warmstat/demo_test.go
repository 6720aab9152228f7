package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/internal/evitatest"
)

// make demo's live script exits 69 (EX_UNAVAILABLE) only when it has no servers to run
// (a release that cannot be fetched), and make demo then runs the bundled demo; a
// failure of the live demo itself (here: a server jar that is not there) is the demo's
// failure, whatever its exit code, never taken for "no servers".
func TestDemoTellsNoServersFromAFailure(t *testing.T) {
	older, _ := evitatest.TwoReleases(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	run := func(env []string, name string, args ...string) (string, int) {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = root, append(os.Environ(), append(env, "DEMO_DIR="+filepath.Join(t.TempDir(), "demo"))...)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	if out, code := run([]string{"EVITA_A=0.0.1-none", "EVITA_REPO=", "WARMSTAT_CACHE=" + t.TempDir()}, "./scripts/demo-live.sh"); code != 69 {
		t.Fatalf("no release to fetch: exit %d\n%s", code, out)
	}
	out, code := run([]string{"EVITA_A=" + older.Ref, "SERVER_JAR_B=" + filepath.Join(t.TempDir(), "missing.jar")}, "make", "--no-print-directory", "demo")
	if code == 0 || strings.Contains(out, "bundled data") {
		t.Fatalf("a failing live demo: exit %d\n%s", code, out)
	}
}
