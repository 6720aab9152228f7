package series

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/internal/synthrun"
)

// Groups that are no series' sides, compared paired, are paired by start time: groups
// of unequal runs cannot be, a typed refusal; compared otherwise they stay unpaired.
func TestPairingOfOtherGroups(t *testing.T) {
	dir := t.TempDir()
	a, err := synthrun.Group(filepath.Join(dir, "x"), 2, 1, synthrun.Spec{Label: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := synthrun.Group(filepath.Join(dir, "y"), 3, 11, synthrun.Spec{Label: "v2"})
	if err != nil {
		t.Fatal(err)
	}
	ga, _ := analyze.LoadGroup("A", a, analyze.LoadOptions{})
	gb, _ := analyze.LoadGroup("B", b, analyze.LoadOptions{})
	o := analyze.CompareOptions{Method: analyze.Paired}
	var up *UnpairedError
	if err := Pairing(a, b, ga, gb, &o, true); !errors.As(err, &up) {
		t.Fatalf("2 runs against 3, paired: %v", err)
	}
	o = analyze.CompareOptions{Method: analyze.Method("welch-t")}
	if err := Pairing(a, b, ga, gb, &o, false); err != nil || o.Pairs != nil || o.Method != "welch-t" {
		t.Fatalf("unpaired groups: %v, %+v", err, o)
	}
}
