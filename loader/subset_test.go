package loader

import (
	"slices"
	"testing"
)

func TestParseSubset(t *testing.T) {
	for list, want := range map[string][]string{
		"":                     nil,
		" , ":                  nil,
		"Product":              {"Product"},
		" Product ,, Brand , ": {"Product", "Brand"},
	} {
		if got := ParseSubset(list); !slices.Equal(got, want) || (want == nil) != (got == nil) {
			t.Errorf("ParseSubset(%q) = %q, want %q", list, got, want)
		}
	}
}
