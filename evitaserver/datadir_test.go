package evitaserver

import (
	"os"
	"os/exec"
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

// The demo's directory follows the same ownership rule as the loader's work directory:
// scripts/owned-dir.sh (what make demo-bundled runs instead of rm -rf) must reach the
// same outcome as PrepareDataDir in every case, and the Makefile must use it.
func TestOwnedDirScriptFollowsTheRule(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("..", "scripts", "owned-dir.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	cases := map[string]func(d string){
		"absent": func(d string) {},
		"empty":  func(d string) { os.Mkdir(d, 0o755) },
		"ours": func(d string) {
			os.MkdirAll(filepath.Join(d, "old", "x"), 0o755)
			os.WriteFile(filepath.Join(d, OwnerMarker), []byte("m"), 0o644)
			os.WriteFile(filepath.Join(d, ".hidden"), []byte("h"), 0o644)
		},
		"foreign": func(d string) {
			os.MkdirAll(d, 0o755)
			os.WriteFile(filepath.Join(d, "thesis.tex"), []byte("precious"), 0o644)
		},
		"file":    func(d string) { os.WriteFile(d, []byte("x"), 0o644) },
		"symlink": func(d string) { os.Symlink(os.TempDir(), d) },
	}
	listing := func(d string) string {
		var names []string
		filepath.Walk(d, func(p string, info os.FileInfo, err error) error {
			if err == nil {
				rel, _ := filepath.Rel(d, p)
				names = append(names, rel)
			}
			return nil
		})
		return strings.Join(names, " ")
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			goDir, shDir := filepath.Join(t.TempDir(), "d"), filepath.Join(t.TempDir(), "d")
			setup(goDir)
			setup(shDir)
			goErr := PrepareDataDir(goDir)
			out, shErr := exec.Command("bash", script, shDir).CombinedOutput()
			if (goErr == nil) != (shErr == nil) {
				t.Fatalf("PrepareDataDir: %v; owned-dir.sh: %v %s", goErr, shErr, out)
			}
			if g, s := listing(goDir), listing(shDir); g != s {
				t.Fatalf("after PrepareDataDir: %q, after owned-dir.sh: %q", g, s)
			}
			if goErr != nil && !strings.Contains(string(out), "refusing") {
				t.Fatalf("the script must say why: %s", out)
			}
		})
	}
	mk, err := os.ReadFile(filepath.Join("..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	_, recipe, _ := strings.Cut(string(mk), "\ndemo-bundled:")
	recipe, _, _ = strings.Cut(recipe, "\n\n")
	if !strings.Contains(recipe, "scripts/owned-dir.sh \"$(DEMO_DIR)\"") || strings.Contains(recipe, "rm -rf") {
		t.Fatalf("make demo-bundled must claim DEMO_DIR through scripts/owned-dir.sh, never rm -rf it:%s", recipe)
	}
}

// A finished snapshot is sealed: no run wipes it, re-seeds it or writes inside it (a
// seeded directory used as --work was emptied before).
func TestSnapshotIsNeverReused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pristine")
	if err := PrepareDataDir(dir); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "shop"), 0o755)
	os.WriteFile(filepath.Join(dir, "shop", "data"), []byte("x"), 0o644)
	if err := WriteSnapshot(dir, &Snapshot{Catalog: "shop"}); err != nil {
		t.Fatal(err)
	}
	if err := PrepareDataDir(dir); err == nil || !strings.Contains(err.Error(), "holds a pristine snapshot (shop.snapshot.json)") {
		t.Fatalf("a snapshot directory, even still marked, was accepted: %v", err)
	}
	if err := Seal(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, OwnerMarker)); !os.IsNotExist(err) {
		t.Fatal("the sealed snapshot still carries the owner marker")
	}
	if err := PrepareDataDir(dir); err == nil {
		t.Fatal("a sealed snapshot was accepted as a data directory")
	}
	if _, err := os.Stat(filepath.Join(dir, "shop", "data")); err != nil {
		t.Fatal("the snapshot was touched")
	}
	for _, c := range []struct {
		other string
		bad   bool
	}{{dir, true}, {filepath.Join(dir, "work"), true}, {filepath.Dir(dir), true}, {dir + ".work", false}, {filepath.Join(filepath.Dir(dir), "runs"), false}} {
		err := Overlap("the work directory", c.other, dir, "the pristine snapshot")
		if (err != nil) != c.bad {
			t.Errorf("%s against %s: %v", c.other, dir, err)
		}
	}
}
