package analyze

import "testing"

// An outlier's figures read as the run lines print them: grouped, never an exponent.
func TestReadableFigures(t *testing.T) {
	for v, want := range map[float64]string{31210: "31,210", 16485.4: "16,485", -4970: "-4,970", 0.5651: "0.5651", 759: "759", 1234567: "1,234,567"} {
		if got := readable(v); got != want {
			t.Errorf("readable(%v) = %q, want %q", v, got, want)
		}
	}
}
