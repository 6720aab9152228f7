package loader_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warmstat/warmstat/internal/evitatest"
	"github.com/warmstat/warmstat/loader"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/seed"
	"github.com/warmstat/warmstat/workload"
)

// The copy — live, and replayed from a workload file — is judged by the server itself: for the fixture catalog (every schema
// feature, conditional facets and bucketed histograms included) and for a seeded
// catalog (the default profile, which declares no conditional expressions since 2026-12), a full REST dump of source and target after a load — catalog schema, every
// entity schema, every entity with all attributes, associated data, prices, hierarchy
// and references with attributes, in all locales — is identical but for versions.
// (The seeded catalog could not be dumped at all while Brand.products claimed
// ZERO_OR_ONE; conditional facets and histograms were never exercised by a copy.)
func TestCopyIsIdenticalThroughREST(t *testing.T) {
	srcSrv, src, dstSrv, dst := evitatest.StartTwoREST(t)
	ctx := context.Background()
	evitatest.LoadFixture(t, ctx, src, "fixture")
	if _, err := seed.Seed(ctx, src, "seeded", seed.DefaultProfile(), 0.002, 7, false, nil); err != nil {
		t.Fatal(err)
	}
	type replayed struct {
		wl, sum string
		dump    *evitatest.RESTDump
		n       int64
	}
	workloads := map[string]replayed{}
	for _, cat := range []string{"fixture", "seeded"} {
		c := loader.Config{Source: src, Target: dst, SourceCatalog: cat, TargetCatalog: cat + "_copy", Out: filepath.Join(t.TempDir(), cat),
			BatchSize: 50, Manifest: runfmt.Manifest{Build: runfmt.Build{Label: "test"}, Loader: runfmt.Loader{Version: "test"}}}
		res, err := loader.Run(ctx, c)
		if err != nil || res.Manifest.ExitCode != 0 {
			t.Fatalf("%s: load: %v", cat, err)
		}
		a := evitatest.RequireRESTDump(t, ctx, srcSrv.Addr, cat)
		b := evitatest.RequireRESTDump(t, ctx, dstSrv.Addr, cat+"_copy")
		if d := a.Diff(b, 20); len(d) > 0 {
			t.Errorf("%s: the copy differs from its source, as the server renders them:\n%s", cat, strings.Join(d, "\n"))
		}
		n := 0
		for _, es := range a.Entities {
			n += len(es)
		}
		if int64(n) != res.Manifest.Entities || n == 0 {
			t.Errorf("%s: REST lists %d entities, the load copied %d", cat, n, res.Manifest.Entities)
		}
		// the features a copy used to lose are really in the compared schemas (the
		// fixture's: the seeded default no longer declares them)
		pv, _ := a.Schemas["Product"]["references"].(map[string]any)["parameterValues"].(map[string]any)
		for _, f := range []string{"facetedPartially", "bucketed", "bucketedPartially"} {
			if l, _ := pv[f].([]any); len(l) == 0 && cat == "fixture" {
				t.Errorf("%s: Product.parameterValues has no %s: the comparison proves nothing about it", cat, f)
			}
		}
		if v := a.CardinalityViolations(5); len(v) > 0 {
			t.Errorf("%s: %s", cat, strings.Join(v, "; "))
		}
		// the same catalog read once into a workload file and replayed: the replayed
		// target is its source too, and its run names the same dataset
		wl := filepath.Join(t.TempDir(), cat+".workload")
		info, err := loader.Extract(ctx, loader.ExtractConfig{Source: src, SourceCatalog: cat, Out: wl, BatchSize: 50, SourceMode: "attach"})
		if err != nil || info.Trailer.Entities != res.Manifest.Entities || info.Header.Fingerprint != res.Manifest.Dataset.Fingerprint {
			t.Fatalf("%s: extract: %v %+v", cat, err, info)
		}
		r, err := workload.Open(wl)
		if err != nil {
			t.Fatal(err)
		}
		rc := loader.Config{Target: dst, TargetCatalog: cat + "_replay", Out: filepath.Join(t.TempDir(), cat+"-replay"), Replay: r, ReplayPath: wl,
			ReplaySHA256: info.SHA256, Manifest: runfmt.Manifest{Build: runfmt.Build{Label: "test"}, Loader: runfmt.Loader{Version: "test"}}}
		rres, err := loader.Run(ctx, rc)
		r.Close()
		if err != nil || rres.Manifest.ExitCode != 0 || rres.Manifest.Verification.Status != runfmt.Verified {
			t.Fatalf("%s: replay: %v %+v", cat, err, rres)
		}
		rm := rres.Manifest
		if rm.SourceMode() != runfmt.SourceReplay || rm.Source.WorkloadSHA256 != info.SHA256 || rm.Dataset.Fingerprint != res.Manifest.Dataset.Fingerprint ||
			rm.Entities != res.Manifest.Entities || rm.Conditions.BatchSize != 50 || rm.SourceCatalog != cat {
			t.Fatalf("%s: replay manifest %+v source %+v", cat, rm, rm.Source)
		}
		if back, err := runfmt.ReadManifest(filepath.Join(rres.Dir, runfmt.ManifestFile)); err != nil || back.SourceMode() != runfmt.SourceReplay {
			t.Fatalf("%s: replay manifest on disk: %v", cat, err)
		}
		c2 := evitatest.RequireRESTDump(t, ctx, dstSrv.Addr, cat+"_replay")
		if d := a.Diff(c2, 20); len(d) > 0 {
			t.Errorf("%s: the replayed copy differs from its source, as the server renders them:\n%s", cat, strings.Join(d, "\n"))
		}
		workloads[cat] = replayed{wl, info.SHA256, a, res.Manifest.Entities}
	}
	// the same workloads applied by the embedded writer (no transport); its storage,
	// closed as a server's stop closes it and opened by a server afterwards, dumps equal
	kept := map[string]string{}
	for _, cat := range []string{"fixture", "seeded"} {
		w := workloads[cat]
		r, err := workload.Open(w.wl)
		if err != nil {
			t.Fatal(err)
		}
		storage := filepath.Join(t.TempDir(), "storage")
		res, err := loader.Spawn(ctx, loader.SpawnConfig{Server: evitatest.Server(t), WorkDir: filepath.Join(t.TempDir(), "work"), ServerHeap: 1 << 30,
			Compress: true, Probe: evitatest.Probe, Embedded: true, KeepWriterStorage: storage},
			loader.Config{Out: filepath.Join(t.TempDir(), cat+"-embedded"), Replay: r, ReplayPath: w.wl, ReplaySHA256: w.sum,
				Manifest: runfmt.Manifest{Build: runfmt.Build{Label: "test"}, Loader: runfmt.Loader{Version: "test"}}})
		r.Close()
		if err != nil {
			t.Fatalf("%s: embedded replay: %v", cat, err)
		}
		m := res.Manifest
		if m.ExitCode != 0 || m.Verification.Status != runfmt.Verified || m.TargetMode != runfmt.TargetEmbedded || m.Entities != w.n ||
			m.SourceMode() != runfmt.SourceReplay || m.WriterGC == nil || m.Server.Version == "" || m.Server.JVM == nil {
			t.Fatalf("%s: embedded run: %+v", cat, m)
		}
		checkCostColumns(t, cat, res.Dir, m)
		kept[cat] = filepath.Join(storage, cat)
	}
	srv, _ := evitatest.StartRESTOn(t, kept)
	for _, cat := range []string{"fixture", "seeded"} {
		d := evitatest.RequireRESTDump(t, ctx, srv.Addr, cat)
		if diff := workloads[cat].dump.Diff(d, 20); len(diff) > 0 {
			t.Errorf("%s: the embedded writer's catalog differs from its source, as a server renders them:\n%s", cat, strings.Join(diff, "\n"))
		}
	}
}

// checkCanaryFile holds the run's canary.csv against its manifest: a line per sample
// the manifest's medians were taken of, in the order they began, each kind's time
// positive, the last beginning inside the load (the upserts' wall, wall, is less
// than the window's).
func checkCanaryFile(t *testing.T, cat, dir string, samples int, wall int64) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, runfmt.CanaryFile))
	if err != nil {
		t.Fatalf("%s: %v", cat, err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if lines[0] != "at_ns,alu_ns,l3_ns,dram_ns" || len(lines)-1 != samples {
		t.Fatalf("%s: %s has header %q and %d samples; the manifest's canary %d", cat, runfmt.CanaryFile, lines[0], len(lines)-1, samples)
	}
	last := int64(-1)
	for i, l := range lines[1:] {
		var at, alu, l3, dram int64
		if _, err := fmt.Sscanf(l, "%d,%d,%d,%d", &at, &alu, &l3, &dram); err != nil || at <= last || alu <= 0 || l3 <= 0 || dram <= 0 {
			t.Fatalf("%s: %s line %d %q: not a later sample with positive times (%v)", cat, runfmt.CanaryFile, i+2, l, err)
		}
		last = at
	}
	if last > 2*wall+int64(time.Second) {
		t.Errorf("%s: the last canary sample began at %s, after a load whose upserts took %s", cat, time.Duration(last), time.Duration(wall))
	}
}

// checkCostColumns holds a real embedded run's cost columns against what the kernel
// and the JVM say of the applying thread over the whole load: every upsert's CPU and
// run-queue wait lie inside its wall clock (the reader refuses a row otherwise), every
// upsert allocates, the upserts' CPU adds up to the thread's CPU clock as the kernel
// keeps it (its schedstat, read by warmstat, not by the JVM) within 2 %, and their
// allocations to the thread's own counter within 2 %: the applying thread does nothing
// but upserts in the window, so nothing of its work escapes the columns. The machine's
// speed was measured beside the load.
func checkCostColumns(t *testing.T, cat, dir string, m *runfmt.Manifest) {
	t.Helper()
	run, err := runfmt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var cpu, alloc, wait, wall, rows int64
	err = run.ScanRows(func(r runfmt.Row) error {
		if r.CPUNs < 0 || r.AllocBytes < 0 || r.WaitNs < 0 {
			return fmt.Errorf("row %d (%s %d): a cost figure missing: %+v", r.Seq, r.Collection, r.PrimaryKey, r)
		}
		if r.AllocBytes == 0 {
			return fmt.Errorf("row %d (%s %d) allocated nothing", r.Seq, r.Collection, r.PrimaryKey)
		}
		cpu, alloc, wait, wall, rows = cpu+r.CPUNs, alloc+r.AllocBytes, wait+r.WaitNs, wall+r.UpsertNs, rows+1
		return nil
	})
	if err != nil {
		t.Fatalf("%s: cost columns: %v", cat, err)
	}
	f := m.Factors
	if f == nil || f.UpsertThread == nil || f.UpsertThread.SchedCPUNs == nil || f.Canary == nil || f.Canary.Samples == 0 {
		t.Fatalf("%s: the load window's tally of the applying thread or the canary is missing: %+v", cat, f)
	}
	checkCanaryFile(t, cat, dir, f.Canary.Samples, wall)
	ut := f.UpsertThread
	within := func(what string, part, whole int64) {
		if whole <= 0 || float64(part) < 0.98*float64(whole) || part > whole {
			t.Errorf("%s: the upserts' %s add up to %d, the applying thread's over the load %d (%.2f %%): not within 2 %% below it",
				cat, what, part, whole, 100*float64(part)/float64(whole))
		}
	}
	within("CPU", cpu, *ut.SchedCPUNs)
	within("allocated bytes", alloc, ut.AllocBytes)
	t.Logf("%s: %d upserts, wall %s, CPU %s (the thread's %s by its schedstat, %s by the JVM), waiting %s, allocated %s (the thread's %s); canary %.0f/%.0f/%.0f µs",
		cat, rows, time.Duration(wall), time.Duration(cpu), time.Duration(*ut.SchedCPUNs), time.Duration(ut.CPUNs), time.Duration(wait),
		runfmt.FormatSize(alloc), runfmt.FormatSize(ut.AllocBytes), f.Canary.ALUNs/1e3, f.Canary.L3Ns/1e3, f.Canary.DRAMNs/1e3)
}
