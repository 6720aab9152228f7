package history

import "math"

// Adjusted are the figures the change points were found in, one per build of s (in
// s.Builds' order, in the metric's unit): each build's figure with the machine's speed
// set aside — at the line's typical speed (the geometric mean of its builds' speeds),
// by the slope the search fitted (analyze.ChangePoints). nil when the series was not
// adjusted (its change points were found in s.Values themselves) or none were looked
// for. A page draws these: the plain figures carry the machine's wander, which can be
// larger than the step a change point marks.
func (s Series) Adjusted() []float64 {
	if s.Seg == nil || s.Seg.Slope == nil || len(s.Seg.Adjusted) != len(s.Values) {
		return nil
	}
	out := make([]float64, len(s.Seg.Adjusted))
	for i, y := range s.Seg.Adjusted {
		out[i] = math.Exp(y) // analyze works on the log scale
	}
	return out
}
