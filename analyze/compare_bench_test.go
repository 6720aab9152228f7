package analyze

import (
	"testing"

	"github.com/warmstat/warmstat/internal/synthrun"
)

// BenchmarkCompare5x386k: two builds, 5 runs each of a production-sized catalog
// (386,369 rows per run), 10,000 resamples. Target: < 1.5 s wall on 2 cores.
func BenchmarkCompare5x386k(b *testing.B) {
	var colls []synthrun.Collection
	for _, c := range productionShape {
		colls = append(colls, synthrun.Collection{Name: c.name, N: c.n, MeanNs: c.meanNs})
	}
	tmp := b.TempDir()
	da, err := synthrun.Group(tmp, 5, 1, synthrun.Spec{Label: "a", Tau: 0.02, Collections: colls})
	if err != nil {
		b.Fatal(err)
	}
	db, err := synthrun.Group(tmp, 5, 10, synthrun.Spec{Label: "b", Tau: 0.02, Effect: 0.95, Collections: colls})
	if err != nil {
		b.Fatal(err)
	}
	for _, method := range []Method{methodWelch, methodTwoStage} {
		b.Run(string(method), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ga, err := LoadGroup("A", da, LoadOptions{})
				if err != nil {
					b.Fatal(err)
				}
				gb, _ := LoadGroup("B", db, LoadOptions{})
				c, err := Compare(ga, gb, CompareOptions{ThresholdPct: 2, Method: method, Resamples: 10000, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				if len(c.Rows) != (len(colls)+1)*4+len(clockMetrics) {
					b.Fatal(len(c.Rows))
				}
			}
		})
	}
}
