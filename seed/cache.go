package seed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/warmstat/warmstat/base/cachedir"
	"github.com/warmstat/warmstat/workload"
)

// DefaultCatalog is the catalog name of the built-in default's cached workloads.
const DefaultCatalog = "shop"

// CachedDefault is the workload of the built-in default catalog at scale (random seed
// 1), generated once into warmstat's cache and reused: a question asked with no source
// of its own replays the same catalog every time, on every machine, with nothing to
// prepare. The file is named by the generator (the profile's digest), the scale and
// the seed, so a changed generator gets a file of its own; it is written under a
// temporary name and renamed whole, so a second process asking at the same moment
// finds either nothing or the finished file. generated says whether this call made it.
func CachedDefault(ctx context.Context, scale float64, progress io.Writer) (info workload.Info, generated bool, err error) {
	p := DefaultProfile()
	const seed = 1
	dir := filepath.Join(cachedir.Root(), "workloads")
	path := filepath.Join(dir, fmt.Sprintf("default-%s-scale%s-seed%d.wsw", p.Digest()[:12], strconv.FormatFloat(scale, 'g', -1, 64), seed))
	if info, err := workload.Verify(path); err == nil {
		return info, false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return workload.Info{}, false, fmt.Errorf("the cached default workload %s: %w (remove it to have it made again)", path, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return workload.Info{}, false, err
	}
	tmp := fmt.Sprintf("%s.tmp-%d", path, os.Getpid())
	if _, err := WriteWorkload(ctx, tmp, DefaultCatalog, p, scale, seed, progress); err != nil {
		os.Remove(tmp)
		return workload.Info{}, false, err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return workload.Info{}, false, err
	}
	info, err = workload.Verify(path)
	return info, true, err
}
