package evitatest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/seed"
)

// SmallSnapshot is the scale-0.001 compressed pristine snapshot of catalog "shop"
// (seed's default profile, seed 5) seeded by src's release, with its seeding's stats.
// A snapshot is only ever read (every run proves it unchanged), so it is seeded once
// and shared: by every package of one `make test` when $WARMSTAT_TEST_SHARED names a
// directory (make test makes it and removes it afterwards), else by the tests of one
// test binary (RemoveShared, called by its TestMain, removes it). Seeding one takes
// half a minute of the server-test lock; most spawn tests need no other catalog.
func SmallSnapshot(t testing.TB, src evitaserver.Source) (string, *seed.Stats) {
	t.Helper()
	id, err := src.Identify()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(sharedDir(t), "small-"+id.Version)
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil { // another package may be seeding it
		t.Fatal(err)
	}
	pristine, statsFile := filepath.Join(dir, "pristine"), filepath.Join(dir, "stats.json")
	var st seed.Stats
	if b, err := os.ReadFile(statsFile); err == nil { // written last: the snapshot is complete
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatalf("%s: %v", statsFile, err)
		}
		return pristine, &st
	}
	os.RemoveAll(dir) // a seeding that failed half-way
	s, err := seed.Pristine(context.Background(), seed.PristineConfig{Server: src, Dir: pristine, Catalog: "shop", Heap: 1 << 30,
		Compress: true, Probe: Probe}, seed.DefaultProfile(), 0.001, 5)
	if err != nil {
		os.RemoveAll(dir)
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err == nil {
		err = os.WriteFile(statsFile, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	return pristine, s
}

var shared struct {
	sync.Mutex
	own string // made by this process, removed by RemoveShared
}

// sharedDir is $WARMSTAT_TEST_SHARED, else a directory of this process's own.
func sharedDir(t testing.TB) string {
	if d := os.Getenv("WARMSTAT_TEST_SHARED"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	shared.Lock()
	defer shared.Unlock()
	if shared.own == "" {
		d, err := os.MkdirTemp("", "warmstat-test-shared-")
		if err != nil {
			t.Fatal(err)
		}
		shared.own = d
	}
	return shared.own
}

// RemoveShared removes what this process shared among its tests (not
// $WARMSTAT_TEST_SHARED: make test removes that). A TestMain calls it after m.Run.
func RemoveShared() {
	shared.Lock()
	defer shared.Unlock()
	if shared.own != "" {
		os.RemoveAll(shared.own)
		shared.own = ""
	}
}
