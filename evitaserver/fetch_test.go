package evitaserver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/internal/evitatest"
)

// make evita against a repository holding upstream's kind of build: evita_server's pom
// is maven-shade's dependency-reduced one (no dependencies), so resolving it alone gives
// a thin jar. The script must still produce a classpath a server starts from, and refuse
// (one line) when the modules it asks for do not make a server.
func TestFetchFromRepositoryWithThinServerPom(t *testing.T) {
	repo := evitatest.Repository(t)
	versions, _ := filepath.Glob(filepath.Join(repo, "io/evitadb/evita_server/*"))
	if len(versions) == 0 {
		t.Fatalf("%s holds no io.evitadb:evita_server", repo)
	}
	version := filepath.Base(versions[len(versions)-1])
	tmp := t.TempDir()
	thin := filepath.Join(tmp, "m2")
	mods, _ := filepath.Glob(filepath.Join(repo, "io/evitadb/*/"+version))
	for _, m := range mods {
		if err := evitaserver.CopyTree(m, filepath.Join(thin, strings.TrimPrefix(m, repo))); err != nil {
			t.Fatal(err)
		}
	}
	pom := filepath.Join(thin, "io/evitadb/evita_server", version, "evita_server-"+version+".pom")
	b, err := os.ReadFile(pom)
	if err != nil {
		t.Fatal(err)
	}
	stripped := regexp.MustCompile(`(?s)<dependencies>.*?</dependencies>`).ReplaceAll(b, nil) // the project's own, first
	if strings.Contains(string(stripped), "<artifactId>evita_engine</artifactId>") {
		t.Fatal("the stripped pom still names evita_engine")
	}
	os.WriteFile(pom, stripped, 0o644)
	os.Remove(pom + ".sha1")
	os.Remove(pom + ".md5")
	// a local Maven repository of its own (else the real pom, cached, would be used),
	// seeded with the third-party artifacts already downloaded, to spare the network
	local := filepath.Join(tmp, "local")
	os.MkdirAll(local, 0o755)
	if home, err := os.UserHomeDir(); err == nil {
		if ents, err := os.ReadDir(filepath.Join(home, ".m2", "repository")); err == nil {
			for _, e := range ents {
				exec.Command("cp", "-al", filepath.Join(home, ".m2", "repository", e.Name()), local).Run()
			}
			os.RemoveAll(filepath.Join(local, "io", "evitadb"))
		}
	}
	fetch := func(cache string, env ...string) (string, error) {
		cmd := exec.Command("bash", "../scripts/fetch-evita.sh")
		cmd.Env = append(os.Environ(), append([]string{"EVITA_REPO=" + thin, "EVITA_VERSION=" + version, "WARMSTAT_CACHE=" + cache,
			"MAVEN_REPO_LOCAL=" + local}, env...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// modules that do not make a server: refused with one line, nothing cached
	out, err := fetch(filepath.Join(tmp, "bad"), "EVITA_MODULES=evita_engine")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err == nil || !strings.Contains(lines[len(lines)-1], "without the gRPC API") {
		t.Fatalf("incomplete modules: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(tmp, "bad", "evita", version)); !os.IsNotExist(err) {
		t.Fatal("a refused fetch left a cache entry")
	}
	cache := filepath.Join(tmp, "cache")
	out, err = fetch(cache)
	if err != nil || !strings.Contains(out, "dependency-reduced pom") {
		t.Fatalf("make evita: %v\n%s", err, out)
	}
	t.Setenv("WARMSTAT_CACHE", cache)
	src, err := evitaserver.Release(version)
	if err != nil {
		t.Fatal(err)
	}
	s, err := evitaserver.Start(context.Background(), evitaserver.Config{Server: src, DataDir: filepath.Join(tmp, "d"), HeapBytes: 512 << 20,
		Probe: evitatest.Probe})
	if err != nil {
		t.Fatalf("a server from the thin pom's fetch: %v", err)
	}
	defer s.Stop(30 * time.Second)
	c, err := evita.Dial(context.Background(), s.Addr, evita.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !strings.HasPrefix(c.Version, version) {
		t.Fatalf("server says %s, fetched %s", c.Version, version)
	}
	t.Logf("thin pom: %d jars fetched, server %s started", len(src.Classpath), c.Version)
}
