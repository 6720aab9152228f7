package embedded_test

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
		zr, err := zip.OpenReader(dir)
		if err != nil || filepath.Base(dir) != embedded.JarName {
			t.Fatalf("%s: %v", dir, err)
		}
		if _, err := zr.Open("io/warmstat/embedded/EmbeddedWriter.class"); err != nil {
			t.Fatalf("the writer's jar lacks its class: %v", err)
		}
		zr.Close()
	}
	if compiled != 1 {
		t.Fatalf("compiled %d times, want once", compiled)
	}
}

// The embedded writer boots from its release's class-data archive like a server does:
// made by a boot of the writer itself (ended by its goodbye), then mapped.
func TestEmbeddedWriterBootsFromItsArchive(t *testing.T) {
	evitatest.Exclusive(t) // another package's embedded run training the same archive would make this one boot without it
	src := evitatest.Server(t)
	id, err := src.Identify()
	if err != nil {
		t.Fatal(err)
	}
	classes, err := embedded.Build(src, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for range 2 { // the first start may make the archive; the second must find it
		w, err := embedded.Start(context.Background(), evitaserver.Config{Server: src, DataDir: filepath.Join(t.TempDir(), "w"), HeapBytes: 512 << 20,
			Compress: true, Note: func(s string) { notes = append(notes, s) }}, classes)
		if err != nil {
			t.Fatal(err)
		}
		maps, _ := os.ReadFile(fmt.Sprintf("/proc/%d/maps", w.Pid()))
		archive := w.ClassArchive()
		if err := w.Close(time.Minute); err != nil {
			t.Fatal(err)
		}
		if archive == "" || !strings.Contains(string(maps), archive) {
			t.Fatalf("the embedded writer did not map an archive %q; notes: %v", archive, notes)
		}
	}
	t.Logf("notes: %v", notes)
}
