package seed

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evitaserver"
)

// Pristine seeds a catalog on a server of its own and leaves dir/<catalog>/ as a
// pristine snapshot for `warmstat load --pristine dir`. dir follows the ownership rule
// (absent, empty or warmstat's); the server's working directory is removed afterwards.
func Pristine(ctx context.Context, server evitaserver.Source, dir, catalog string, heap int64, p *Profile, scale float64, seed uint64,
	probe func(context.Context, string) error) (st *Stats, err error) {
	if err := p.Validate(); err != nil { // before any directory or server exists
		return nil, err
	}
	if dir, err = filepath.Abs(dir); err != nil { // the JVM runs elsewhere: no relative paths
		return nil, err
	}
	_, statErr := os.Stat(dir)
	created := errors.Is(statErr, fs.ErrNotExist)
	if err := evitaserver.PrepareDataDir(dir); err != nil {
		return nil, err
	}
	work := dir + ".seeding"
	defer func() { // the server's directories go in any case; dir only on failure, and only if created here
		if rerr := os.RemoveAll(work); rerr != nil {
			err = errors.Join(err, fmt.Errorf("removing %s: %w", work, rerr))
		}
		if err == nil {
			os.RemoveAll(work + "-logs")
		} else if created {
			os.RemoveAll(dir)
		}
	}()
	srv, err := evitaserver.Start(ctx, evitaserver.Config{Server: server, DataDir: work, HeapBytes: heap, Compress: true, Probe: probe})
	if err != nil {
		return nil, err
	}
	// a fault of the seeding server (out of memory, GC-bound, exited) ends the seeding
	// with that cause, named first
	sctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	go func() {
		if f := srv.Watch(sctx, evitaserver.WatchOptions{Role: "seeding", Advice: "give it a larger heap"}); f != nil {
			stop(f)
			srv.AwaitHeapDump(2 * time.Minute)
			srv.Kill()
		}
	}()
	c, err := evita.Dial(sctx, srv.Addr, evita.Options{CallTimeout: 30 * time.Minute})
	if err != nil {
		srv.Stop(time.Minute)
		return nil, err
	}
	st, err = Seed(sctx, c, catalog, p, scale, seed, false, nil)
	c.Close()
	var fault *evitaserver.Fault
	if errors.As(context.Cause(sctx), &fault) {
		err = fmt.Errorf("%w (then: %v)", fault, err)
	}
	stop(nil)
	if serr := srv.Stop(2 * time.Minute); serr != nil { // flushed and closed before it is copied
		err = errors.Join(err, serr)
	}
	if err == nil {
		err = evitaserver.CopyTree(filepath.Join(work, "storage", catalog), filepath.Join(dir, catalog))
	}
	return st, err
}
