package report

import (
	"errors"
	"fmt"
	"strings"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/runfmt"
)

// ErrNotEmbedded is runs to measure a transport against that are not all embedded.
var ErrNotEmbedded = errors.New("the runs are not all embedded")

// TransportPairError is a remote run and embedded runs that, together, measure no
// transport (analyze.Transport's refusal, or its failure): Err says why.
type TransportPairError struct{ Err error }

func (e *TransportPairError) Error() string { return e.Err.Error() }
func (e *TransportPairError) Unwrap() error { return e.Err }

// TransportOptions measures the transport's share of each collection of a remote run
// against the embedded runs in embeddedPath, of the same workload and build
// (analyze.Transport's rules: any other difference is refused, as bad input for a
// report, named field by field).
func TransportOptions(run *runfmt.Run, embeddedPath string, q analyze.Quantiles) (RunOptions, error) {
	if run.Manifest.TargetMode != runfmt.TargetRemote {
		return RunOptions{}, fmt.Errorf("%s is an %s run; the transport's share is measured on a remote one", run.Dir, run.Manifest.TargetMode)
	}
	remote := &analyze.Group{Name: "remote", Path: run.Dir, Build: run.Manifest.Build.Label, Runs: []*runfmt.Run{run}}
	emb, err := analyze.LoadGroup("embedded", embeddedPath, analyze.LoadOptions{})
	if err != nil {
		return RunOptions{}, err
	}
	if _, mode, ok := analyze.TargetModes(remote, emb); !ok || mode != runfmt.TargetEmbedded {
		return RunOptions{}, ErrNotEmbedded
	}
	t, err := analyze.Transport(remote, emb, analyze.CompareOptions{Quantiles: q})
	var ref *analyze.Refusal
	if errors.As(err, &ref) { // not wrapped: a refused report is bad input (exit 1), not a refused comparison
		var lines []string
		for _, m := range ref.Mismatches {
			lines = append(lines, MismatchLine(m))
		}
		for _, d := range ref.Duplicates {
			lines = append(lines, "run "+d.RunID+" is on both sides")
		}
		return RunOptions{}, &TransportPairError{fmt.Errorf("not the same workload, build and conditions as %s in another target mode: %s",
			run.Dir, strings.Join(lines, "; "))}
	}
	if err != nil {
		return RunOptions{}, &TransportPairError{err}
	}
	o := RunOptions{TransportSharePct: map[string]float64{}, TransportFrom: embeddedPath}
	for _, r := range t.Rows {
		if r.SharePct != nil {
			o.TransportSharePct[r.Collection] = *r.SharePct
		}
	}
	return o, nil
}
