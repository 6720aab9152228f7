package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A bad --profile is refused with one line naming the file, line and field, before
// any server starts or any directory is made (an unknown kind used to pass, start the
// seeding server, create the catalog and then panic in the generator).
func TestSeedRefusesBadProfileBeforeAnything(t *testing.T) {
	tmp := t.TempDir()
	printed, _, code := runCLI(t, "seed", "--print-profile")
	if code != 0 {
		t.Fatal("--print-profile failed")
	}
	bad := strings.Replace(printed, `"kind": "text"`, `"kind": "txet"`, 1)
	line := strings.Count(bad[:strings.Index(bad, `"txet"`)], "\n") + 1
	f := filepath.Join(tmp, "profile.json")
	os.WriteFile(f, []byte(bad), 0o644)
	dir := filepath.Join(tmp, "pristine")
	for _, args := range [][]string{
		{"seed", "--profile", f, "--pristine", dir, "--server-jar", "main.go"},
		{"seed", "--profile", f, "--target", "127.0.0.1:1"},
	} {
		_, stderr, code := runCLI(t, args...)
		want := f + ":" + strconv.Itoa(line) + ": collections["
		if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, `unknown kind "txet"`) || strings.Count(stderr, "\n") != 1 {
			t.Fatalf("%v: exit %d, %q (want %s...)", args, code, stderr, want)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the snapshot directory was made: %v", err)
	}
	printedBack := filepath.Join(tmp, "printed.json")
	os.WriteFile(printedBack, []byte(printed), 0o644)
	if out, stderr, code := runCLI(t, "seed", "--profile", printedBack, "--print-profile"); code != 0 || out != printed {
		t.Fatalf("the printed profile does not load back as itself: %d %s", code, stderr)
	}
}
