package evitaserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// OwnerMarker is the file that proves warmstat created a directory. evitaDB treats
// every storage subdirectory as a catalog, so a data directory must start empty; but
// warmstat never wipes a directory it cannot prove is its own.
const OwnerMarker = ".warmstat-owned"

// PrepareDataDir leaves dir empty except for the marker: an absent directory is
// created, an empty one claimed, one carrying the marker wiped. Anything else — a
// file, or a non-empty directory without the marker — is refused and left untouched.
func PrepareDataDir(dir string) error {
	st, err := os.Lstat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		return writeMarker(dir)
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("refusing to use %s as a data directory: it is not a directory", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(ents) == 0 {
		return writeMarker(dir)
	}
	if snaps, _ := filepath.Glob(filepath.Join(dir, "*"+snapshotSuffix)); len(snaps) > 0 {
		return fmt.Errorf("refusing to use %s: it holds a pristine snapshot (%s), which warmstat never writes into or wipes; choose another directory", dir, filepath.Base(snaps[0]))
	}
	if _, err := os.Lstat(filepath.Join(dir, OwnerMarker)); err != nil {
		return fmt.Errorf("refusing to wipe %s: it is not empty and has no %s marker, so warmstat did not create it (choose an empty or new directory)", dir, OwnerMarker)
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return writeMarker(dir)
}

// Overlap refuses two directories of which one is, or lies inside, the other: a work
// or output directory must never reach into a pristine snapshot, nor contain it.
func Overlap(what, dir, other, otherWhat string) error {
	a, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	b, err := filepath.Abs(other)
	if err != nil {
		return err
	}
	if within(a, b) || within(b, a) {
		return fmt.Errorf("%s %s and %s %s overlap: warmstat never writes into a pristine snapshot; choose a directory outside it", what, dir, otherWhat, other)
	}
	return nil
}

func within(dir, parent string) bool {
	rel, err := filepath.Rel(parent, dir)
	return err == nil && (rel == "." || rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}

func writeMarker(dir string) error {
	return os.WriteFile(filepath.Join(dir, OwnerMarker), []byte("created by warmstat; wiped and reused by warmstat runs\n"), 0o644)
}
