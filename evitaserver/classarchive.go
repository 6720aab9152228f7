package evitaserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/warmstat/warmstat/runfmt"
)

// A class-data archive (the JVM's AppCDS) holds the classes a server loads while it
// boots, parsed and verified once: a JVM mapping it boots an evitaDB server in ~7 s
// instead of ~10.5 s on this project's 2-core machines. The archive is made once per
// release, launch and JVM by a boot of its own (the server started and stopped, its
// classes dumped at exit; ~30 s) and kept in ClassArchiveDir. What a load measures is
// unchanged: the archive holds what the JVM loaded while booting, before any window
// opens, and whatever a load loads later is loaded from the jars as without it. A JVM
// that cannot map an archive (another JVM build, a changed jar) warns in its log and
// boots without it.

// ClassArchiveDir is where class-data archives are kept: $WARMSTAT_CACHE/class-archives.
func ClassArchiveDir() string { return filepath.Join(filepath.Dir(FetchDir()), "class-archives") }

// largeHeap is where the JVM gives up compressed object pointers: an archive dumped
// with them cannot be mapped without, so such heaps boot without an archive.
const largeHeap = 30 << 30

// classArchive is the archive for c's launch, made now if it does not exist yet ("" if
// c takes none, or it could not be made: the server then boots without one, and
// c.Note says why).
func classArchive(ctx context.Context, c Config, id Identity) string {
	// Only a release in make evita's cache has jars that stay where they are: an
	// archive of a jar, classpath or checkout elsewhere would be made for a path that
	// moves or a build that changes (90 MB each). Another Main (the embedded writer)
	// needs its own way to boot (Config.Boot).
	if c.NoClassArchive || c.Server.Kind != runfmt.ServerFromRelease || c.Main != "" && c.Boot == nil || c.HeapBytes >= largeHeap {
		return ""
	}
	note := func(format string, a ...any) {
		if c.Note != nil {
			c.Note(fmt.Sprintf(format, a...))
		}
	}
	java := resolveJava(c.Java)
	st, err := os.Stat(java)
	if err != nil {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00%d\x00", id.ClasspathSHA256, java, st.Size(), st.ModTime().UnixNano())
	fmt.Fprint(h, strings.Join(c.Server.launch(c.Main, c.AddClasspath), "\x00"))
	key := hex.EncodeToString(h.Sum(nil))[:16]
	dir := ClassArchiveDir()
	path := filepath.Join(dir, key+".jsa")
	if fileExists(path) {
		return path
	}
	note("making a class-data archive for %s in %s (once per build and JVM, about 30 s; later boots take 4 s less)", c.Server.Ref, dir)
	if err := trainClassArchive(ctx, c, dir, path); err != nil {
		note("no class-data archive for %s, it boots without one: %v", c.Server.Ref, err)
		return ""
	}
	return path
}

// trainClassArchive boots c once with -XX:ArchiveClassesAtExit and stops it gracefully,
// the JVM writing the archive as it exits. Another process making the same archive
// holds its lock: this one then boots without.
func trainClassArchive(ctx context.Context, c Config, dir, path string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return errors.New("another warmstat is making it")
	}
	if fileExists(path) {
		return nil
	}
	tmp, err := os.MkdirTemp(dir, ".boot-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	partial := filepath.Join(tmp, "classes.jsa")
	t := c
	t.NoClassArchive, t.Boot = true, nil
	t.DataDir, t.LogDir = filepath.Join(tmp, "data"), filepath.Join(tmp, "logs")
	t.Catalogs, t.Port, t.ExtraFiles, t.REST = nil, 0, nil, false
	t.HeapBytes = min(c.HeapBytes, 1<<30) // compressed pointers either way: the archive maps into any heap below largeHeap
	t.JVMOptions = []string{"-XX:ArchiveClassesAtExit=" + partial}
	boot := c.Boot
	if boot == nil {
		boot = func(ctx context.Context, t Config) (func() error, error) {
			s, err := Start(ctx, t)
			if err != nil {
				return nil, err
			}
			return func() error { return s.Stop(2 * time.Minute) }, nil
		}
	}
	stop, err := boot(ctx, t)
	if err != nil {
		return err
	}
	if err := stop(); err != nil {
		return err
	}
	if st, err := os.Stat(partial); err != nil || st.Size() == 0 {
		return errors.New("the boot wrote no archive")
	}
	if err := os.Rename(partial, path); err != nil {
		return err
	}
	os.Remove(path + ".lock") // a process that opened it meanwhile finds the archive made
	return nil
}
