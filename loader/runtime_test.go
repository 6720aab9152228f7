package loader

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/warmstat/warmstat/evita"
)

// The loader's Go runtime settings go into every run's manifest as they are when it
// loads, whoever set them (its defaults, or GOMAXPROCS / GOGC in the environment): they
// decide how many threads it may spin beside the servers and how often it collects.
func TestManifestRecordsTheGoRuntime(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	defer debug.SetGCPercent(debug.SetGCPercent(250))
	c := Config{Target: &evita.Client{}, Now: time.Now}
	m := c.manifest()
	if m.Loader.GOMAXPROCS == nil || *m.Loader.GOMAXPROCS != 3 || m.Loader.GOGC == nil || *m.Loader.GOGC != 250 {
		t.Fatalf("loader %+v", m.Loader)
	}
	debug.SetGCPercent(-1)
	if m := c.manifest(); *m.Loader.GOGC != -1 || debug.SetGCPercent(-1) != -1 {
		t.Fatalf("GOGC off recorded as %d, or left changed", *m.Loader.GOGC)
	}
}
