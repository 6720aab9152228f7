package embedded_test

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
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
	noConv := evitatest.Without(t, src, "evita_external_api_grpc_shared")
	_, err := embedded.Build(noConv, evitaserver.Identity{ClasspathSHA256: "lean"}, nil)
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

// A build whose engine the writer does not know is refused on one line naming the build,
// what is missing and nothing of javac's or the JVM's raw output: at compile time (an
// API the source does not compile against) and at start (an engine with neither line's
// constructor). The release's jars are real; a stub io.evitadb.core.Evita put first on
// its classpath plays the unknown build.
func TestUnknownBuildIsRefusedOnOneLine(t *testing.T) {
	src := evitatest.Server(t)
	t.Setenv("WARMSTAT_CACHE", t.TempDir())
	stub := func(name, body string) evitaserver.Source {
		dir := filepath.Join(t.TempDir(), name)
		java := filepath.Join(dir, "io/evitadb/core/Evita.java")
		if err := os.MkdirAll(filepath.Dir(java), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(java, []byte("package io.evitadb.core;\n"+body), 0o644); err != nil {
			t.Fatal(err)
		}
		cp := strings.Join(src.Classpath, ":")
		if out, err := exec.Command("javac", "-nowarn", "-d", dir, "-cp", cp, java).CombinedOutput(); err != nil {
			t.Fatalf("the stub does not compile: %v\n%s", err, out)
		}
		jar := dir + ".jar" // a jar: the classpath's checksum (the writer's cache key) reads jars
		if out, err := exec.Command("jar", "cf", jar, "-C", dir, "io").CombinedOutput(); err != nil {
			t.Fatalf("the stub's jar: %v\n%s", err, out)
		}
		s, err := evitaserver.FromClasspath(jar + ":" + cp)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	oneLine := func(err error, want ...string) {
		t.Helper()
		t.Logf("refused: %v", err)
		if !errors.Is(err, embedded.ErrUnsupported) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "\tat ") {
			t.Fatalf("not a one-line refusal: %v", err)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("the refusal does not say %q: %v", w, err)
			}
		}
	}

	bare := stub("bare", "public final class Evita {}\n")
	_, err := embedded.BuildSource(bare, nil)
	oneLine(err, "offers an API the writer does not know", "javac: cannot find symbol", "the compiler's output is in ")
	log := err.Error()[strings.LastIndex(err.Error(), " ")+1:]
	if b, rerr := os.ReadFile(log); rerr != nil || !strings.Contains(string(b), "error:") {
		t.Fatalf("the compiler's output %s: %v", log, rerr)
	}

	noCtor := stub("noctor", `import java.util.Optional;
public final class Evita {
	public Evita(String unknown) {}
	public Optional<io.evitadb.api.CatalogState> getCatalogState(String c) { return Optional.empty(); }
	public Optional<io.evitadb.api.requestResponse.progress.Progress<Void>> deleteCatalogIfExistsWithProgress(String c) { return Optional.empty(); }
	public Object defineCatalog(String c) { return null; }
	public io.evitadb.api.EvitaSessionContract createSession(io.evitadb.api.SessionTraits t) { return null; }
	public void close() {}
}
`)
	jar, err := embedded.BuildSource(noCtor, nil)
	if err != nil {
		t.Fatalf("the writer does not compile against an engine with the API it calls: %v", err)
	}
	w, err := embedded.Start(context.Background(), evitaserver.Config{Server: noCtor, DataDir: filepath.Join(t.TempDir(), "w"), HeapBytes: 512 << 20,
		Compress: true, NoClassArchive: true, Ready: 2 * time.Minute}, jar)
	if err == nil {
		w.Close(time.Minute)
		t.Fatal("the writer opened an engine with neither line's constructor")
	}
	oneLine(err, "neither (EvitaConfiguration, boolean, Consumer, Consumer, boolean) (2026.2) nor (EvitaConfiguration, boolean) (2026.1)")

	// an incomplete classpath compiles but its engine cannot open: said at once, on one
	// line naming the missing class, with no advice to try a remote writer (whose server
	// lacks the same class)
	noKryo := evitatest.Without(t, src, "kryo")
	if jar, err = embedded.BuildSource(noKryo, nil); err != nil {
		t.Fatalf("the writer does not compile without kryo: %v", err)
	}
	began := time.Now()
	w, err = embedded.Start(context.Background(), evitaserver.Config{Server: noKryo, DataDir: filepath.Join(t.TempDir(), "k"), HeapBytes: 512 << 20,
		Compress: true, NoClassArchive: true, Ready: 2 * time.Minute}, jar)
	if err == nil {
		w.Close(time.Minute)
		t.Fatal("the writer opened an engine without kryo")
	}
	t.Logf("refused in %s: %v", time.Since(began).Round(time.Millisecond), err)
	if !errors.Is(err, embedded.ErrEngineFailed) || errors.Is(err, embedded.ErrUnsupported) || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), "kryo") || time.Since(began) > time.Minute {
		t.Fatalf("an engine missing a class: %v", err)
	}
}
