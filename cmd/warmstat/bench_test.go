package main

import (
	"context"
	"encoding/csv"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/warmstat/warmstat/internal/synthrun"
	"github.com/warmstat/warmstat/runfmt"
)

// BenchmarkReport386k: `warmstat report RUN` on a production-size run (386,369 rows),
// in process, against merely reading the same rows with encoding/csv (ReuseRecord, no
// parsing), timed alternately in the same iterations so that both see the same machine.
// Target: report ≤ 1.0× encoding/csv (the x-encoding/csv metric).
func BenchmarkReport386k(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "run")
	if _, err := synthrun.Write(dir, synthrun.Spec{Label: "bench", Seed: 1, Collections: synthrun.Production}); err != nil {
		b.Fatal(err)
	}
	rows := filepath.Join(dir, runfmt.EntitiesFile)
	ctx := context.Background()
	var reportNs, csvNs time.Duration
	b.ReportAllocs()
	for b.Loop() {
		began := time.Now()
		if code := run(ctx, []string{"warmstat", "report", dir}, io.Discard, io.Discard); code != 0 {
			b.Fatalf("report: exit %d", code)
		}
		reportNs += time.Since(began)
		began = time.Now()
		if n := readWithEncodingCSV(b, rows); n != 386_369 {
			b.Fatalf("encoding/csv read %d rows", n)
		}
		csvNs += time.Since(began)
	}
	b.ReportMetric(float64(reportNs.Nanoseconds())/float64(b.N)/1e6, "report-ms")
	b.ReportMetric(float64(csvNs.Nanoseconds())/float64(b.N)/1e6, "encoding/csv-ms")
	b.ReportMetric(float64(reportNs)/float64(csvNs), "x-encoding/csv")
}

// readWithEncodingCSV reads every data row of an entities file and returns how many.
func readWithEncodingCSV(tb testing.TB, path string) int {
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.ReuseRecord = true
	if _, err := r.Read(); err != nil { // the header
		tb.Fatal(err)
	}
	n := 0
	for {
		_, err := r.Read()
		if err == io.EOF {
			return n
		}
		if err != nil {
			tb.Fatal(err)
		}
		n++
	}
}
