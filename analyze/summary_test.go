package analyze

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The harness's definitions, written the obvious way on a sorted copy.
func javaReference(v []int64) (mean, p50, p95, p99 int64) {
	s := slices.Clone(v)
	slices.Sort(s)
	n := int64(len(s))
	var sum int64
	for _, x := range s {
		sum += x
	}
	pick := func(p int64) int64 { return s[min(n-1, int64(math.Floor(float64(p*n)/100)))] }
	return sum / n, pick(50), pick(95), pick(99)
}

func TestJavaDefinitionsByHand(t *testing.T) {
	// n = 100: p95 is the 96th value, p99 the maximum (floor(p*n/100) is 0-based)
	v := make([]int64, 100)
	for i := range v {
		v[i] = int64(100 - i) // 100..1, unsorted
	}
	st := statsOf(v, QuantilesJava)
	if st.P95Ns != 96 || st.P99Ns != 100 || st.MedianNs != 51 || st.MinNs != 1 || st.MaxNs != 100 {
		t.Fatalf("n=100: %+v", st)
	}
	// even count: the median is the upper middle; the mean truncates to whole ns
	st = statsOf([]int64{4, 1, 3, 2}, QuantilesJava)
	if st.MedianNs != 3 || st.MeanNs != 2 { // 10/4 = 2.5 -> 2
		t.Fatalf("n=4: %+v", st)
	}
	st = statsOf([]int64{4, 1, 3, 2}, QuantilesLinear)
	if st.MedianNs != 2.5 || st.MeanNs != 2.5 || math.Abs(st.P95Ns-3.85) > 1e-9 {
		t.Fatalf("linear n=4: %+v", st)
	}
	if st := statsOf(nil, QuantilesJava); st != (Stats{}) {
		t.Fatalf("empty: %+v", st)
	}
	if st := statsOf([]int64{7}, QuantilesLinear); st.P99Ns != 7 || st.MedianNs != 7 {
		t.Fatalf("single: %+v", st)
	}
}

// Selection must give exactly what sorting gives, for every size and for data
// full of ties (where a careless partition breaks).
func TestSelectionEqualsSorting(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 3000; trial++ {
		n := 1 + rng.IntN(400)
		if trial%50 == 0 {
			n = 5000 + rng.IntN(50000)
		}
		spread := []int64{1, 3, 1000, 1 << 40}[trial%4]
		v := make([]int64, n)
		for i := range v {
			v[i] = rng.Int64N(spread)
		}
		if trial%7 == 0 {
			slices.Sort(v) // sorted input: the classic quickselect worst case
		}
		mean, p50, p95, p99 := javaReference(v)
		st := statsOf(slices.Clone(v), QuantilesJava)
		if int64(st.MeanNs) != mean || int64(st.MedianNs) != p50 || int64(st.P95Ns) != p95 || int64(st.P99Ns) != p99 {
			t.Fatalf("n=%d spread=%d: got %+v want mean %d p50 %d p95 %d p99 %d", n, spread, st, mean, p50, p95, p99)
		}
		s := slices.Clone(v)
		slices.Sort(s)
		lin := statsOf(slices.Clone(v), QuantilesLinear)
		for _, c := range []struct {
			p   float64
			got float64
		}{{50, lin.MedianNs}, {95, lin.P95Ns}, {99, lin.P99Ns}} {
			h := float64(n-1) * c.p / 100
			lo := int(h)
			want := float64(s[lo])
			if lo+1 < n {
				want += (h - float64(lo)) * float64(s[lo+1]-s[lo])
			}
			if math.Abs(c.got-want) > 1e-6*math.Max(1, math.Abs(want)) {
				t.Fatalf("linear p%.0f n=%d: got %v want %v", c.p, n, c.got, want)
			}
		}
	}
}

func TestJavaTenths(t *testing.T) {
	// HALF_UP on the exact decimal, as Java's %.1f does: 8281.55 µs -> 8281.6
	for _, c := range []struct{ v, unit, want int64 }{
		{8_281_550, 1000, 82816}, {8_281_549, 1000, 82815}, {250, 1000, 3}, {1_050_000_000, 1e9, 11}, {15_007_000_000, 1e9, 150},
	} {
		if got := javaTenths(c.v, c.unit); got != c.want {
			t.Errorf("javaTenths(%d, %d) = %d, want %d", c.v, c.unit, got, c.want)
		}
	}
}

func TestSummarizeProductionShape(t *testing.T) {
	run := writeBigRun(t)
	s, err := Summarize(run, QuantilesJava)
	if err != nil {
		t.Fatal(err)
	}
	if s.Overall.Count != 386_369 || len(s.Collections) != len(productionShape) {
		t.Fatalf("%d rows, %d collections", s.Overall.Count, len(s.Collections))
	}
	var sum int64
	for _, c := range s.Collections {
		sum += c.SumNs
		if c.UpsertNs != c.SumNs {
			t.Fatalf("%s: manifest upsert %d != CSV sum %d", c.Name, c.UpsertNs, c.SumNs)
		}
	}
	if sum != s.Overall.SumNs {
		t.Fatal("overall sum != sum of collections")
	}
}

// The two-stage bootstrap keeps only a window of ranks around each quantile; the
// window must hold exactly the values a full sort puts at those ranks, and be wide
// enough that a resampled order statistic practically never falls outside it.
func TestResampleWindows(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for _, n := range []int{1, 2, 7, 100, 999, 1000, 5000, 386_369} {
		for _, q := range []Quantiles{QuantilesJava, QuantilesLinear} {
			v := make([]int64, n)
			for i := range v {
				v[i] = rng.Int64N(1 + int64(n)/3) // plenty of ties
			}
			sorted := slices.Clone(v)
			slices.Sort(sorted)
			rs := newResampleSet(v, q)
			for _, m := range []Metric{metricMedian, metricP95, metricP99} {
				w := rs.windows[m]
				k, _ := rank(n, quantileOf[m], q)
				if k < w.lo || k >= w.lo+len(w.sorted) {
					t.Fatalf("n=%d %s: rank %d outside window [%d,%d)", n, m, k, w.lo, w.lo+len(w.sorted))
				}
				if !slices.Equal(w.sorted, sorted[w.lo:w.lo+len(w.sorted)]) {
					t.Fatalf("n=%d %s %s: window differs from the sorted ranks", n, q, m)
				}
				p := quantileOf[m] / 100
				if sd := math.Sqrt(p * (1 - p) * float64(n)); n > 100 && (float64(k-w.lo) < 7*sd || float64(w.lo+len(w.sorted)-1-k) < 7*sd) && w.lo > 0 && w.lo+len(w.sorted) < n {
					t.Fatalf("n=%d %s: window narrower than 7 SD", n, m)
				}
			}
		}
	}
}
