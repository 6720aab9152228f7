package report

import "github.com/warmstat/warmstat/analyze"

// DuplicateAdvice is what to do about the runs a refused comparison found twice, as
// lines below its refusal: copies (one run in two directories) are removed; a run
// given twice (a directory of runs and a run inside it) is given once.
func DuplicateAdvice(r *analyze.Refusal) []string {
	copies := false
	for _, d := range r.Duplicates {
		copies = copies || !d.SameDirectory
	}
	switch {
	case copies:
		return []string{"  (remove the copies: each run directory must hold a different run)"}
	case len(r.Duplicates) > 0:
		return []string{"  (give each run once: a directory of runs already holds the runs inside it)"}
	}
	return nil
}
