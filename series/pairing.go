package series

import (
	"path/filepath"

	"github.com/warmstat/warmstat/analyze"
)

// UnpairedError is groups that were to be compared run by run but whose runs do not
// pair by their start times (analyze.PairsByStartTime's refusal).
type UnpairedError struct{ Err error }

func (e *UnpairedError) Error() string { return e.Err.Error() }
func (e *UnpairedError) Unwrap() error { return e.Err }

// LoadSides reads the two sides of a comparison, A from pathA and B from pathB, and
// settles their pairing into o (Pairing). On an error it returns the sides read so
// far (nil where not read): a refusal states them.
func LoadSides(pathA, pathB string, load analyze.LoadOptions, o *analyze.CompareOptions, methodChosen bool) ([]*analyze.Group, error) {
	groups := make([]*analyze.Group, 2)
	for i, p := range []string{pathA, pathB} {
		g, err := analyze.LoadGroup([]string{"A", "B"}[i], p, load)
		if err != nil {
			return groups, err
		}
		groups[i] = g
	}
	return groups, Pairing(pathA, pathB, groups[0], groups[1], o, methodChosen)
}

// Pairing settles how groups a and b, read from pathA and pathB, are paired when
// compared with o. Two sides of one series (DIR/A and DIR/B, either way round) are
// compared by the pairs its series.json records (the runs it ran back to back), unless
// a method other than paired was chosen
// (methodChosen), or the series ran unpaired and no method was chosen. Other groups
// compared paired have their runs paired by start time.
func Pairing(pathA, pathB string, a, b *analyze.Group, o *analyze.CompareOptions, methodChosen bool) error {
	absA, errA := filepath.Abs(pathA)
	absB, errB := filepath.Abs(pathB)
	dir := filepath.Dir(absA)
	sides := filepath.Base(absA) + filepath.Base(absB)
	var st *State
	if errA == nil && errB == nil && filepath.Dir(absB) == dir && (sides == "AB" || sides == "BA") {
		var err error
		if st, err = Read(dir); err != nil {
			return err
		}
	}
	switch {
	case st == nil && o.Method == analyze.Paired:
		pairs, err := analyze.PairsByStartTime(a, b)
		if err != nil {
			return &UnpairedError{err}
		}
		o.Pairs = pairs
		return nil
	case st == nil || methodChosen && o.Method != analyze.Paired || !methodChosen && st.Plan.Unpaired:
		return nil
	}
	pairs := st.Pairs(dir)
	if sides == "BA" {
		swap := map[string]string{"A": "B", "B": "A"}
		for i, p := range pairs {
			pairs[i].A, pairs[i].B, pairs[i].First = p.B, p.A, swap[p.First]
		}
	}
	o.Method, o.Pairs = analyze.Paired, pairs
	return nil
}
