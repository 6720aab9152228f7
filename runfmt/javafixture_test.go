package runfmt

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The committed testdata/java fixtures are exactly what a real JVM prints with the
// harness's format strings (testdata/javagen/HarnessFixture.java): locale grouping,
// decimal commas and HALF_UP rounding come from Java, not from our Go code.
func TestJavaFixturesReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a JDK")
	}
	javac, err := exec.LookPath("javac")
	if err != nil {
		t.Skip("no javac on PATH: .ci/run installs a JDK; cannot re-render the Java fixtures here")
	}
	classes := t.TempDir()
	src := filepath.Join("..", "testdata", "javagen", "HarnessFixture.java")
	if out, err := exec.Command(javac, "-d", classes, src).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	for _, c := range []struct{ dir, scenario, locale, seed string }{
		{"ok", "ok", "en-US", "42"}, {"golive-failed", "golive-failed", "en-US", "42"}, {"unverified", "unverified", "en-US", "42"},
		{"mismatch", "mismatch", "en-US", "42"}, {"capped-embedded", "capped-embedded", "en-US", "42"}, {"cs_CZ", "ok", "cs-CZ", "7"},
	} {
		out := filepath.Join(t.TempDir(), c.dir)
		if b, err := exec.Command("java", "-cp", classes, "HarnessFixture", out, c.scenario, c.locale, c.seed).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", c.dir, err, b)
		}
		for _, f := range []string{"stdout.log", "per-entity.csv"} {
			want, err1 := os.ReadFile(filepath.Join("..", "testdata", "java", c.dir, f))
			got, err2 := os.ReadFile(filepath.Join(out, f))
			if err1 != nil || err2 != nil || string(want) != string(got) {
				t.Errorf("testdata/java/%s/%s differs from what the JVM renders now (%v %v)", c.dir, f, err1, err2)
			}
		}
	}
}
