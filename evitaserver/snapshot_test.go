package evitaserver

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/warmstat/warmstat/runfmt"
)

func TestSnapshotMetadataRoundTripAndRefusals(t *testing.T) {
	dir := t.TempDir()
	live := int64(300 << 20)
	s := &Snapshot{Catalog: "shop", Created: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), Server: &runfmt.ServerBuild{Source: "release", Version: "2026.2.3"},
		StorageCompress: true, Entities: 10, Counts: map[string]int{"Product": 10}, Seed: &SnapshotSeed{Scale: 0.01, Seed: 1, ProfileSHA256: "ab"}, LiveHeapBytes: &live,
		Size: &CatalogSize{Entities: 10, ProductionShare: ProductionShare(10), LiveHeapEstimateBytes: 150 << 20, LiveHeapEstimateSource: "a test"}}
	if err := WriteSnapshot(dir, s); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSnapshot(dir, "shop")
	if err != nil || !reflect.DeepEqual(back, s) {
		t.Fatalf("%v\n%+v\n%+v", err, back, s)
	}
	if _, err := ReadSnapshot(dir, "other"); !errors.Is(err, ErrNoSnapshotInfo) {
		t.Fatalf("missing metadata: %v", err)
	}
	good, _ := os.ReadFile(SnapshotFile(dir, "shop"))
	for _, c := range []struct{ edit, want string }{
		{strings.Replace(string(good), `"entities"`, `"entites"`, 1), "shop.snapshot.json:14: field entites: unknown field"},
		{strings.Replace(string(good), `"storage_compress": true`, `"storage_compress": "yes"`, 1), "shop.snapshot.json:13: field storage_compress: expected bool"},
		{strings.Replace(string(good), `"catalog": "shop"`, `"catalog": "other"`, 1), `field catalog: "other", but the snapshot directory is "shop"`},
		{strings.Replace(string(good), `"live_heap_bytes": 314572800`, `"live_heap_bytes": -1`, 1), "field live_heap_bytes: -1 is not a heap size"},
		{strings.Replace(string(good), `warmstat.snapshot/v1`, `warmstat.snapshot/v9`, 1), `field schema: "warmstat.snapshot/v9"`},
		{strings.Replace(string(good), `"production_share": 0.`, `"production_share": -0.`, 1), "field size.production_share: -2.5"},
		{strings.Replace(string(good), `"production_share": 0.`, `"production_share": 1000`, 1), "(or missing) is not a share of production's size (above 0, at most 100)"},
		{strings.Replace(string(good), `"live_heap_estimate_bytes": 157286400`, `"live_heap_estimate_bytes": -1`, 1), "field size.live_heap_estimate_bytes: -1"},
		{strings.Replace(string(good), `"entities": 10,
    "production_share"`, `"entities": 11,
    "production_share"`, 1), "field size.entities: 11, but the snapshot holds 10 entities"},
	} {
		os.WriteFile(SnapshotFile(dir, "shop"), []byte(c.edit), 0o644)
		if _, err := ReadSnapshot(dir, "shop"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %s", err, c.want)
		}
	}
}

func TestHeapSizing(t *testing.T) {
	if h := HeapForShare(0.1); h < 23<<30/10+1<<30 || h > 23<<30/10+1<<30+heapStep {
		t.Fatalf("share 0.1: %d", h)
	}
	if h := HeapForShare(ProductionShare(ProductionEntities)); h != 24<<30 {
		t.Fatalf("production's size: %d", h)
	}
	// a catalog of 1,937 entities (a real shop, 1/200 of production): 1.25 GiB, not 24
	if h := HeapForShare(ProductionShare(1_937)); h != 1280<<20 {
		t.Fatalf("1,937 entities: %d", h)
	}
	if n := NeedHeap(1 << 30); n <= 1<<30 || n%heapStep != 0 {
		t.Fatalf("need %d", n)
	}
	used, err := parseHeapInfo("123:\n garbage-first heap   total 4194304K, used 1353999K [0x0000000700000000, 0x0000000800000000)\n  region size 2048K, 0 young (0K), 0 survivors (0K)\n Metaspace       used 94515K, committed 96320K, reserved 1179648K\n")
	if err != nil || used != 1353999<<10 {
		t.Fatalf("G1: %d %v", used, err)
	}
	used, err = parseHeapInfo(" PSYoungGen      total 305664K, used 10485K [0x1, 0x2, 0x3)\n ParOldGen       total 699392K, used 20000K [0x1, 0x2, 0x3)\n Metaspace       used 1K\n")
	if err != nil || used != 30485<<10 {
		t.Fatalf("parallel: %d %v", used, err)
	}
	if _, err := parseHeapInfo("nothing"); err == nil {
		t.Fatal("no figure accepted")
	}
}

func TestRESTIsAServerOption(t *testing.T) {
	has := func(c Config, arg string) bool {
		for _, a := range c.Args(1, "gc.log") {
			if a == arg {
				return true
			}
		}
		return false
	}
	if !has(Config{}, "api.endpoints.rest.enabled=false") || !has(Config{REST: true}, "api.endpoints.rest.enabled=true") {
		t.Fatal("REST must be off unless asked for")
	}
	// a benchmark server keeps evitaDB's own timeouts; a REST reader gets long ones
	if has(Config{}, "api.requestTimeoutInMillis=300000") || !has(Config{REST: true}, "api.requestTimeoutInMillis=300000") {
		t.Fatal("the request timeout is raised for REST readers only")
	}
}
