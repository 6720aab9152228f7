package report

import (
	"strings"
	"testing"

	"github.com/warmstat/warmstat/runfmt"
)

// The clock table's machine speed is analyze's figure (the canary's geometric mean),
// not one report computes; figures that make no speed print "?", not a number.
func TestMachineSpeedRowIsAnalyzes(t *testing.T) {
	row := func(c runfmt.Canary) string {
		m := &runfmt.Manifest{Factors: &runfmt.VarianceFactors{Canary: &c}}
		for _, r := range factorRows(m, 1e9) {
			if r[0] == "  machine speed" {
				return r[2]
			}
		}
		t.Fatalf("no machine speed row for %+v", c)
		return ""
	}
	// 1, 8 and 27 µs: the geometric mean is 6 µs
	if got := row(runfmt.Canary{Samples: 5, ALUNs: 1000, L3Ns: 8000, DRAMNs: 27000}); !strings.HasPrefix(got, "canary 6.0 µs (arithmetic 1.0, cache 8.0, memory 27.0; median of 5 samples)") {
		t.Errorf("machine speed row = %q", got)
	}
	if got := row(runfmt.Canary{Samples: 5, ALUNs: 0, L3Ns: 8000, DRAMNs: 27000}); !strings.HasPrefix(got, "canary ? µs") {
		t.Errorf("a zero figure: machine speed row = %q, want no speed", got)
	}
}
