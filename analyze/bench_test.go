package analyze

import (
	"encoding/csv"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/warmstat/warmstat/runfmt"
)

// ProductionShape is the per-collection entity count of a 386,369-entity catalog
// (Product 118,772 from the seed document; the rest shaped after catalog-shape.md).
var productionShape = []struct {
	name   string
	n      int64
	meanNs float64
}{
	{"Brand", 1_204, 1.1e6}, {"Category", 2_915, 3.2e6}, {"Group", 310, 900e3}, {"Media", 81_250, 600e3},
	{"ParameterGroup", 160, 400e3}, {"ParameterType", 2_480, 700e3}, {"ParameterValue", 41_622, 500e3},
	{"PriceList", 212, 300e3}, {"Product", 118_772, 7.4e6}, {"ProductGroup", 5_120, 900e3},
	{"Stock", 47_940, 140e3}, {"Store", 83, 250e3}, {"Tag", 4_311, 120e3}, {"Variant", 51_402, 1.3e6},
	{"Voucher", 26_035, 130e3}, {"Warehouse", 41, 200e3}, {"Zone", 512, 180e3}, {"Country", 2_000, 160e3},
}

// writeBigRun writes a production-sized run (386,369 rows) and returns it.
func writeBigRun(tb testing.TB) *runfmt.Run {
	tb.Helper()
	dir := tb.TempDir()
	f, err := os.Create(filepath.Join(dir, runfmt.EntitiesFile))
	if err != nil {
		tb.Fatal(err)
	}
	w, _ := runfmt.NewCSVWriter(f)
	rng := rand.New(rand.NewPCG(1, 2))
	var clock, batch int64
	m := &runfmt.Manifest{Schema: runfmt.SchemaV1, RunID: "big", Build: runfmt.Build{Label: "bench"}, Loader: runfmt.Loader{Name: runfmt.LoaderWarmstat},
		TargetMode: runfmt.TargetRemote, Timings: runfmt.Timings{ResolutionNs: 1}, Outcome: runfmt.Outcome{Status: runfmt.OutcomeComplete},
		GoLive: runfmt.GoLive{Status: runfmt.GoLiveSkipped}, Verification: runfmt.Verification{Status: runfmt.VerifySkip}}
	for _, c := range productionShape {
		col := runfmt.Collection{Name: c.name, Entities: c.n}
		start := clock
		for i := int64(0); i < c.n; i++ {
			if i%1000 == 0 {
				batch++
			}
			up := int64(c.meanNs * math.Exp(0.4*rng.NormFloat64()-0.08))
			if err := w.Write(runfmt.Row{Collection: c.name, PrimaryKey: int32(i*2 + 1), Batch: batch, StartNs: clock, UpsertNs: up}); err != nil {
				tb.Fatal(err)
			}
			clock += up + 5000
			col.UpsertNs += up
		}
		col.WallNs = clock - start
		m.Collections = append(m.Collections, col)
		m.Entities += c.n
		m.Timings.UpsertNs += col.UpsertNs
	}
	m.Timings.LoadWallNs = clock
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	if err := runfmt.WriteManifest(filepath.Join(dir, runfmt.ManifestFile), m); err != nil {
		tb.Fatal(err)
	}
	run, err := runfmt.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return run
}

// BenchmarkSummarize386k: read, validate against the manifest and summarize a
// production-sized run. Target: < 150 ms and < 64 MB heap on one core (-cpu 1).
func BenchmarkSummarize386k(b *testing.B) {
	run := writeBigRun(b)
	b.ReportAllocs()
	for b.Loop() {
		s, err := Summarize(run, QuantilesJava)
		if err != nil {
			b.Fatal(err)
		}
		if s.Overall.Count != 386_369 {
			b.Fatal(s.Overall.Count)
		}
	}
}

// BenchmarkReadRunfmt386k: the streaming reader alone.
func BenchmarkReadRunfmt386k(b *testing.B) {
	run := writeBigRun(b)
	p := filepath.Join(run.Dir, runfmt.EntitiesFile)
	b.ReportAllocs()
	for b.Loop() {
		f, _ := os.Open(p)
		r, err := runfmt.NewCSVReader(f, p)
		if err != nil {
			b.Fatal(err)
		}
		var sum int64
		for {
			row, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			sum += row.UpsertNs
		}
		f.Close()
	}
}

// BenchmarkReadEncodingCSV386k: the same read through encoding/csv (ReuseRecord)
// plus strconv, the baseline the streaming reader must beat.
func BenchmarkReadEncodingCSV386k(b *testing.B) {
	run := writeBigRun(b)
	p := filepath.Join(run.Dir, runfmt.EntitiesFile)
	b.ReportAllocs()
	for b.Loop() {
		f, _ := os.Open(p)
		r := csv.NewReader(f)
		r.ReuseRecord = true
		if _, err := r.Read(); err != nil {
			b.Fatal(err)
		}
		var sum int64
		names := map[string]string{}
		for {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if _, ok := names[rec[1]]; !ok {
				names[rec[1]] = rec[1]
			}
			for _, k := range []int{0, 2, 3, 4} {
				if _, err := strconv.ParseInt(rec[k], 10, 64); err != nil {
					b.Fatal(err)
				}
			}
			v, err := strconv.ParseInt(rec[5], 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			sum += v
		}
		f.Close()
	}
}
