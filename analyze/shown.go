package analyze

import (
	"fmt"

	"github.com/warmstat/warmstat/runfmt"
)

// FailedRunError is a failed run (exit 1) among runs to be shown, refused: a table or
// a picture of it would pass its figures off as a measurement.
type FailedRunError struct {
	Dir                  string
	Verification, Status string // the manifest's verification and outcome status
}

func (e *FailedRunError) Error() string {
	return fmt.Sprintf("%s failed (verification %s, outcome %s, exit 1): refused", e.Dir, e.Verification, e.Status)
}

// LoadShown loads each path (a run directory or a directory of runs) as a group to be
// shown rather than judged, in the order given: every run is kept, unverified ones for
// the presentation to mark, failed ones only with includeFailed (else a
// *FailedRunError). A run counted twice, within or across the paths, is a *Refusal.
func LoadShown(paths []string, includeFailed bool) ([]*Group, error) {
	var groups []*Group
	for _, path := range paths {
		g, err := LoadGroup(path, path, LoadOptions{IncludeUnverified: true, IncludeFailed: true})
		if err != nil {
			return nil, err
		}
		for _, r := range g.Runs {
			if m := r.Manifest; m.ExitCode == 1 && !includeFailed {
				return nil, &FailedRunError{Dir: r.Dir, Verification: m.Verification.Status, Status: m.Outcome.Status}
			}
		}
		groups = append(groups, g)
	}
	if err := RefuseDuplicates(groups...); err != nil {
		return nil, err
	}
	return groups, nil
}

// ProfilesOf reads collection coll's latencies of every run of groups, in order
// (Overall: every collection). coll "" is the first run's dominant collection (Dominant
// over its recorded entity counts), the one a series gates on, or Overall when it
// records none.
func ProfilesOf(groups []*Group, coll string, q Quantiles, block int) ([]*Profile, error) {
	var runs []*runfmt.Run
	for _, g := range groups {
		runs = append(runs, g.Runs...)
	}
	if coll == "" && len(runs) > 0 {
		counts := map[string]int64{}
		for _, c := range runs[0].Manifest.Collections {
			counts[c.Name] = c.Entities
		}
		coll = Dominant(counts)
	}
	if coll == "" {
		coll = Overall
	}
	var out []*Profile
	for _, r := range runs {
		p, err := ProfileOf(r, coll, q, block)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
