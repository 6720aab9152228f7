package seed

import (
	"math"
	"testing"
)

// poolSize finds the domain that shows the measured distinct count: 18,700 draws from
// 10,000 values show about 8,460 distinct ones; three statuses stay three.
func TestPoolSize(t *testing.T) {
	if p := poolSize(8460, 18700); math.Abs(float64(p)-10000)/10000 > 0.03 {
		t.Errorf("poolSize(8460 of 18700) = %d, want about 10,000", p)
	}
	if p := poolSize(3, 10000); p != 3 {
		t.Errorf("poolSize(3 of 10000) = %d, want 3", p)
	}
}

// Dist.Quantile is linear at the ends and geometric between positive levels, and a
// count's draws keep the interpolated mean.
func TestDistQuantile(t *testing.T) {
	d := &Dist{N: 100, Q: []float64{0, 1, 1, 2, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}}
	if d.Quantile(0) != 0 || d.Quantile(1) != 1024 || d.Quantile(0.5) != 4 {
		t.Fatalf("quantile at the levels: %g %g %g", d.Quantile(0), d.Quantile(1), d.Quantile(0.5))
	}
	if q := d.Quantile(0.625); math.Abs(q-math.Sqrt(32)) > 1e-9 { // halfway 0.5 -> 0.75 between 4 and 8: geometric
		t.Fatalf("quantile(0.625) = %g, want sqrt(32)", q)
	}
}
