package loader_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/internal/evitatest"
	"github.com/warmstat/warmstat/loader"
	"github.com/warmstat/warmstat/runfmt"
)

// servers starts a source server holding the fixture catalog "shop" and an empty target.
func servers(t *testing.T) (src, dst *evita.Client, srcSrv, dstSrv interface{ Kill() }) {
	t.Helper()
	s1, c1 := evitatest.Start(t)
	s2, c2 := evitatest.Start(t)
	evitatest.LoadFixture(t, context.Background(), c1, "shop")
	return c1, c2, s1, s2
}

func config(src, dst *evita.Client, out string) loader.Config {
	return loader.Config{Source: src, Target: dst, SourceCatalog: "shop", TargetCatalog: "shop_warmup", Out: out, BatchSize: 4,
		Manifest: runfmt.Manifest{Build: runfmt.Build{Label: "test"}, Loader: runfmt.Loader{Version: "test"}}}
}

func rows(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, runfmt.EntitiesFile))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n") - 1
}

func TestLoadVerified(t *testing.T) {
	src, dst, _, _ := servers(t)
	out := filepath.Join(t.TempDir(), "run")
	res, err := loader.Run(context.Background(), config(src, dst, out))
	if err != nil {
		t.Fatal(err)
	}
	m := res.Manifest
	n := len(evitatest.FixtureEntities())
	if m.ExitCode != 0 || m.Verification.Status != runfmt.Verified || m.GoLive.Status != runfmt.GoLiveOK || m.Entities != int64(n) || rows(t, out) != n {
		t.Fatalf("exit %d verification %s goLive %+v entities %d", m.ExitCode, m.Verification.Status, m.GoLive, m.Entities)
	}
	if m.Timings.LoadWallNs < m.Timings.UpsertNs+m.Timings.SourceReadNs || m.Timings.SchemaReplicationNs == nil || m.Dataset.Fingerprint == "" {
		t.Fatalf("timings %+v", m.Timings)
	}
	var walls int64
	for _, c := range m.Collections { // a collection's wall holds its reads and upserts
		if c.WallNs < c.UpsertNs+c.ReadNs || c.WallNs <= 0 {
			t.Errorf("%s: wall %d < upsert %d + read %d", c.Name, c.WallNs, c.UpsertNs, c.ReadNs)
		}
		walls += c.WallNs
	}
	if walls > m.Timings.LoadWallNs {
		t.Errorf("collection walls add up to %d, more than the load wall-clock %d", walls, m.Timings.LoadWallNs)
	}
	run, err := runfmt.Open(out) // the run directory reads back, CSV checked against the manifest
	if err != nil {
		t.Fatal(err)
	}
	s, err := analyze.Summarize(run, analyze.QuantilesJava)
	if err != nil || s.Overall.Count != int64(n) || s.Overall.MinNs <= 0 {
		t.Fatalf("%v %+v", err, s)
	}
	if st, ok, err := dst.CatalogState(context.Background(), "shop_warmup"); err != nil || !ok || st != evita.CatalogAlive {
		t.Fatal("target not ALIVE")
	}
	// with prefetch (batches of 4: the next fetch overlaps the upserts) the same catalog loads the same rows
	pc := config(src, dst, filepath.Join(t.TempDir(), "prefetch"))
	pc.TargetCatalog, pc.Prefetch = "shop_prefetch", true
	pres, err := loader.Run(context.Background(), pc)
	if err != nil || pres.Manifest.ExitCode != 0 || !pres.Manifest.Conditions.Prefetch || pres.Manifest.Entities != int64(n) {
		t.Fatalf("prefetch run: %v %+v", err, pres.Manifest.Verification)
	}
	// the same target again is refused unless asked to replace it
	if _, err := loader.Run(context.Background(), config(src, dst, filepath.Join(t.TempDir(), "again"))); err == nil || !strings.Contains(err.Error(), "--replace-target") {
		t.Fatalf("existing target: %v", err)
	}
	t.Logf("load %.3f s, upsert %.3f s, read %.3f s, goLive %.3f s", float64(m.Timings.LoadWallNs)/1e9, float64(m.Timings.UpsertNs)/1e9,
		float64(m.Timings.SourceReadNs)/1e9, float64(*m.GoLive.Ns)/1e9)
}

func TestTargetKilledMidLoad(t *testing.T) {
	src, dst, _, dstSrv := servers(t)
	out := filepath.Join(t.TempDir(), "run")
	c := config(src, dst, out)
	c.AfterUpsert = func(coll string, n int) {
		if coll == "Category" && n == 2 {
			dstSrv.Kill()
		}
	}
	begin := time.Now()
	res, err := loader.Run(context.Background(), c)
	var ab *loader.AbortError
	if !errors.As(err, &ab) || time.Since(begin) > 60*time.Second {
		t.Fatalf("after %s: %v", time.Since(begin), err)
	}
	m := res.Manifest
	if m.ExitCode != 1 || m.Outcome.Status != runfmt.OutcomeAborted || !strings.Contains(m.Outcome.Detail, "upserting Category") {
		t.Fatalf("manifest %+v", m.Outcome)
	}
	// the CSV holds every completed upsert: 3 brands + 2 categories
	if n := rows(t, out); n != 5 || m.Entities != 5 {
		t.Fatalf("rows %d entities %d", n, m.Entities)
	}
	if _, err := runfmt.Open(out); err != nil {
		t.Fatalf("the aborted run must still read back: %v", err)
	}
}

func TestSourceKilledMidLoad(t *testing.T) {
	src, dst, srcSrv, _ := servers(t)
	out := filepath.Join(t.TempDir(), "run")
	c := config(src, dst, out)
	c.AfterUpsert = func(coll string, n int) {
		if coll == "Product" && n == 1 {
			srcSrv.Kill()
		}
	}
	res, err := loader.Run(context.Background(), c)
	if err == nil || res.Manifest.ExitCode != 1 || !strings.Contains(res.Manifest.Outcome.Detail, "reading Product") {
		t.Fatalf("%v %+v", err, res)
	}
}

// A source that grows during the load leaves the target short: exit 1, named.
func TestShortLoad(t *testing.T) {
	src, dst, _, _ := servers(t)
	out := filepath.Join(t.TempDir(), "run")
	c := config(src, dst, out)
	added := false
	c.AfterUpsert = func(coll string, n int) {
		if coll == "Tag" || added || coll != "Product" {
			return
		}
		added = true
		ctx := context.Background()
		s, err := src.Open(ctx, "shop", true)
		if err != nil {
			t.Error(err)
			return
		}
		extra := evitatest.Brand(99)
		if err := s.Upsert(ctx, evita.BuildUpsert(extra, evita.CopyPlan{})); err != nil {
			t.Error(err)
		}
		s.Close(ctx)
	}
	res, err := loader.Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Manifest
	if m.ExitCode != 1 || m.Verification.Status != runfmt.Mismatch {
		t.Fatalf("exit %d verification %+v", m.ExitCode, m.Verification)
	}
	for _, cc := range m.Verification.Counts {
		if cc.Collection == "Brand" && (cc.Source != 4 || cc.Target != 3) {
			t.Fatalf("Brand check %+v", cc)
		}
	}
}

func TestInterrupted(t *testing.T) {
	src, dst, _, _ := servers(t)
	out := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithCancel(context.Background())
	c := config(src, dst, out)
	c.AfterUpsert = func(coll string, n int) {
		if coll == "Brand" && n == 2 {
			cancel()
		}
	}
	res, err := loader.Run(ctx, c)
	if !errors.Is(err, context.Canceled) || res.Manifest.Outcome.Status != runfmt.OutcomeInterrupted || res.Manifest.ExitCode != 1 {
		t.Fatalf("%v %+v", err, res.Manifest.Outcome)
	}
	if n := rows(t, out); n != 2 {
		t.Fatalf("rows %d: the in-flight upsert completes, nothing after it starts", n)
	}
}
