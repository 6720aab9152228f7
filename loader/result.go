package loader

import "fmt"

// ExitCode is what the command that ran the load exits with: the code the manifest
// decided (runfmt.ExitCodeFor), except that err, a failure after the run was decided
// (its report, its files), never exits 0 however good the manifest says the run is.
func (r *Result) ExitCode(err error) int {
	if r.Manifest.ExitCode == 0 && err != nil {
		return 1
	}
	return r.Manifest.ExitCode
}

// Status is the run's verification and outcome in a few words, for the line that says
// why it did not exit 0.
func (r *Result) Status() string {
	return fmt.Sprintf("run %s: verification %s, outcome %s", r.Manifest.RunID, r.Manifest.Verification.Status, r.Manifest.Outcome.Status)
}
