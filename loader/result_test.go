package loader

import (
	"errors"
	"testing"

	"github.com/warmstat/warmstat/runfmt"
)

// A run the manifest calls good still fails when something failed after it was decided;
// a run the manifest calls bad keeps its own code.
func TestResultExitCode(t *testing.T) {
	late := errors.New("report: disk full")
	for _, c := range []struct {
		manifest int
		err      error
		want     int
	}{{0, nil, 0}, {0, late, 1}, {2, nil, 2}, {2, late, 2}, {1, late, 1}} {
		r := &Result{Manifest: &runfmt.Manifest{ExitCode: c.manifest}}
		if got := r.ExitCode(c.err); got != c.want {
			t.Errorf("manifest %d, err %v: exit %d, want %d", c.manifest, c.err, got, c.want)
		}
	}
	r := &Result{Manifest: &runfmt.Manifest{RunID: "run-1"}}
	r.Manifest.Verification.Status, r.Manifest.Outcome.Status = runfmt.Unverified, runfmt.OutcomeComplete
	if got, want := r.Status(), "run run-1: verification "+runfmt.Unverified+", outcome "+runfmt.OutcomeComplete; got != want {
		t.Errorf("Status() = %q, want %q", got, want)
	}
}
