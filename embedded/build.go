// Package embedded runs warmstat's embedded writer: evitaDB's engine inside one JVM of
// ours with no transport (java/…/EmbeddedWriter.java), driven over two pipes with the
// same request bytes a remote writer gets over gRPC. It is the transport-free control
// of a replayed load (--target-mode embedded): remote minus embedded is what gRPC costs.
//
// The Java program is compiled against each build's own jars (its API is the build's)
// and cached per build: Build compiles it once, `make embedded` does it ahead of time.
package embedded

import (
	"archive/zip"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/warmstat/warmstat/evitaserver"
)

// MainClass is the embedded writer's entry point.
const MainClass = "io.warmstat.embedded.EmbeddedWriter"

//go:embed java/io/warmstat/embedded/EmbeddedWriter.java
var javaSource []byte

// converters are the classes of evitaDB's gRPC layer the writer turns requests into
// mutations with (the server's own), and the engine and server configuration it opens.
var converters = []string{
	"io/evitadb/externalApi/grpc/requestResponse/data/mutation/DelegatingEntityMutationConverter.class",
	"io/evitadb/externalApi/grpc/requestResponse/schema/mutation/DelegatingLocalCatalogSchemaMutationConverter.class",
	"io/evitadb/externalApi/grpc/requestResponse/schema/mutation/catalog/ModifyEntitySchemaMutationConverter.class",
	"io/evitadb/externalApi/grpc/generated/GrpcUpsertEntityRequest.class",
	"io/evitadb/core/Evita.class",
	"io/evitadb/server/EvitaServer.class",
	"com/google/protobuf/Message.class", // the requests' parser
}

// ErrUnsupported: the embedded writer cannot run on the build. Its message names the
// build and what is missing, on one line; a remote writer needs none of it.
var ErrUnsupported = errors.New("the embedded writer does not support this build")

// ErrNoConverters: the build's jars lack evitaDB's gRPC converters (or its engine), so
// an embedded writer could not apply the mutation a remote one applies. A classpath
// missing them is incomplete: its server lacks the same classes.
var ErrNoConverters = errors.New("the build lacks evitaDB's gRPC converters")

// Check refuses a build the embedded writer cannot run on, naming what is missing.
func Check(src evitaserver.Source) error {
	missing, err := src.MissingClasses(converters)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: evitaDB %s has no %s: an incomplete classpath? (a release from make evita has it)", ErrNoConverters, name(src), strings.TrimSuffix(strings.ReplaceAll(missing[0], "/", "."), ".class"))
	}
	return nil
}

// CacheDir is where compiled writers are kept: one directory per build (its
// classpath's checksum) and version of our source.
func CacheDir() string { return filepath.Join(filepath.Dir(evitaserver.FetchDir()), "embedded") }

// BuildSource is Build for a source not yet identified (its jars found and read).
func BuildSource(src evitaserver.Source, progress func(string)) (string, error) {
	id, err := src.Identify()
	if err != nil {
		return "", err
	}
	return Build(src, id, progress)
}

// Build returns the writer's jar, its classes compiled against src's jars (javac, a
// few seconds) the first time. progress, if set, hears of a
// compilation.
func Build(src evitaserver.Source, id evitaserver.Identity, progress func(string)) (string, error) {
	if err := Check(src); err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(id.ClasspathSHA256))
	h.Write(javaSource)
	h.Write([]byte("jar")) // the layout: a jar (a class-data archive cannot take a directory of classes)
	dir := filepath.Join(CacheDir(), hex.EncodeToString(h.Sum(nil))[:16])
	jar := filepath.Join(dir, JarName)
	if _, err := os.Stat(jar); err == nil {
		return jar, nil
	}
	if progress != nil {
		progress(fmt.Sprintf("compiling warmstat's embedded writer against evitaDB %s (once per build) into %s", name(src), dir))
	}
	if err := os.MkdirAll(CacheDir(), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(CacheDir(), ".build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // ours: made just above; gone once renamed
	srcFile := filepath.Join(tmp, "EmbeddedWriter.java")
	if err := os.WriteFile(srcFile, javaSource, 0o644); err != nil {
		return "", err
	}
	cp, err := src.ClasspathString()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(javac(), "-nowarn", "-encoding", "UTF-8", "-d", filepath.Join(tmp, "classes"), "-cp", cp, srcFile)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", compileError(src, dir+".javac.log", out, err)
	}
	if err := writeJar(filepath.Join(tmp, "classes"), filepath.Join(tmp, JarName)); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil && !errors.Is(err, os.ErrExist) {
		if _, serr := os.Stat(jar); serr != nil { // not another warmstat's build that won the race
			return "", err
		}
	}
	return jar, nil
}

// JarName is the embedded writer's jar in its build directory.
const JarName = "embedded-writer.jar"

// writeJar packs the class files under dir into a jar (a zip of their paths).
func writeJar(dir, jar string) error {
	f, err := os.Create(jar)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		w, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
	return errors.Join(err, zw.Close(), f.Close())
}

// javac is the compiler beside the java warmstat starts.
func javac() string {
	if j := evitaserver.JavaBinary(); j != "java" {
		return filepath.Join(filepath.Dir(j), "javac")
	}
	return "javac"
}

// compileError is javac's refusal said on one line: the build's API is not one the
// writer's source knows (a line too old or too new). The compiler's whole output is
// kept in log for whoever adapts the writer; the line names javac's first error.
func compileError(src evitaserver.Source, log string, out []byte, err error) error {
	first := err.Error() // javac that did not run at all says why here
	if _, ok := err.(*exec.ExitError); ok {
		first = "javac failed"
		lines := strings.Split(string(out), "\n")
		for i, l := range lines {
			_, msg, ok := strings.Cut(l, ": error: ")
			if !ok {
				continue
			}
			first = msg
			// "cannot find symbol" names the symbol two lines on ("  symbol:   method x()")
			for _, next := range lines[i+1 : min(len(lines), i+4)] {
				if sym, ok := strings.CutPrefix(strings.TrimSpace(next), "symbol:"); ok {
					first += ": " + strings.Join(strings.Fields(sym), " ")
					break
				}
			}
			break
		}
	}
	where := ""
	if werr := os.WriteFile(log, out, 0o644); werr == nil {
		where = "; the compiler's output is in " + log
	}
	return fmt.Errorf("%w: evitaDB %s offers an API the writer does not know (javac: %s)%s", ErrUnsupported, name(src), first, where)
}

// name is how messages name a build (evitaserver.Source.Short).
func name(src evitaserver.Source) string { return src.Short() }
