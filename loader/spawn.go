package loader

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/runfmt"
)

// SpawnConfig runs both servers itself: a reader on a disposable copy of a pristine
// snapshot and a fresh writer, each with a pinned heap and a GC log.
type SpawnConfig struct {
	Server     evitaserver.Source // the build under test (the writer) and, by default, the reader
	Pristine   string             // parent of <Catalog>/, a stopped server's storage (only ever read)
	Catalog    string
	WorkDir    string // ours: absent, empty or carrying warmstat's marker
	ServerHeap int64  // 0: chosen from the snapshot's metadata
	ReaderHeap int64  // 0: chosen from the snapshot's metadata
	Compress   bool   // the writer's storage.compress (the reader follows the snapshot's)
	Probe      func(ctx context.Context, addr string) error
}

// Spawn starts the servers, runs the load, tears both down, records the writer's GC
// in the manifest and proves the pristine snapshot unchanged.
func Spawn(ctx context.Context, sc SpawnConfig, c Config) (res *Result, err error) {
	pristine := filepath.Join(sc.Pristine, sc.Catalog)
	if st, err := os.Stat(pristine); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("pristine snapshot %s: no catalog directory %q there", sc.Pristine, sc.Catalog)
	}
	snap, err := snapshotSettings(&sc)
	if err != nil {
		return nil, err
	}
	m, err := evitaserver.ReadMachine()
	if err != nil {
		return nil, err
	}
	if err := evitaserver.CheckHeapsFit(m, map[string]int64{"writer": sc.ServerHeap, "reader": sc.ReaderHeap}); err != nil {
		return nil, err
	}
	if err := evitaserver.PrepareDataDir(sc.WorkDir); err != nil {
		return nil, err
	}
	before, err := evitaserver.Checksum(pristine)
	if err != nil {
		return nil, err
	}
	defer func() { // the snapshot must come out as it went in, whatever happened
		after, cerr := evitaserver.Checksum(pristine)
		if cerr == nil && after != before {
			cerr = fmt.Errorf("the pristine snapshot %s changed during the run (checksum %s -> %s)", pristine, before[:12], after[:12])
		}
		err = errors.Join(err, cerr)
	}()
	reader, err := evitaserver.Start(ctx, evitaserver.Config{Server: sc.Server, DataDir: filepath.Join(sc.WorkDir, "reader"),
		HeapBytes: sc.ReaderHeap, Compress: snap.StorageCompress, Probe: sc.Probe, Catalogs: map[string]string{sc.Catalog: pristine}})
	if err != nil {
		return nil, fmt.Errorf("reader server: %w", err)
	}
	defer reader.Stop(time.Minute)
	writer, err := evitaserver.Start(ctx, evitaserver.Config{Server: sc.Server, DataDir: filepath.Join(sc.WorkDir, "writer"),
		HeapBytes: sc.ServerHeap, Compress: sc.Compress, Probe: sc.Probe})
	if err != nil {
		return nil, fmt.Errorf("writer server: %w", err)
	}
	defer writer.Stop(time.Minute)
	src, err := evita.Dial(ctx, reader.Addr, evita.Options{})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	dst, err := evita.Dial(ctx, writer.Addr, evita.Options{})
	if err != nil {
		return nil, err
	}
	defer dst.Close()
	c.Source, c.Target, c.SourceCatalog = src, dst, sc.Catalog
	sh, rh := sc.ServerHeap, sc.ReaderHeap
	no, compress := false, sc.Compress
	c.Manifest.Server.MaxHeapBytes, c.Manifest.Reader.MaxHeapBytes = &sh, &rh // pinned by us: known
	c.Manifest.Server.Build, c.Manifest.Server.JVM = writer.Record()
	c.Manifest.Reader.Build, c.Manifest.Reader.JVM = reader.Record()
	c.Manifest.Conditions.StorageCompress, c.Manifest.Conditions.CacheEnabled, c.Manifest.Conditions.TrafficRecording = &compress, &no, &no
	res, err = Run(ctx, c)
	if res == nil {
		return nil, err
	}
	if serr := writer.Stop(time.Minute); serr != nil {
		err = errors.Join(err, serr)
	}
	if gc, gerr := writer.GC(); gerr == nil {
		young, full := gc.Young, gc.Full
		res.Manifest.WriterGC = &runfmt.GCStats{Collections: gc.Pauses(), YoungPauses: &young, FullPauses: &full, PauseNs: gc.PauseNs,
			ShareOfWallPc: gc.ShareOf(gc.UptimeNs)}
		if werr := runfmt.WriteManifest(filepath.Join(res.Dir, runfmt.ManifestFile), res.Manifest); werr != nil {
			err = errors.Join(err, werr)
		}
	}
	return res, err
}
