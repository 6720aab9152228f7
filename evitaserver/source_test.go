package evitaserver_test

import (
	"archive/zip"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/internal/evitatest"
	"github.com/warmstat/warmstat/runfmt"
)

// writeJar writes a jar holding only a manifest with the given main section.
func writeJar(t *testing.T, path, manifest string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	w, _ := zw.Create("META-INF/MANIFEST.MF")
	w.Write([]byte(manifest))
	zw.Close()
	f.Close()
}

// Refusals that happen before any JVM starts, or any directory is touched.
func TestRefusedBeforeStart(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.jar")
	writeJar(t, other, "Manifest-Version: 1.0\r\nMain-Class: org.example.Main\r\n\r\n")
	if _, err := evitaserver.FromJar(other); err == nil || !strings.Contains(err.Error(), "not an evitaDB server jar") {
		t.Fatalf("foreign jar: %v", err)
	}
	if _, err := evitaserver.FromJar(filepath.Join(dir, "README.md")); err == nil || !strings.Contains(err.Error(), "not a jar") {
		t.Fatalf("missing jar: %v", err)
	}
	if _, err := evitaserver.FromClasspath(filepath.Join(dir, "nope.jar")); err == nil || !strings.Contains(err.Error(), "nope.jar") {
		t.Fatalf("missing classpath entry: %v", err)
	}
	src := evitatest.Server(t)
	data := filepath.Join(dir, "d")
	_, err := evitaserver.Start(context.Background(), evitaserver.Config{Server: src, DataDir: data, HeapBytes: 1 << 50, Probe: evitatest.Probe})
	if err == nil || !strings.Contains(err.Error(), "heaps do not fit") {
		t.Fatalf("huge heap: %v", err)
	}
	// a thin evita_server jar without its modules: what a repository holding upstream's
	// dependency-reduced pom resolves to
	var thin []string
	for _, j := range src.Classpath {
		if strings.HasPrefix(filepath.Base(j), "evita_server-") {
			thin = append(thin, j)
		}
	}
	thinSrc, err := evitaserver.FromClasspath(strings.Join(thin, ":"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = evitaserver.Start(context.Background(), evitaserver.Config{Server: thinSrc, DataDir: data, HeapBytes: 256 << 20, Probe: evitatest.Probe})
	if err == nil || !strings.Contains(err.Error(), "lacks the engine (evita_engine) and cannot start") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("thin jar: %v", err)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatal("a refused start created its data directory")
	}
	foreign := filepath.Join(dir, "mine")
	os.MkdirAll(foreign, 0o755)
	os.WriteFile(filepath.Join(foreign, "keep.txt"), []byte("x"), 0o644)
	_, err = evitaserver.Start(context.Background(), evitaserver.Config{Server: src, DataDir: foreign, HeapBytes: 256 << 20, Probe: evitatest.Probe})
	if err == nil || !strings.Contains(err.Error(), "refusing to wipe") {
		t.Fatalf("foreign dir: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(foreign, "keep.txt")); string(b) != "x" {
		t.Fatal("foreign data directory touched")
	}
}

// A server launched with java -jar (a jar whose manifest lists the release's jars) runs,
// and its identity comes from the server's own jar manifest: version and build commit,
// checksums, the JVM's vendor, version and collector.
func TestServerJarLaunch(t *testing.T) {
	src := evitatest.Server(t)
	dir := t.TempDir()
	jar := filepath.Join(dir, "evita-server.jar")
	evitatest.LauncherJar(t, src, jar)
	js, err := evitaserver.FromJar(jar)
	if err != nil {
		t.Fatal(err)
	}
	s, err := evitaserver.Start(context.Background(), evitaserver.Config{Server: js, DataDir: filepath.Join(dir, "d"), HeapBytes: 512 << 20, Probe: evitatest.Probe})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(30 * time.Second)
	if b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(s.Pid()), "cmdline")); !strings.Contains(string(b), "-jar\x00"+jar) {
		t.Fatalf("not launched with -jar: %q", b)
	}
	build, jvm := s.Record()
	if build.Source != runfmt.ServerFromJar || build.Version == "" || build.BuildCommit == "" || len(build.Jars) == 0 || len(build.ClasspathSHA256) != 64 {
		t.Fatalf("build %+v", build)
	}
	if src.Kind == runfmt.ServerFromRelease && build.Version != src.Ref {
		t.Fatalf("jar manifest says %s, the release is %s", build.Version, src.Ref)
	}
	if jvm == nil || jvm.Vendor == "" || !strings.HasPrefix(jvm.Version, "17") || jvm.GC != "G1" || len(jvm.Flags) == 0 {
		t.Fatalf("jvm %+v", jvm)
	}
	// the same build through its classpath has the same identity
	id, err := src.Identify()
	if err != nil || id.Version != build.Version || id.BuildCommit != build.BuildCommit {
		t.Fatalf("classpath identity %+v %v", id, err)
	}
	t.Logf("java -jar: evitaDB %s (commit %s) on %s %s, GC %s", build.Version, build.BuildCommit, jvm.Vendor, jvm.Version, jvm.GC)
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// An evitaDB checkout: its built jar is used only when it is at least as new as HEAD and
// every uncommitted change; the commit and the dirty flag are recorded.
func TestCheckoutSource(t *testing.T) {
	src := evitatest.Server(t)
	home := t.TempDir()
	t.Setenv("HOME", home) // the README's own example names the checkout ~/src/evitaDB
	root := filepath.Join(home, "src", "evitaDB")
	os.MkdirAll(root, 0o755)
	gitRun(t, root, "init", "-q")
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("target/\n"), 0o644)
	os.WriteFile(filepath.Join(root, "pom.xml"), []byte("<project/>\n"), 0o644)
	gitRun(t, root, "add", ".")
	gitRun(t, root, "commit", "-q", "-m", "one")
	head := gitRun(t, root, "rev-parse", "HEAD")

	_, err := evitaserver.FromCheckout(root)
	if err == nil || !strings.Contains(err.Error(), "has no built server") || !strings.Contains(err.Error(), "mvn install -pl evita_server -am") {
		t.Fatalf("missing jar: %v", err)
	}
	jar := filepath.Join(root, evitaserver.CheckoutJar)
	evitatest.LauncherJar(t, src, jar)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(jar, old, old)
	if _, err := evitaserver.FromCheckout(root); err == nil || !strings.Contains(err.Error(), "is older than HEAD") {
		t.Fatalf("stale jar: %v", err)
	}
	now := time.Now().Add(time.Minute)
	os.Chtimes(jar, now, now)
	s, err := evitaserver.FromCheckout(root)
	if err != nil || s.Kind != runfmt.ServerFromCheckout || s.Checkout.Commit != head || s.Checkout.Dirty {
		t.Fatalf("fresh jar: %+v %v", s, err)
	}
	// an uncommitted change made before the build: used, recorded as dirty
	os.WriteFile(filepath.Join(root, "pom.xml"), []byte("<project>changed</project>\n"), 0o644)
	os.Chtimes(filepath.Join(root, "pom.xml"), old, old)
	if s, err = evitaserver.FromCheckout(root); err != nil || !s.Checkout.Dirty {
		t.Fatalf("dirty checkout: %+v %v", s, err)
	}
	// ... and one made after the build: the jar does not contain it
	later := now.Add(time.Minute)
	os.Chtimes(filepath.Join(root, "pom.xml"), later, later)
	if _, err := evitaserver.FromCheckout(root); err == nil || !strings.Contains(err.Error(), "pom.xml changed after") {
		t.Fatalf("change after build: %v", err)
	}
	os.Chtimes(filepath.Join(root, "pom.xml"), old, old)
	// the README's example as written: "~" after checkout: is expanded by no shell
	if s, err = evitaserver.ParseSource("checkout:~/src/evitaDB"); err != nil || s.Checkout == nil || s.Checkout.Root != root {
		t.Fatalf("checkout:~/src/evitaDB: %+v %v", s, err)
	}
	if s, err = evitaserver.ParseSource("jar:~/src/evitaDB/" + evitaserver.CheckoutJar); err != nil || s.Kind != runfmt.ServerFromJar {
		t.Fatalf("jar:~/...: %+v %v", s, err)
	}
	// a file deleted after the build: git lists it, there is nothing to stat; its
	// directory's time says when
	os.MkdirAll(filepath.Join(root, "evita_engine"), 0o755)
	os.WriteFile(filepath.Join(root, "evita_engine", "Engine.java"), []byte("class Engine {}\n"), 0o644)
	gitRun(t, root, "add", ".")
	gitRun(t, root, "commit", "-q", "-m", "two")
	os.Chtimes(jar, later, later) // built after that commit
	if _, err := evitaserver.FromCheckout(root); err != nil {
		t.Fatalf("jar newer than the second commit: %v", err)
	}
	os.Remove(filepath.Join(root, "evita_engine", "Engine.java"))
	later2 := later.Add(time.Minute)
	os.Chtimes(filepath.Join(root, "evita_engine"), later2, later2)
	if _, err := evitaserver.FromCheckout(root); err == nil || !strings.Contains(err.Error(), "evita_engine/Engine.java was deleted after") {
		t.Fatalf("a file deleted after the build: %v", err)
	}
	gitRun(t, root, "checkout", "--", "evita_engine/Engine.java")
	os.Chtimes(filepath.Join(root, "evita_engine", "Engine.java"), old, old)
	os.Chtimes(filepath.Join(root, "evita_engine"), old, old)
	// a file edited inside an untracked directory after the build (the directory's own
	// time does not change when a file in it is edited)
	os.MkdirAll(filepath.Join(root, "evita_new", "src"), 0o755)
	os.WriteFile(filepath.Join(root, "evita_new", "src", "New.java"), []byte("class New {}\n"), 0o644)
	os.Chtimes(filepath.Join(root, "evita_new", "src", "New.java"), old, old)
	os.Chtimes(filepath.Join(root, "evita_new", "src"), old, old)
	os.Chtimes(filepath.Join(root, "evita_new"), old, old)
	if s, err = evitaserver.FromCheckout(root); err != nil || !s.Checkout.Dirty {
		t.Fatalf("an untracked file made before the build: %+v %v", s, err)
	}
	os.WriteFile(filepath.Join(root, "evita_new", "src", "New.java"), []byte("class New { int x; }\n"), 0o644)
	os.Chtimes(filepath.Join(root, "evita_new", "src", "New.java"), later2, later2)
	if _, err := evitaserver.FromCheckout(root); err == nil || !strings.Contains(err.Error(), "evita_new/src/New.java changed after") {
		t.Fatalf("a file edited in an untracked directory after the build: %v", err)
	}
	if _, err := evitaserver.FromCheckout(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a git checkout") {
		t.Fatalf("not a checkout: %v", err)
	}
}
