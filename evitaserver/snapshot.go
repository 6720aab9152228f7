package evitaserver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/warmstat/warmstat/runfmt"
)

// Checksum digests a directory tree (relative paths, modes and contents), so that a
// pristine snapshot can be proven unchanged after a run.
func Checksum(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%o\x00", rel, info.Mode().Perm()|info.Mode().Type())
		if d.Type().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			if _, err := io.Copy(h, f); err != nil {
				return err
			}
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

// CopyTree copies the directory from into to (which must not exist), files and
// directories only; the source is only read.
func CopyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		case d.Type().IsRegular():
			in, err := os.Open(p)
			if err != nil {
				return err
			}
			defer in.Close()
			out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, in); err != nil {
				out.Close()
				return err
			}
			return out.Close()
		}
		return fmt.Errorf("%s: not a regular file or directory; refusing to copy it", p)
	})
}

// SnapshotSchema names the format of a snapshot's metadata file.
const SnapshotSchema = "warmstat.snapshot/v1"

// Snapshot describes a pristine snapshot, DIR/<catalog>/: the metadata file
// DIR/<catalog>.snapshot.json beside it. A server opening the snapshot must use its
// storage settings (a compressed snapshot cannot be read with compression off), and the
// heap a server needs to hold it follows from its measured live heap.
type Snapshot struct {
	Schema          string              `json:"schema"`
	Catalog         string              `json:"catalog"`
	Created         time.Time           `json:"created"`
	Server          *runfmt.ServerBuild `json:"server"` // the build that wrote it
	StorageCompress bool                `json:"storage_compress"`
	Entities        int                 `json:"entities"`
	Counts          map[string]int      `json:"counts"`
	// Seed is how warmstat seed made it (null for a snapshot made otherwise).
	Seed *SnapshotSeed `json:"seed"`
	// LiveHeapBytes is the writing server's used heap after a full collection, with the
	// catalog ALIVE: what holding this catalog costs. Null when it could not be measured.
	LiveHeapBytes *int64 `json:"live_heap_bytes"`
	// Size is the catalog's own size, what its heaps are chosen from; nil in a snapshot
	// of a warmstat before it was recorded, whose seed scale is then read as a share of
	// production, as it always was.
	Size *CatalogSize `json:"size,omitempty"`
}

// CatalogSize is a catalog's own size as recorded where it is made (seed --pristine):
// its entities, their share of production's (what a heap is proposed from, HeapForShare)
// and the live heap estimated for them before the catalog existed.
type CatalogSize struct {
	Entities               int64   `json:"entities"`
	ProductionShare        float64 `json:"production_share"`
	LiveHeapEstimateBytes  int64   `json:"live_heap_estimate_bytes"`
	LiveHeapEstimateSource string  `json:"live_heap_estimate_source"`
}

// SnapshotSeed are the seed arguments that reproduce a snapshot's content.
type SnapshotSeed struct {
	Scale         float64 `json:"scale"`
	Seed          uint64  `json:"seed"`
	ProfileSHA256 string  `json:"profile_sha256"`
}

// SnapshotFile is where a snapshot's metadata lies.
func SnapshotFile(dir, catalog string) string { return filepath.Join(dir, catalog+snapshotSuffix) }

const snapshotSuffix = ".snapshot.json"

// Seal makes a finished snapshot directory no longer warmstat's to reuse: its owner
// marker goes, so no later run wipes it (PrepareDataDir refuses a directory holding a
// snapshot's metadata, and one without the marker).
func Seal(dir string) error {
	err := os.Remove(filepath.Join(dir, OwnerMarker))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// WriteSnapshot writes s beside its catalog directory in dir.
func WriteSnapshot(dir string, s *Snapshot) error {
	s.Schema = SnapshotSchema
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(SnapshotFile(dir, s.Catalog), append(b, '\n'), 0o644)
}

// ErrNoSnapshotInfo: the snapshot has no metadata file (made by hand, or by a warmstat
// before snapshots recorded their settings).
var ErrNoSnapshotInfo = errors.New("the snapshot has no metadata file")

// ReadSnapshot reads the metadata of dir/<catalog>: strictly (unknown fields, wrong
// types, data after the JSON value, a truncated file and a foreign catalog or schema
// are refused with the file and line).
func ReadSnapshot(dir, catalog string) (*Snapshot, error) {
	path := SnapshotFile(dir, catalog)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrNoSnapshotInfo)
	} else if err != nil {
		return nil, err
	}
	var s Snapshot
	if err := runfmt.UnmarshalStrict(path, data, &s); err != nil {
		return nil, err
	}
	switch {
	case s.Schema != SnapshotSchema:
		return nil, fmt.Errorf("%s: field schema: %q, expected %q", path, s.Schema, SnapshotSchema)
	case s.Catalog != catalog:
		return nil, fmt.Errorf("%s: field catalog: %q, but the snapshot directory is %q", path, s.Catalog, catalog)
	case s.LiveHeapBytes != nil && *s.LiveHeapBytes <= 0:
		return nil, fmt.Errorf("%s: field live_heap_bytes: %d is not a heap size", path, *s.LiveHeapBytes)
	case s.Size != nil && !(s.Size.ProductionShare > 0 && s.Size.ProductionShare <= 100):
		return nil, fmt.Errorf("%s: field size.production_share: %g (or missing) is not a share of production's size (above 0, at most 100)", path, s.Size.ProductionShare)
	case s.Size != nil && s.Size.Entities != int64(s.Entities):
		return nil, fmt.Errorf("%s: field size.entities: %d, but the snapshot holds %d entities (field entities)", path, s.Size.Entities, s.Entities)
	case s.Size != nil && s.Size.LiveHeapEstimateBytes <= 0:
		return nil, fmt.Errorf("%s: field size.live_heap_estimate_bytes: %d (or missing) is not a heap size", path, s.Size.LiveHeapEstimateBytes)
	case s.Seed != nil && s.Seed.Scale <= 0:
		return nil, fmt.Errorf("%s: field seed.scale: %g is not a scale", path, s.Seed.Scale)
	}
	return &s, nil
}
