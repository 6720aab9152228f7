package loader_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

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
