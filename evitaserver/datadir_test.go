package evitaserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPrepareDataDir(t *testing.T) {
	root := t.TempDir()
	marker := func(d string) bool { _, err := os.Stat(filepath.Join(d, OwnerMarker)); return err == nil }

	fresh := filepath.Join(root, "a", "data")
	if err := PrepareDataDir(fresh); err != nil || !marker(fresh) {
		t.Fatalf("absent: %v", err)
	}
	// ours: wiped (leftover catalogs are impossible), marker kept
	os.MkdirAll(filepath.Join(fresh, "oldcatalog", "x"), 0o755)
	os.WriteFile(filepath.Join(fresh, "oldcatalog", "x", "f"), []byte("old"), 0o644)
	if err := PrepareDataDir(fresh); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(fresh); len(ents) != 1 || ents[0].Name() != OwnerMarker {
		t.Fatalf("not wiped: %v", ents)
	}
	empty := filepath.Join(root, "empty")
	os.Mkdir(empty, 0o755)
	if err := PrepareDataDir(empty); err != nil || !marker(empty) {
		t.Fatalf("empty: %v", err)
	}
	// foreign: refused, untouched
	foreign := filepath.Join(root, "home")
	os.MkdirAll(foreign, 0o755)
	os.WriteFile(filepath.Join(foreign, "thesis.tex"), []byte("precious"), 0o644)
	err := PrepareDataDir(foreign)
	if err == nil || !strings.Contains(err.Error(), "refusing to wipe") {
		t.Fatalf("foreign: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(foreign, "thesis.tex")); string(b) != "precious" || marker(foreign) {
		t.Fatal("foreign directory was touched")
	}
	file := filepath.Join(root, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	if err := PrepareDataDir(file); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("file: %v", err)
	}
}

func TestCopyTreeAndChecksum(t *testing.T) {
	src := filepath.Join(t.TempDir(), "pristine", "shop")
	os.MkdirAll(filepath.Join(src, "a", "b"), 0o755)
	os.WriteFile(filepath.Join(src, "a", "b", "x.bin"), []byte("data"), 0o644)
	os.WriteFile(filepath.Join(src, "y"), []byte("more"), 0o644)
	before, err := Checksum(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "work", "shop")
	if err := CopyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	if got, _ := Checksum(dst); got != before {
		t.Fatal("copy differs from the original")
	}
	os.WriteFile(filepath.Join(dst, "y"), []byte("changed"), 0o644) // writing the copy ...
	if after, _ := Checksum(src); after != before {
		t.Fatal("... must not touch the pristine snapshot")
	}
	if got, _ := Checksum(dst); got == before {
		t.Fatal("checksum must see a changed file")
	}
	if err := CopyTree(src, dst); err == nil {
		t.Fatal("copying over existing files must fail, not overwrite")
	}
}
