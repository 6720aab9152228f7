package analyze

// MeasuresTransport says whether comparing a with b under o measures the transport
// rather than a build: one build on both sides, each side in one target mode and the
// two modes different. A user who allows a mismatch asks for a comparison of builds
// despite the difference, so allowing any makes it a comparison again.
func MeasuresTransport(a, b *Group, o CompareOptions) bool {
	_, _, ok := TargetModes(a, b)
	return ok && a.Build == b.Build && len(o.AllowMismatch) == 0
}
