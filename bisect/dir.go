package bisect

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// DirUsable refuses a bisect directory warmstat would not own: one inside the checkout
// root (which a bisect only reads), or an existing directory with files and no bisect
// in it (someone else's). The error starts with the directory.
func DirUsable(dir, root string) error {
	if rel, err := filepath.Rel(root, dir); err == nil && filepath.IsLocal(rel) || dir == root {
		return fmt.Errorf("%s is inside the checkout %s, which a bisect only reads: give a directory outside it", dir, root)
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if len(entries) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, File)); err != nil {
		return fmt.Errorf("%s holds files and no %s: not a bisect warmstat started; give a new or empty directory", dir, File)
	}
	return nil
}

// Writable makes dir if needed and proves a file can be written in it (a build cache
// that cannot take a build is refused before anything is built).
func Writable(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".writable-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}
