package seed

import (
	"context"
	"errors"
	"fmt"
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
	probe func(context.Context, string) error) (*Stats, error) {
	if err := evitaserver.PrepareDataDir(dir); err != nil {
		return nil, err
	}
	work := dir + ".seeding"
	srv, err := evitaserver.Start(ctx, evitaserver.Config{Server: server, DataDir: work, HeapBytes: heap, Compress: true, Probe: probe})
	if err != nil {
		return nil, err
	}
	c, err := evita.Dial(ctx, srv.Addr, evita.Options{})
	if err != nil {
		srv.Stop(time.Minute)
		return nil, err
	}
	st, err := Seed(ctx, c, catalog, p, scale, seed, false, nil)
	c.Close()
	if serr := srv.Stop(2 * time.Minute); serr != nil { // flushed and closed before it is copied
		err = errors.Join(err, serr)
	}
	if err == nil {
		err = evitaserver.CopyTree(filepath.Join(work, "storage", catalog), filepath.Join(dir, catalog))
	}
	if rerr := os.RemoveAll(work); rerr != nil { // created by Start above, carries our marker
		err = errors.Join(err, fmt.Errorf("removing %s: %w", work, rerr))
	}
	os.RemoveAll(work + "-logs")
	return st, err
}
