package staging

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A staging file made by the pattern is found as a leftover of its path, and only of
// its path: not of a sibling whose name it starts with, not by glob syntax in a name.
func TestLeftoversFindWhatThePatternMade(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"run", "run[1]", "a*b"} {
		path := filepath.Join(dir, name)
		f, err := os.CreateTemp(dir, Pattern(path))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		d, err := os.MkdirTemp(dir, Pattern(path))
		if err != nil {
			t.Fatal(err)
		}
		got := Leftovers(path)
		want := []string{f.Name(), d}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: leftovers %v, want %v", name, got, want)
		}
	}
	if got := Leftovers(filepath.Join(dir, "ru")); len(got) != 0 {
		t.Fatalf("a shorter name's leftovers: %v", got)
	}
	if got := Leftovers(filepath.Join(dir, "absent", "x")); got != nil {
		t.Fatalf("an unreadable directory: %v", got)
	}
}
