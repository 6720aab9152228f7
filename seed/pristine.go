package seed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evitaserver"
)

// PristineConfig is the server Pristine starts for itself and where the snapshot goes.
type PristineConfig struct {
	Server  evitaserver.Source
	Dir     string // the snapshot: Dir/<Catalog>/ and its metadata Dir/<Catalog>.snapshot.json
	Catalog string
	Heap    int64 // the seeding server's heap; 0: HeapAt, from the catalog's own size
	// Compress is the snapshot's storage.compress: recorded in its metadata, and a
	// server opening the snapshot must use the same (evitaDB cannot read compressed
	// records with compression off).
	Compress bool
	Probe    func(context.Context, string) error
	Note     func(string) // what the server's start does beside booting (evitaserver.Config.Note)
}

// Pristine seeds a catalog on a server of its own and leaves Dir/<catalog>/ as a
// pristine snapshot for `warmstat load --pristine Dir`, with its metadata beside it:
// the server build, storage.compress, the seed arguments, the entity counts and the
// catalog's live heap. Dir follows the ownership rule (absent, empty or warmstat's);
// the server's working directory is removed afterwards, and Dir too on failure when it
// was made here. The profile is validated and the heap checked before anything starts.
func Pristine(ctx context.Context, pc PristineConfig, p *Profile, scale float64, seed uint64) (st *Stats, err error) {
	if err := p.Validate(); err != nil { // before any directory or server exists
		return nil, err
	}
	if pc.Heap == 0 {
		pc.Heap = HeapAt(p, scale)
	}
	dir, err := filepath.Abs(pc.Dir) // the JVM runs elsewhere: no relative paths
	if err != nil {
		return nil, err
	}
	pc.Dir = dir
	m, err := evitaserver.ReadMachine() // before any directory is touched
	if err != nil {
		return nil, err
	}
	if err := tooLargeHere(m, p, scale); err != nil {
		return nil, err
	}
	if err := checkHeap("seeding server", pc.Heap, p, scale); err != nil {
		return nil, err
	}
	if err := evitaserver.CheckHeapsFit(m, map[string]int64{"seeding server": pc.Heap}); err != nil {
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
	srv, err := evitaserver.Start(ctx, evitaserver.Config{Server: pc.Server, DataDir: work, HeapBytes: pc.Heap, Compress: pc.Compress, Probe: pc.Probe, Note: pc.Note})
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
			srv.AwaitHeapDump()
			srv.Kill()
		}
	}()
	c, err := evita.Dial(sctx, srv.Addr, evita.Options{CallTimeout: 30 * time.Minute})
	if err != nil {
		srv.Stop(time.Minute)
		return nil, err
	}
	st, err = Seed(sctx, c, pc.Catalog, p, scale, seed, false, nil)
	c.Close()
	var info *evitaserver.Snapshot
	if err == nil {
		info = snapshotInfo(sctx, srv, pc, p, scale, seed, st)
		st.LiveHeapBytes = info.LiveHeapBytes
	}
	var fault *evitaserver.Fault
	if errors.As(context.Cause(sctx), &fault) {
		err = fmt.Errorf("%w (then: %v)", fault, err)
	}
	stop(nil)
	if serr := srv.Stop(2 * time.Minute); serr != nil { // flushed and closed before it is copied
		err = errors.Join(err, serr)
	}
	if err == nil {
		err = evitaserver.CopyTree(filepath.Join(work, "storage", pc.Catalog), filepath.Join(dir, pc.Catalog))
	}
	if err == nil {
		err = evitaserver.WriteSnapshot(dir, info)
	}
	if err == nil { // finished: from now on only ever read
		err = evitaserver.Seal(dir)
	}
	return st, err
}

// snapshotInfo describes the seeded catalog while its server still runs: the live heap
// is measured now (null, not an error, when the JVM cannot be asked).
func snapshotInfo(ctx context.Context, srv *evitaserver.Server, pc PristineConfig, p *Profile, scale float64, seed uint64, st *Stats) *evitaserver.Snapshot {
	build, _ := srv.Record()
	info := &evitaserver.Snapshot{Catalog: pc.Catalog, Created: time.Now().UTC().Truncate(time.Second), Server: build,
		StorageCompress: pc.Compress, Entities: st.Entities, Counts: maps.Clone(st.Counts),
		Seed: &evitaserver.SnapshotSeed{Scale: scale, Seed: seed, ProfileSHA256: p.Digest()}, Size: Size(p, scale)}
	if live, err := srv.LiveHeap(ctx); err == nil {
		info.LiveHeapBytes = &live
	}
	return info
}

// Digest identifies a profile's content (its JSON form).
func (p *Profile) Digest() string {
	b, _ := json.Marshal(p)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
