package seed

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A workload file is never written over, nor into a directory that is missing; a new
// file in an existing directory is fine.
func TestCheckNewWorkload(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "old.wsw")
	if err := os.WriteFile(existing, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckNewWorkload(filepath.Join(dir, "new.wsw")); err != nil {
		t.Fatalf("a new file refused: %v", err)
	}
	for path, want := range map[string]string{
		existing:                               "exists: a workload file is never overwritten",
		filepath.Join(dir, "missing", "x.wsw"): "its directory does not exist",
		filepath.Join(existing, "x.wsw"):       "its directory does not exist", // a file is no directory
	} {
		if err := CheckNewWorkload(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want it named with %q", path, err, want)
		}
	}
}
