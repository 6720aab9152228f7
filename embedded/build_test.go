package embedded_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/embedded"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/internal/evitatest"
)

// A build whose jars lack evitaDB's gRPC converters cannot apply the mutation a remote
// writer applies: it is refused with the missing class named, and nothing is compiled.
// The release itself compiles once, and a second Build finds it in the cache.
func TestBuildChecksTheConverters(t *testing.T) {
	src := evitatest.Server(t)
	t.Setenv("WARMSTAT_CACHE", t.TempDir())
	var lean []string
	for _, j := range src.Classpath {
		if !strings.Contains(filepath.Base(j), "evita_external_api_grpc_shared") {
			lean = append(lean, j)
		}
	}
	if len(lean) == len(src.Classpath) {
		t.Fatalf("the release %s has no evita_external_api_grpc_shared jar to leave out", src.Ref)
	}
	noConv, err := evitaserver.FromClasspath(strings.Join(lean, ":"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = embedded.Build(noConv, evitaserver.Identity{ClasspathSHA256: "lean"}, nil)
	if !errors.Is(err, embedded.ErrNoConverters) || !strings.Contains(err.Error(), "DelegatingEntityMutationConverter") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a build without the converters: %v", err)
	}
	if _, err := os.Stat(embedded.CacheDir()); !os.IsNotExist(err) {
		t.Fatalf("a refused build left %s: %v", embedded.CacheDir(), err)
	}
	id, err := src.Identify()
	if err != nil {
		t.Fatal(err)
	}
	compiled := 0
	for range 2 {
		dir, err := embedded.Build(src, id, func(string) { compiled++ })
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "io", "warmstat", "embedded", "EmbeddedWriter.class")); err != nil {
			t.Fatal(err)
		}
	}
	if compiled != 1 {
		t.Fatalf("compiled %d times, want once", compiled)
	}
}
