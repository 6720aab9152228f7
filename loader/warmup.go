package loader

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/workload"
)

// ErrWarmUpFailed: a warm-up load did not complete and publish; nothing was measured.
var ErrWarmUpFailed = errors.New("warm-up load failed")

// warmUpCatalog is the throwaway catalog a warm-up load publishes: never the
// measured catalog's name, so the measured load starts from a catalog that never was.
func warmUpCatalog(target string) string { return target + "WarmUp" }

// warmUp runs n loads of the measured load's source into a throwaway catalog of the
// writer under test, each published with goLive, verified and then deleted, before the
// measured load: the writer's JVM then runs the write path and goLive compiled, as a
// production server's next publish does, instead of timing the JIT compiling them. The
// loads are ordinary runs (written into the work directory and removed), with no
// window, no profile and none of the run's hooks; the caller records what they took.
func warmUp(ctx context.Context, c Config, n int, work string, jit func() (evitaserver.JIT, error)) ([]runfmt.WarmUpLoad, error) {
	target := cmp.Or(c.TargetCatalog, c.SourceCatalog)
	name := warmUpCatalog(target)
	var out []runfmt.WarmUpLoad
	for i := 1; i <= n; i++ {
		w := c
		w.TargetCatalog, w.ReplaceTarget = name, true // the writer is a server this run started: all it holds is ours
		w.Out = filepath.Join(work, fmt.Sprintf("warm-up-%d", i))
		w.Window, w.finalize, w.AfterUpsert, w.Duet = nil, nil, nil, nil // a duet's warm-ups run at once, unsynchronised
		w.Manifest.RunID = c.Manifest.RunID + fmt.Sprintf("-warm-up-%d", i)
		w.Manifest.Conditions.WarmUpLoads, w.Manifest.WarmUp = 0, nil
		if c.Replay != nil { // a reader of its own: the measured load's is read once, by it
			r, err := workload.Open(c.ReplayPath)
			if err != nil {
				return out, err
			}
			w.Replay = r
		}
		c.logf("warm-up load %d of %d into catalog %s (not measured) ...\n", i, n, name)
		jit0, jerr := jit()
		res, err := Run(ctx, w)
		if w.Replay != nil {
			w.Replay.Close()
		}
		if res != nil {
			os.RemoveAll(w.Out)
		}
		if err == nil && (res.Manifest.ExitCode != 0 || res.Manifest.GoLive.Status != runfmt.GoLiveOK) {
			err = fmt.Errorf("%s (goLive %s)", cmp.Or(res.Manifest.Outcome.Detail, res.Manifest.Verification.Error, res.Manifest.Outcome.Status),
				res.Manifest.GoLive.Status)
		}
		if err != nil {
			return out, fmt.Errorf("%w (%d of %d into %s): %w", ErrWarmUpFailed, i, n, name, err)
		}
		m := res.Manifest
		rec := runfmt.WarmUpLoad{Entities: m.Entities, LoadWallNs: m.Timings.LoadWallNs, GoLiveNs: *m.GoLive.Ns}
		if jit1, err := jit(); err == nil && jerr == nil {
			ns := (jit1.CompileTime - jit0.CompileTime).Nanoseconds()
			rec.JITCompileNs = &ns
		}
		out = append(out, rec)
		if err := c.target().deleteCatalog(ctx, name); err != nil {
			return out, fmt.Errorf("deleting the warm-up catalog %s: %w", name, err)
		}
	}
	return out, nil
}
