package analyze_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/internal/synthrun"
	"github.com/warmstat/warmstat/runfmt"
)

// Runs to be shown: a failed run is refused unless asked for, a run given twice is a
// refusal, and a picture's default collection is the dominant one (Product when the
// catalog has it, else its largest), the one a series gates on.
func TestLoadShownAndProfiles(t *testing.T) {
	dir := t.TempDir()
	ok, err := synthrun.Group(filepath.Join(dir, "ok"), 2, 1, synthrun.Spec{Label: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	failed := filepath.Join(dir, "failed")
	if _, err := synthrun.Write(failed, synthrun.Spec{Label: "v1", Seed: 9, GoLiveFail: true, Mutate: func(m *runfmt.Manifest) {
		m.Outcome.Status = runfmt.OutcomeAborted
	}}); err != nil {
		t.Fatal(err)
	}
	var fe *analyze.FailedRunError
	if _, err := analyze.LoadShown([]string{ok, failed}, false); !errors.As(err, &fe) || fe.Dir != failed {
		t.Fatalf("a failed run: %v", err)
	}
	groups, err := analyze.LoadShown([]string{ok, failed}, true)
	if err != nil || len(groups) != 2 || len(groups[1].Runs) != 1 {
		t.Fatalf("a failed run, asked for: %v", err)
	}
	var ref *analyze.Refusal
	if _, err := analyze.LoadShown([]string{ok, ok}, false); !errors.As(err, &ref) {
		t.Fatalf("a run given twice: %v", err)
	}

	ps, err := analyze.ProfilesOf(groups[:1], "", analyze.QuantilesJava, 0)
	if err != nil || len(ps) != 2 || ps[0].Collection != "Product" {
		t.Fatalf("default of a catalog with Product: %v", err)
	}
	noProduct, err := synthrun.Group(filepath.Join(dir, "np"), 1, 5, synthrun.Spec{Label: "v1",
		Collections: []synthrun.Collection{{Name: "Tag", N: 60, MeanNs: 1e5}, {Name: "Stock", N: 160, MeanNs: 1e5}}})
	if err != nil {
		t.Fatal(err)
	}
	np, err := analyze.LoadShown([]string{noProduct}, false)
	if err != nil {
		t.Fatal(err)
	}
	for coll, want := range map[string]string{"": "Stock", analyze.Overall: analyze.Overall, "Tag": "Tag"} {
		if ps, err := analyze.ProfilesOf(np, coll, analyze.QuantilesJava, 0); err != nil || ps[0].Collection != want {
			t.Errorf("--collection %q: %v, want %s", coll, err, want)
		}
	}
}
