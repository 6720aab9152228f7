package analyze_test

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/internal/synthrun"
	"github.com/warmstat/warmstat/runfmt"
)

// An outlier run names the recorded variance factor furthest from its side: here the
// slow run's writer spent three times the others' CPU in the JIT compiler, while its
// GC and the machine's steal were like the others'.
func TestOutlierNamesItsFactor(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "side")
	for k := range 5 {
		effect, jit := 1.0, 0.20+0.01*float64(k)
		if k == 2 {
			effect, jit = 1.3, 0.62
		}
		mutate := func(m *runfmt.Manifest) {
			wall := float64(m.Timings.LoadWallNs)
			steal, all := int64(0.001*2*wall), int64(2*wall)
			m.Factors = &runfmt.VarianceFactors{WriterCPUNs: map[string]int64{"request": int64(0.9 * wall), "jit": int64(jit * wall),
				"gc": int64((0.05 + 0.002*float64(k)) * wall), "other": int64(0.01 * wall)}, StealNs: &steal, MachineCPUNs: &all}
		}
		if _, err := synthrun.Write(filepath.Join(dir, fmt.Sprintf("run-%d", k+1)), synthrun.Spec{Label: "a", Seed: uint64(k + 1), Effect: effect,
			Tau: 0.002, Mutate: mutate}); err != nil {
			t.Fatal(err)
		}
	}
	g, err := analyze.LoadGroup("A", dir, analyze.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hs, err := analyze.Health(g, analyze.QuantilesJava)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range hs {
		slow := strings.HasSuffix(h.Dir, "run-3")
		switch {
		case slow && (h.Outlier == "" || !strings.HasPrefix(h.Factor, "writer jit CPU (cores) 0.62 against")):
			t.Fatalf("the slow run: outlier %q, factor %q", h.Outlier, h.Factor)
		case !slow && (h.Outlier != "" || h.Factor != ""):
			t.Fatalf("run %d: outlier %q, factor %q", i, h.Outlier, h.Factor)
		case h.Factors["writer gc CPU (cores)"] <= 0 || math.Abs(h.Factors["CPU steal (share)"]-0.001) > 1e-6:
			t.Fatalf("run %d: factors %v", i, h.Factors)
		}
	}
}
