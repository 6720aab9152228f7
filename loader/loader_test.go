package loader_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evita/pb"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/internal/evitatest"
	"github.com/warmstat/warmstat/loader"
	"github.com/warmstat/warmstat/runfmt"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// servers starts a source server holding the fixture catalog "shop" and an empty target.
func servers(t *testing.T) (src, dst *evita.Client, srcSrv, dstSrv *evitaserver.Server) {
	t.Helper()
	s1, c1, s2, c2 := evitatest.StartTwo(t)
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
	if _, err := loader.Run(context.Background(), config(src, dst, filepath.Join(t.TempDir(), "again"))); !errors.Is(err, loader.ErrTargetExists) || !strings.Contains(err.Error(), `target catalog "shop_warmup" already exists`) {
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
		if err := s.Upsert(ctx, extra, evita.CopyPlan{}); err != nil {
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

// goLive is recorded ok only when the catalog was read back ALIVE. The faults come from
// a proxy in front of the real target: a real server cannot be made to fail the state
// call at exactly that moment, nor to report a state other than ALIVE after a goLive
// that completed.
func TestGoLiveOutcomes(t *testing.T) {
	src, _, _, dstSrv := servers(t)
	proxy := evitatest.StartProxy(t, dstSrv.Addr)
	dst, err := evita.Dial(context.Background(), proxy.Addr, evita.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	warmingUp := evita.CatalogWarmingUp
	for i, c := range []struct {
		name   string
		fault  func(calls int) (proto.Message, error) // for GetCatalogState after goLive
		status string
		detail string
	}{
		{"one failed state call is retried", func(calls int) (proto.Message, error) {
			if calls == 1 {
				return nil, status.Error(codes.Unavailable, "injected")
			}
			return nil, nil
		}, runfmt.GoLiveOK, ""},
		{"state never readable", func(int) (proto.Message, error) { return nil, status.Error(codes.Unavailable, "injected") },
			runfmt.GoLiveUnconfirmed, "could not be read"},
		{"not ALIVE afterwards", func(int) (proto.Message, error) {
			return &pb.GrpcGetCatalogStateResponse{CatalogState: &warmingUp}, nil
		}, runfmt.GoLiveFailed, "the catalog is WARMING_UP, not ALIVE"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			live, calls := false, 0
			proxy.SetFault(func(ctx context.Context, method string) (proto.Message, error) {
				mu.Lock()
				defer mu.Unlock()
				switch evitatest.Short(method) {
				case "GoLiveAndCloseWithProgress":
					live = true
				case "GetCatalogState":
					if live {
						calls++
						return c.fault(calls)
					}
				}
				return nil, nil
			})
			defer proxy.SetFault(nil)
			cfg := config(src, dst, filepath.Join(t.TempDir(), "run"))
			cfg.TargetCatalog = fmt.Sprintf("golive%d", i)
			cfg.GoLiveConfirm = 5 * time.Second
			res, err := loader.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			g := res.Manifest.GoLive
			if g.Status != c.status || !strings.Contains(g.Error, c.detail) || g.Ns == nil {
				t.Fatalf("goLive recorded as %+v, want %s (%s)", g, c.status, c.detail)
			}
			back, err := runfmt.ReadManifest(filepath.Join(res.Dir, runfmt.ManifestFile))
			if err != nil || back.GoLive.Status != c.status {
				t.Fatalf("manifest on disk: %v %+v", err, back)
			}
		})
	}
	interruptedAfterTheLoad(t, src, dst, proxy)
}

// An interrupt (the first Ctrl-C cancels the load's context) during goLive or during
// verification is an interrupted run, exit 1, whatever the phase — not a failed goLive
// or an unverified run (exit 2) — and what goLive did stays recorded: whether the server
// reached ALIVE anyway is read once more. The proxy in front of the real target marks
// the moment: the interrupt arrives while goLive's call, or the first count, is on its
// way to the server.
// (Run from TestGoLiveOutcomes, on its servers.)
func interruptedAfterTheLoad(t *testing.T, src, dst *evita.Client, proxy *evitatest.Proxy) {
	for i, c := range []struct {
		phase, at  string // the call during which the interrupt arrives
		goLive     string
		detail     string
		afterAlive bool // the interrupt comes after goLive completed
	}{
		{"goLive", "GoLiveAndCloseWithProgress", runfmt.GoLiveFailed, "interrupted during goLive", false},
		{"verification", "Query", runfmt.GoLiveOK, "interrupted during verification", true},
	} {
		t.Run("interrupted during "+c.phase, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			live := false
			proxy.SetFault(func(_ context.Context, method string) (proto.Message, error) {
				mu.Lock()
				defer mu.Unlock()
				m := evitatest.Short(method)
				if m == "GoLiveAndCloseWithProgress" {
					live = true
				}
				if live && m == c.at {
					cancel() // Ctrl-C while this call is on its way; the call itself goes on
				}
				return nil, nil
			})
			defer proxy.SetFault(nil)
			cfg := config(src, dst, filepath.Join(t.TempDir(), "run"))
			cfg.TargetCatalog = fmt.Sprintf("interrupted%d", i)
			cfg.GoLiveConfirm = 5 * time.Second
			res, err := loader.Run(ctx, cfg)
			if !errors.Is(err, context.Canceled) || res == nil {
				t.Fatalf("%v %+v", err, res)
			}
			m, rerr := runfmt.ReadManifest(filepath.Join(res.Dir, runfmt.ManifestFile))
			if rerr != nil || m.Outcome.Status != runfmt.OutcomeInterrupted || m.Outcome.Detail != c.detail || m.ExitCode != 1 ||
				m.Verification.Status != runfmt.Unverified || m.GoLive.Status != c.goLive || m.GoLive.Ns == nil {
				t.Fatalf("manifest on disk: %v outcome %+v exit %d verification %+v goLive %+v", rerr, m.Outcome, m.ExitCode, m.Verification, m.GoLive)
			}
			if !c.afterAlive && m.GoLive.ServerReachedAlive == nil {
				t.Fatalf("an interrupted goLive must say whether the server reached ALIVE anyway: %+v", m.GoLive)
			}
			if int(m.Entities) != len(evitatest.FixtureEntities()) {
				t.Fatalf("the load itself completed: %d entities", m.Entities)
			}
		})
	}
	// after the last upsert, before goLive (the load's clock has just stopped): goLive
	// is not started, nothing is attempted with a cancelled context
	t.Run("interrupted before goLive", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cfg := config(src, dst, filepath.Join(t.TempDir(), "run"))
		cfg.TargetCatalog = "interrupted_before"
		cfg.Window = func(phase string, begin bool) error {
			if phase == runfmt.PhaseLoad && !begin {
				cancel()
			}
			return nil
		}
		var warnings strings.Builder
		cfg.Warnings = &warnings
		res, err := loader.Run(ctx, cfg)
		if !errors.Is(err, context.Canceled) || res == nil || !strings.HasPrefix(err.Error(), "interrupted after the load, before goLive") {
			t.Fatalf("%v %+v", err, res)
		}
		m := res.Manifest
		if m.Outcome.Status != runfmt.OutcomeInterrupted || m.Outcome.Detail != "interrupted after the load, before goLive" || m.ExitCode != 1 ||
			m.GoLive.Status != runfmt.GoLiveSkipped || m.Verification.Status != runfmt.Unverified || strings.Contains(warnings.String(), "canceled") {
			t.Fatalf("outcome %+v goLive %+v verification %+v warnings %q", m.Outcome, m.GoLive, m.Verification, warnings.String())
		}
	})
}

// Faults in the middle of a source call, injected by proxies in front of the real
// servers (a real server cannot be made to be mid-answer at the moment of an interrupt):
// an interrupt arriving while a fetch is in flight is recorded as interrupted (not
// aborted), and with prefetch an early end never leaves a fetch running after Run.
func TestFaultsDuringSourceCalls(t *testing.T) {
	_, _, srcSrv, dstSrv := servers(t)
	sp, tp := evitatest.StartProxy(t, srcSrv.Addr), evitatest.StartProxy(t, dstSrv.Addr)
	src, err := evita.Dial(context.Background(), sp.Addr, evita.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := evita.Dial(context.Background(), tp.Addr, evita.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()

	t.Run("interrupt during a fetch", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var mu sync.Mutex
		fetches := 0
		sp.SetFault(func(pctx context.Context, method string) (proto.Message, error) {
			if evitatest.Short(method) != "QueryList" {
				return nil, nil
			}
			mu.Lock()
			fetches++
			n := fetches
			mu.Unlock()
			if n == 3 { // the loader is inside Fetch now: interrupt it there
				cancel()
				<-pctx.Done()
				return nil, pctx.Err()
			}
			return nil, nil
		})
		defer sp.SetFault(nil)
		cfg := config(src, dst, filepath.Join(t.TempDir(), "run"))
		cfg.TargetCatalog, cfg.BatchSize = "interrupted", 1
		res, err := loader.Run(ctx, cfg)
		if !errors.Is(err, context.Canceled) || res == nil || res.Manifest.Outcome.Status != runfmt.OutcomeInterrupted {
			t.Fatalf("err %v, outcome %+v", err, res)
		}
	})
	t.Run("prefetch ends with its collection", func(t *testing.T) {
		var mu sync.Mutex
		inFlight, upserts, after := 0, 0, 0
		returned := false
		sp.SetFault(func(pctx context.Context, method string) (proto.Message, error) {
			if evitatest.Short(method) != "QueryList" {
				return nil, nil
			}
			mu.Lock()
			inFlight++
			if returned {
				after++
			}
			mu.Unlock()
			time.Sleep(500 * time.Millisecond) // a slow source: the prefetch is still running when the upsert fails
			mu.Lock()
			inFlight--
			mu.Unlock()
			return nil, nil
		})
		defer sp.SetFault(nil)
		tp.SetFault(func(_ context.Context, method string) (proto.Message, error) {
			if evitatest.Short(method) != "UpsertEntity" {
				return nil, nil
			}
			mu.Lock()
			defer mu.Unlock()
			if upserts++; upserts > 2 {
				return nil, status.Error(codes.Unavailable, "injected: target gone")
			}
			return nil, nil
		})
		defer tp.SetFault(nil)
		cfg := config(src, dst, filepath.Join(t.TempDir(), "run"))
		cfg.TargetCatalog, cfg.BatchSize, cfg.Prefetch = "prefetch", 1, true
		res, err := loader.Run(context.Background(), cfg)
		mu.Lock()
		returned = true
		n := inFlight
		mu.Unlock()
		if err == nil || res == nil || res.Manifest.Outcome.Status != runfmt.OutcomeAborted {
			t.Fatalf("err %v res %+v", err, res)
		}
		if n != 0 {
			t.Fatalf("%d source fetch(es) still running after Run returned", n)
		}
		time.Sleep(time.Second)
		mu.Lock()
		defer mu.Unlock()
		if after != 0 {
			t.Fatalf("%d source fetch(es) started after Run returned", after)
		}
		if m := res.Manifest; m.Timings.LoopOverheadNs != nil {
			t.Fatalf("loop overhead recorded under prefetch: %d", *m.Timings.LoopOverheadNs)
		}
	})
}
