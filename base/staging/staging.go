// Package staging names the temporary file or directory a result is written under, beside
// its final path, until it is whole: ".NAME.partial-RANDOM". A reader never sees half a
// result, and what an interrupted writer left is found by the same name.
package staging

import (
	"os"
	"path/filepath"
	"strings"
)

// Pattern is the pattern for os.CreateTemp or os.MkdirTemp, in filepath.Dir(path), of
// the staging file or directory of path: ".NAME.partial-*".
func Pattern(path string) string {
	return prefix(path) + "*"
}

// Leftovers are the staging files and directories of path that writers left (an
// extraction or a run that was stopped), sorted by name; none when the directory
// cannot be read. Unlike a glob, a path whose name holds '[' or '*' finds its own.
func Leftovers(path string) []string {
	dir, want := filepath.Dir(path), prefix(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), want) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

func prefix(path string) string {
	return "." + filepath.Base(path) + ".partial-"
}
