// Package synthrun writes synthetic warmstat run directories with a known effect and
// known between-run noise, for tests and benchmarks of the analysis side. Every run
// it writes says so in its loader version ("synthetic").
package synthrun

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/warmstat/warmstat/runfmt"
)

// Collection is one collection of the synthetic catalog.
type Collection struct {
	Name   string
	N      int64
	MeanNs float64
}

// Small is a catalog shaped like production (Product dominant) at ~1/300 scale.
var Small = []Collection{{"Category", 40, 2.5e6}, {"Product", 400, 7.2e6}, {"Stock", 160, 140e3}, {"Tag", 60, 120e3}}

// Production is a catalog of production's size, 386,369 entities (Product 118,772 from
// the seed document; the rest shaped after catalog-shape.md), for benchmarks at the size
// warmstat must handle.
var Production = []Collection{
	{"Brand", 1_204, 1.1e6}, {"Category", 2_915, 3.2e6}, {"Group", 310, 900e3}, {"Media", 81_250, 600e3},
	{"ParameterGroup", 160, 400e3}, {"ParameterType", 2_480, 700e3}, {"ParameterValue", 41_622, 500e3},
	{"PriceList", 212, 300e3}, {"Product", 118_772, 7.4e6}, {"ProductGroup", 5_120, 900e3},
	{"Stock", 47_940, 140e3}, {"Store", 83, 250e3}, {"Tag", 4_311, 120e3}, {"Variant", 51_402, 1.3e6},
	{"Voucher", 26_035, 130e3}, {"Warehouse", 41, 200e3}, {"Zone", 512, 180e3}, {"Country", 2_000, 160e3},
}

// Spec describes one run.
type Spec struct {
	Label       string
	Seed        uint64
	Effect      float64 // true multiplier of every latency (1 = baseline)
	Tau         float64 // between-run noise: the run's latencies scale by exp(N(0, Tau))
	Collections []Collection
	Mutate      func(*runfmt.Manifest) // edits conditions before the manifest is written
	GoLiveFail  bool
	// Machine is how much slower the machine was during this run (log scale: 0.05 is
	// 5 % slower): the run's canary records it (with 0.5 % measurement noise), and every
	// latency scales by exp(Theta * Machine). A run records a canary only when Machine
	// or Theta is set.
	Machine, Theta float64
	// Cost writes entities.csv's cost columns: CPU 90 % of each upsert, 5 % waiting,
	// 150 bytes allocated per µs of CPU.
	Cost bool
}

// Write creates dir (which must not exist) holding one run.
func Write(dir string, s Spec) (*runfmt.Manifest, error) {
	if s.Collections == nil {
		s.Collections = Small
	}
	if s.Effect == 0 {
		s.Effect = 1
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(s.Seed, 0x5eed))
	runScale := s.Effect * math.Exp(s.Tau*rng.NormFloat64()+s.Theta*s.Machine)
	f, err := os.Create(filepath.Join(dir, runfmt.EntitiesFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	newWriter := runfmt.NewCSVWriter
	if s.Cost {
		newWriter = runfmt.NewCostCSVWriter
	}
	w, err := newWriter(f)
	if err != nil {
		return nil, err
	}
	var clock, batch int64
	m := newManifest(s)
	if s.Machine != 0 || s.Theta != 0 {
		speed := func(ns float64) float64 { return ns * math.Exp(s.Machine+0.005*rng.NormFloat64()) }
		m.Factors = &runfmt.VarianceFactors{Canary: &runfmt.Canary{Samples: 300, ALUNs: speed(330e3), L3Ns: speed(420e3), DRAMNs: speed(300e3)}}
	}
	if s.Cost {
		m.TargetMode = runfmt.TargetEmbedded
	}
	for _, c := range s.Collections {
		col := runfmt.Collection{Name: c.Name, Entities: c.N}
		start := clock
		for i := int64(0); i < c.N; i++ {
			if i%100 == 0 {
				batch++
				rd := int64(c.MeanNs * 3 * (0.9 + 0.2*rng.Float64()))
				clock += rd
				col.ReadNs += rd
			}
			up := int64(runScale * c.MeanNs * math.Exp(0.45*rng.NormFloat64()-0.1))
			row := runfmt.Row{Collection: c.Name, PrimaryKey: int32(1 + 2*i), Batch: batch, StartNs: clock, UpsertNs: up}
			if s.Cost {
				row.CPUNs, row.WaitNs = up*9/10, up/20
				row.AllocBytes = row.CPUNs * 150 / 1000
			}
			if err := w.Write(row); err != nil {
				return nil, err
			}
			clock += up + 8_000
			col.UpsertNs += up
		}
		col.WallNs = clock - start
		clock += 2_000_000
		m.Collections = append(m.Collections, col)
		m.Entities += c.N
		m.Timings.UpsertNs += col.UpsertNs
		m.Timings.SourceReadNs += col.ReadNs
		m.Verification.Counts = append(m.Verification.Counts, runfmt.CountCheck{Collection: c.Name, Source: c.N, Expected: c.N, Target: c.N, Loaded: c.N})
		m.Dataset.SourceCounts[c.Name] = c.N
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	m.Dataset.Fingerprint = runfmt.Fingerprint(m.Dataset.SourceCounts)
	m.Timings.LoadWallNs = clock
	gl := int64(runScale * 2.1e9)
	m.GoLive = runfmt.GoLive{Status: runfmt.GoLiveOK, Ns: &gl}
	if s.GoLiveFail {
		fail := int64(15e9)
		m.GoLive = runfmt.GoLive{Status: runfmt.GoLiveFailed, Ns: &fail, Error: "DEADLINE_EXCEEDED (synthetic)"}
	}
	if s.Mutate != nil {
		s.Mutate(m)
	}
	m.ExitCode = runfmt.ExitCodeFor(m.Outcome.Status, m.Verification.Status)
	if err := runfmt.WriteManifest(filepath.Join(dir, runfmt.ManifestFile), m); err != nil {
		return nil, err
	}
	return m, nil
}

func newManifest(s Spec) *runfmt.Manifest {
	heap, rheap, mem := int64(23<<30), int64(14<<30), int64(24<<30)
	cores := 2
	yes, no := true, false
	started := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC).Add(time.Duration(s.Seed) * time.Minute)
	return &runfmt.Manifest{Schema: runfmt.SchemaV1, RunID: fmt.Sprintf("%s-%d", s.Label, s.Seed), Build: runfmt.Build{Label: s.Label},
		Loader: runfmt.Loader{Name: runfmt.LoaderWarmstat, Version: "synthetic"}, Server: runfmt.Server{Version: "2026.2.3", MaxHeapBytes: &heap},
		Reader: runfmt.Reader{MaxHeapBytes: &rheap}, TargetMode: runfmt.TargetRemote,
		Conditions:    runfmt.Conditions{StorageCompress: &yes, CacheEnabled: &no, TrafficRecording: &no, BatchSize: 100},
		SourceCatalog: "synthetic", TargetCatalog: "synthetic_warmup", Dataset: runfmt.Dataset{SourceCounts: map[string]int64{}},
		StartedAt: &started, Machine: runfmt.Machine{Cores: &cores, MemoryBytes: &mem},
		Timings: runfmt.Timings{ResolutionNs: 1}, Verification: runfmt.Verification{Status: runfmt.Verified},
		Outcome: runfmt.Outcome{Status: runfmt.OutcomeComplete}}
}

// Group writes runs seeds first..first+n-1 of one build under parent/label/run-k.
func Group(parent string, n int, first uint64, s Spec) (string, error) {
	dir := filepath.Join(parent, s.Label)
	for k := 0; k < n; k++ {
		s.Seed = first + uint64(k)
		if _, err := Write(filepath.Join(dir, fmt.Sprintf("run-%d", k+1)), s); err != nil {
			return "", err
		}
	}
	return dir, nil
}
