package shape

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/seed"
)

// TestAnonymiseRenamesEveryNameConsistently: an anonymised shape names no collection,
// attribute, reference or associated data of its source, still validates (targets,
// groups and reflections point at the renamed collections), keeps one name for a name
// used in many collections, and is the same shape otherwise.
func TestAnonymiseRenamesEveryNameConsistently(t *testing.T) {
	src := generated(t, seed.DefaultProfile(), 0.002)
	plain := measure(t, src, Options{From: "workload"})
	anon := measure(t, src, Options{From: "workload", Anonymise: true})
	if err := anon.Validate(); err != nil {
		t.Fatalf("the anonymised shape does not validate: %v", err)
	}
	file := filepath.Join(t.TempDir(), "anon.json")
	if err := Write(file, anon); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{"shop": true}
	for _, c := range plain.Collections {
		names[c.Name] = true
		for _, a := range c.Attributes {
			names[a.Name] = true
		}
		for _, d := range c.AssociatedData {
			names[d.Name] = true
		}
		for _, r := range c.References {
			names[r.Name] = true
			if r.Reflected != "" {
				names[r.Reflected] = true
			}
		}
	}
	for n := range names {
		if strings.Contains(string(data), `: "`+n+`"`) { // as a value, not as one of the format's keys
			t.Errorf("the anonymised shape still names %q", n)
		}
	}
	urls := map[string]bool{}
	for i, c := range plain.Collections {
		for k, a := range c.Attributes {
			if a.Name == "url" {
				urls[anon.Collections[i].Attributes[k].Name] = true
			}
		}
	}
	if len(urls) != 1 {
		t.Errorf("the global url became %d names: %v", len(urls), urls)
	}
	plain.Measured, anon.Measured = nil, nil
	Anonymise(plain)
	if d := Compare(anon, plain); len(d) > 0 {
		t.Errorf("anonymising changed the shape: %+v", d)
	}
}
