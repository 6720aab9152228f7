package runfmt

import (
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/runs/warmstat-* fixtures")

// nativeRun builds a deterministic warmstat-format run (as the loader would write it)
// into dir. aborted makes it stop part-way through Product, as after a target crash.
func nativeRun(t testing.TB, dir string, aborted bool) *Manifest {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, 13))
	type spec struct {
		name   string
		n      int64
		meanNs float64
		sigma  float64
	}
	specs := []spec{{"Category", 60, 2.1e6, 0.4}, {"Product", 400, 7.2e6, 0.35}, {"Stock", 150, 140e3, 0.3}, {"Tag", 90, 120e3, 0.5}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, EntitiesFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, _ := NewCSVWriter(f)
	var clock, readSum, upsertSum, batch int64
	var colls []Collection
	counts := map[string]int64{}
	for _, s := range specs {
		c := Collection{Name: s.name}
		start := clock
		counts[s.name] = s.n
		for i := int64(0); i < s.n; i++ {
			if aborted && s.name == "Product" && i == 250 {
				break
			}
			if i%100 == 0 {
				batch++
				rd := int64(s.meanNs * 0.05 * 100 * (0.8 + 0.4*rng.Float64()))
				clock += rd
				c.ReadNs += rd
			}
			up := int64(s.meanNs * math.Exp(s.sigma*rng.NormFloat64()-s.sigma*s.sigma/2))
			if err := w.Write(Row{Collection: s.name, PrimaryKey: int32(1000 + 3*i), Batch: batch, StartNs: clock, UpsertNs: up}); err != nil {
				t.Fatal(err)
			}
			clock += up + 9_000
			c.UpsertNs += up
			c.Entities++
		}
		c.WallNs = clock - start
		readSum += c.ReadNs
		upsertSum += c.UpsertNs
		colls = append(colls, c)
		clock += 3_000_000 // primary-key listing of the next collection
		if aborted && s.name == "Product" {
			break
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	heap, rheap, mem := int64(2<<30), int64(1<<30), int64(24<<30)
	cores := 2
	yes, no := true, false
	young, full := int64(14), int64(0)
	started := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	repl := int64(412_000_000)
	m := &Manifest{Schema: SchemaV1, RunID: "20261129T120000-1", Build: Build{Label: "2026.2.3", Commit: ""},
		Loader: Loader{Name: LoaderWarmstat, Version: "test"}, Server: Server{Version: "2026.2.3", Address: "127.0.0.1:40001", MaxHeapBytes: &heap},
		Reader: Reader{MaxHeapBytes: &rheap}, TargetMode: TargetRemote,
		Conditions:    Conditions{StorageCompress: &yes, CacheEnabled: &no, TrafficRecording: &no, BatchSize: 100},
		SourceCatalog: "seed", TargetCatalog: "seed_warmup", Dataset: Dataset{SourceCounts: counts, Fingerprint: Fingerprint(counts)},
		StartedAt: &started, Machine: Machine{Cores: &cores, MemoryBytes: &mem},
		Timings:     Timings{ResolutionNs: 1, LoadWallNs: clock, UpsertNs: upsertSum, SourceReadNs: readSum, SchemaReplicationNs: &repl},
		Collections: colls,
		WriterGC:    &GCStats{Collections: young + full, YoungPauses: &young, FullPauses: &full, PauseNs: 83_000_000, ShareOfWallPc: 1.9},
		Outcome:     Outcome{Status: OutcomeComplete},
	}
	for _, c := range colls {
		m.Entities += c.Entities
	}
	if aborted {
		m.Outcome = Outcome{Status: OutcomeAborted, Detail: "target unavailable during upsert of Product pk 1750 (250 of 400 loaded)"}
		m.GoLive = GoLive{Status: GoLiveSkipped}
		m.Verification = Verification{Status: Unverified, Error: "run aborted before verification"}
	} else {
		gl := int64(1_830_000_000)
		m.GoLive = GoLive{Status: GoLiveOK, Ns: &gl}
		m.Verification.Status = Verified
		for _, c := range colls {
			m.Verification.Counts = append(m.Verification.Counts, CountCheck{Collection: c.Name, Source: c.Entities, Expected: c.Entities, Target: c.Entities, Loaded: c.Entities})
		}
	}
	m.ExitCode = ExitCodeFor(m.Outcome.Status, m.Verification.Status)
	if err := WriteManifest(filepath.Join(dir, ManifestFile), m); err != nil {
		t.Fatal(err)
	}
	return m
}

// The committed warmstat-format fixtures are what nativeRun produces, and they open
// and validate. Run with -update to rewrite them.
func TestNativeFixtures(t *testing.T) {
	for name, aborted := range map[string]bool{"warmstat-verified": false, "warmstat-aborted": true} {
		dir := filepath.Join("..", "testdata", "runs", name)
		if *update {
			os.RemoveAll(dir)
			nativeRun(t, dir, aborted)
		}
		fresh := t.TempDir()
		nativeRun(t, fresh, aborted)
		for _, f := range []string{ManifestFile, EntitiesFile} {
			a, err1 := os.ReadFile(filepath.Join(dir, f))
			b, err2 := os.ReadFile(filepath.Join(fresh, f))
			if err1 != nil || err2 != nil || string(a) != string(b) {
				t.Fatalf("%s/%s is stale (run go test ./runfmt -update): %v %v", name, f, err1, err2)
			}
		}
		run, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := run.ScanRows(nil); err != nil {
			t.Fatal(err)
		}
		if aborted && (run.Manifest.ExitCode != 1 || run.Manifest.Outcome.Status != OutcomeAborted) {
			t.Fatalf("aborted fixture: %+v", run.Manifest.Outcome)
		}
	}
}
