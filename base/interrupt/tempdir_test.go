package interrupt

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// The directory exists while the work runs, a stop at once would find it, and it is gone
// afterwards, whatever the work returned.
func TestWithTempDir(t *testing.T) {
	parent := t.TempDir()
	failed := errors.New("work failed")
	var seen string
	err := WithTempDir(parent, ".work-*", func(dir string) error {
		seen = dir
		if filepath.Dir(dir) != parent {
			t.Errorf("%s is not in %s", dir, parent)
		}
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, ok := RemoveOnStop.Load(dir); !ok {
			t.Error("a stop at once would not remove the directory")
		}
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("err = %v, want the work's", err)
	}
	if _, err := os.Stat(seen); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s left behind (%v)", seen, err)
	}
	if _, ok := RemoveOnStop.Load(seen); ok {
		t.Fatal("a removed directory is still registered for a stop")
	}
}
