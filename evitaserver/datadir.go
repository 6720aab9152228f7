package evitaserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

func writeMarker(dir string) error {
	return os.WriteFile(filepath.Join(dir, OwnerMarker), []byte("created by warmstat; wiped and reused by warmstat runs\n"), 0o644)
}
