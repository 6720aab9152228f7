package loader_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/internal/evitatest"
	"github.com/warmstat/warmstat/loader"
)

// A full disk while extracting: the write fails mid-file, the error says so, and
// nothing is left where the workload was to be (neither the file nor its temporary).
// The disk is real: a 256 KiB tmpfs (the machines this runs on are root), the
// workload of the package's scale-0.001 snapshot about 700 kB; the reader is gone, and
// so is the work directory the extraction made.
func TestExtractOnAFullDisk(t *testing.T) {
	src := evitatest.Server(t)
	ctx := context.Background()
	pristine, _ := smallSnapshot(t, src)
	disk := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", disk).CombinedOutput(); err != nil {
		t.Fatalf("mounting a small tmpfs (a real full disk): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", disk).Run() })
	out := filepath.Join(disk, "shop.wsw")
	work := filepath.Join(t.TempDir(), "work")
	_, err := loader.SpawnExtract(ctx, loader.SpawnConfig{Server: src, Pristine: pristine, Catalog: "shop", WorkDir: work, ReaderHeap: 1 << 30,
		Probe: evitatest.Probe}, loader.ExtractConfig{Out: out, BatchSize: 100})
	if err == nil || !strings.Contains(err.Error(), "no space left on device") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("extracting onto a full disk: %v", err)
	}
	left, _ := os.ReadDir(disk)
	if len(left) != 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Fatalf("a failed extraction left %v on the disk", names)
	}
	if _, err := os.Stat(work); !os.IsNotExist(err) {
		t.Fatalf("the failed extraction left its work directory: %v", err)
	}
	if pids := evitatest.Processes(work); len(pids) != 0 {
		t.Fatalf("JVMs left: %v", pids)
	}
	t.Logf("full disk: %v", err)
}
