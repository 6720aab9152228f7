// Package evitatest finds and starts real evitaDB servers for tests. A test that needs
// one calls Start; without a server artifact it is skipped with the reason, so the
// same tests run wherever `make evita` has fetched the server.
package evitatest

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evitaserver"
)

// Classpath is the server's classpath: $WARMSTAT_EVITA_CLASSPATH, else the newest
// version `make evita` fetched; "" when there is none.
func Classpath() string {
	if cp := os.Getenv("WARMSTAT_EVITA_CLASSPATH"); cp != "" {
		return cp
	}
	files, _ := filepath.Glob(filepath.Join(evitaserver.FetchDir(), "*", "classpath.txt"))
	sort.Strings(files)
	if len(files) == 0 {
		return ""
	}
	b, err := os.ReadFile(files[len(files)-1])
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Probe is evita.Probe (kept for the tests' readability).
var Probe = evita.Probe

// Start starts a server with a 1 GiB heap in a temporary directory, stopped when the
// test ends, and returns it with a connected client.
func Start(t testing.TB) (*evitaserver.Server, *evita.Client) {
	t.Helper()
	cp := Classpath()
	if cp == "" {
		t.Skip("no evitaDB server: `make evita` could not fetch io.evitadb:evita_server (the Maven registry reachable here does not serve it); set WARMSTAT_EVITA_CLASSPATH to run against a local server")
	}
	dir := t.TempDir()
	ctx := context.Background()
	s, err := evitaserver.Start(ctx, evitaserver.Config{Classpath: cp, DataDir: filepath.Join(dir, "data"), HeapBytes: 1 << 30,
		Compress: true, Probe: Probe, Ready: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(30 * time.Second) })
	c, err := evita.Dial(ctx, s.Addr, evita.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return s, c
}
