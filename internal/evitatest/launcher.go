package evitatest

import (
	"archive/zip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/evitaserver"
)

// LauncherJar writes a runnable jar at path whose manifest names the server's main class
// and lists src's classpath in Class-Path: `java -jar` on it is a genuine jar launch of
// the same server, the way a release's fat evita-server.jar is launched.
func LauncherJar(t testing.TB, src evitaserver.Source, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var entries []string
	for _, e := range src.Classpath {
		entries = append(entries, (&url.URL{Path: e}).EscapedPath())
	}
	mf := "Manifest-Version: 1.0\r\n" + manifestLine("Main-Class", evitaserver.MainClass) +
		manifestLine("Class-Path", strings.Join(entries, " ")) + "\r\n"
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	w, err := zw.Create("META-INF/MANIFEST.MF")
	if err == nil {
		_, err = w.Write([]byte(mf))
	}
	if err == nil {
		err = zw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// manifestLine wraps a manifest attribute at 72 bytes a line (continuations start with
// one space), as the jar specification requires.
func manifestLine(k, v string) string {
	s := k + ": " + v
	var b strings.Builder
	for len(s) > 70 {
		b.WriteString(s[:70] + "\r\n ")
		s = s[70:]
	}
	b.WriteString(s + "\r\n")
	return b.String()
}
