package evitaserver

import (
	"archive/zip"
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/warmstat/warmstat/runfmt"
)

// CheckoutJar is where `mvn install` leaves the fat server jar in an evitaDB checkout.
const CheckoutJar = "evita_server/target/evita-server.jar"

// Classes a runnable server must have on its classpath: a thin evita_server jar (what a
// repository holding upstream's dependency-reduced pom resolves to) lacks the last two.
var requiredClasses = []struct{ path, what string }{
	{"io/evitadb/server/EvitaServer.class", "the server's main class"},
	{"io/evitadb/core/Evita.class", "the engine (evita_engine)"},
	{"io/evitadb/externalApi/grpc/GrpcProviderRegistrar.class", "the gRPC API (evita_external_api_grpc)"},
}

// Source is one evitaDB server build and how to launch it: with a classpath and the main
// class, or with java -jar.
type Source struct {
	Kind      string    // runfmt.ServerFrom*
	Ref       string    // what the user named: version, classpath, jar or checkout path
	Classpath []string  // release and classpath sources
	Jar       string    // jar and checkout sources (absolute)
	Checkout  *Checkout // checkout source
}

// Checkout is the state of an evitaDB checkout whose server jar is used.
type Checkout struct {
	Root   string
	Commit string
	Dirty  bool // uncommitted changes (tracked or untracked files)
}

// Release is a version fetched by make evita into FetchDir.
func Release(version string) (Source, error) {
	p := filepath.Join(FetchDir(), version, "classpath.txt")
	b, err := os.ReadFile(p)
	if err != nil {
		return Source{}, fmt.Errorf("evitaDB %s is not fetched (%s missing): run make evita EVITA_VERSION=%s", version, p, version)
	}
	s, err := FromClasspath(strings.TrimSpace(string(b)))
	s.Kind, s.Ref = runfmt.ServerFromRelease, version
	return s, err
}

// FromClasspath is an explicit classpath (entries separated by ':'); every entry must exist.
func FromClasspath(cp string) (Source, error) {
	s := Source{Kind: runfmt.ServerFromClasspath, Ref: cp}
	for _, e := range filepath.SplitList(cp) {
		if e == "" {
			continue
		}
		abs, err := filepath.Abs(e)
		if err != nil {
			return s, err
		}
		if _, err := os.Stat(abs); err != nil {
			return s, fmt.Errorf("server classpath entry %s: %v", e, errors.Unwrap(err))
		}
		s.Classpath = append(s.Classpath, abs)
	}
	if len(s.Classpath) == 0 {
		return s, errors.New("server classpath is empty")
	}
	return s, nil
}

// FromJar is a runnable server jar (java -jar): its manifest's Main-Class must be the server's.
func FromJar(path string) (Source, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Source{}, err
	}
	s := Source{Kind: runfmt.ServerFromJar, Ref: path, Jar: abs}
	mf, err := readManifest(abs)
	if err != nil {
		return s, fmt.Errorf("server jar %s: %w", path, err)
	}
	if mf["Main-Class"] != MainClass {
		return s, fmt.Errorf("server jar %s: its Main-Class is %q, not %s (not an evitaDB server jar)", path, mf["Main-Class"], MainClass)
	}
	return s, nil
}

// FromCheckout is the server jar an evitaDB checkout has built. A missing jar, or one
// built before the checkout's HEAD commit or before its uncommitted changes, is refused
// with the command that builds it.
func FromCheckout(root string) (Source, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return Source{}, err
	}
	build := fmt.Sprintf("build it with: (cd %s && mvn install -pl evita_server -am -DskipTests)", abs)
	commit, err := git(abs, "rev-parse", "HEAD")
	if err != nil {
		return Source{}, fmt.Errorf("evitaDB checkout %s: not a git checkout (%v)", root, err)
	}
	jar := filepath.Join(abs, CheckoutJar)
	st, err := os.Stat(jar)
	if err != nil {
		return Source{}, fmt.Errorf("evitaDB checkout %s has no built server (%s missing); %s", root, CheckoutJar, build)
	}
	when, err := git(abs, "log", "-1", "--format=%ct", "HEAD")
	if err != nil {
		return Source{}, fmt.Errorf("evitaDB checkout %s: %v", root, err)
	}
	secs, _ := strconv.ParseInt(when, 10, 64)
	if committed := time.Unix(secs, 0); st.ModTime().Before(committed) {
		return Source{}, fmt.Errorf("evitaDB checkout %s: %s (built %s) is older than HEAD %s (committed %s); %s",
			root, CheckoutJar, st.ModTime().Format(time.DateTime), commit[:min(12, len(commit))], committed.Format(time.DateTime), build)
	}
	s, err := FromJar(jar)
	if err != nil {
		return s, err
	}
	if mf, _ := readManifest(jar); mf["Implementation-Build-Commit"] != "" && !strings.HasPrefix(commit, mf["Implementation-Build-Commit"]) {
		return Source{}, fmt.Errorf("evitaDB checkout %s: %s was built from commit %s, the checkout is at %s; %s",
			root, CheckoutJar, mf["Implementation-Build-Commit"], commit[:12], build)
	}
	changed, err := changedSince(abs, st.ModTime())
	if err != nil {
		return Source{}, fmt.Errorf("evitaDB checkout %s: %v", root, err)
	}
	if changed.path != "" {
		return Source{}, fmt.Errorf("evitaDB checkout %s: %s %s after %s was built; %s", root, changed.path, changed.how, CheckoutJar, build)
	}
	status := changed.dirty
	s.Kind, s.Ref = runfmt.ServerFromCheckout, root
	s.Checkout = &Checkout{Root: abs, Commit: commit, Dirty: status}
	return s, nil
}

// change is the first uncommitted change made after a time, if any.
type change struct {
	dirty     bool   // the tree has uncommitted changes at all
	path, how string // the first one made after the build ("" = none)
}

// changedSince reads what git itself says is uncommitted — every changed, added,
// deleted, renamed and untracked file, each untracked directory's files listed one by
// one (-uall), ignored files left out — and finds the first change made after built:
// a present file by its modification time, a deleted (or renamed-away) one by its
// nearest surviving directory's, which its removal updated.
func changedSince(root string, built time.Time) (change, error) {
	out, err := exec.Command("git", "-C", root, "status", "--porcelain=v1", "-z", "-uall", "--no-renames").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			return change{}, errors.New(strings.TrimSpace(string(ee.Stderr)))
		}
		return change{}, err
	}
	var c change
	for _, e := range strings.Split(string(out), "\x00") {
		if len(e) < 4 {
			continue
		}
		c.dirty = true
		xy, name := e[:2], e[3:]
		p := filepath.Join(root, filepath.FromSlash(name))
		if st, err := os.Lstat(p); err == nil {
			if st.ModTime().After(built) {
				return change{dirty: true, path: name, how: "changed"}, nil
			}
			continue
		}
		if !strings.Contains(xy, "D") {
			continue // listed but unreadable: nothing to time it by
		}
		for d := filepath.Dir(p); strings.HasPrefix(d, root); d = filepath.Dir(d) {
			if st, err := os.Stat(d); err == nil {
				if st.ModTime().After(built) {
					return change{dirty: true, path: name, how: "was deleted"}, nil
				}
				break
			}
		}
	}
	return c, nil
}

func git(dir string, args ...string) (string, error) {
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			return "", errors.New(strings.TrimSpace(string(ee.Stderr)))
		}
		return "", err
	}
	return strings.TrimRight(string(out), "\n"), nil // porcelain lines start with a space
}

// launch is the part of the JVM command line that names the server.
// launch is how the JVM starts the build: its main class, or main (with add appended
// to the classpath) when one is given.
func (s Source) launch(main string, add []string) []string {
	if main == "" && s.Jar != "" {
		return []string{"-jar", s.Jar}
	}
	cp := s.Classpath
	if s.Jar != "" {
		cp = []string{s.Jar} // its manifest's Class-Path still applies
	}
	if main == "" {
		main = MainClass
	}
	return []string{"-cp", strings.Join(append(slices.Clone(cp), add...), string(filepath.ListSeparator)), main}
}

// MissingClasses are those of the class files named (paths such as
// "io/evitadb/core/Evita.class") that no jar of the build holds.
func (s Source) MissingClasses(paths []string) ([]string, error) {
	jars, err := s.jars()
	if err != nil {
		return nil, err
	}
	found := map[string]bool{}
	for _, j := range jars {
		zr, err := zip.OpenReader(j)
		if err != nil {
			return nil, fmt.Errorf("server jar %s: %w", j, err)
		}
		for _, zf := range zr.File {
			if slices.Contains(paths, zf.Name) {
				found[zf.Name] = true
			}
		}
		zr.Close()
	}
	var missing []string
	for _, p := range paths {
		if !found[p] {
			missing = append(missing, p)
		}
	}
	return missing, nil
}

// Identity is what a server's own jars say about it, and their checksums.
type Identity struct {
	Version     string // Implementation-Version of the server jar's manifest; "" if absent
	BuildCommit string // Implementation-Build-Commit; "" if absent
	// Jars are the io.evitadb jars (or the single fat jar) with their SHA-256.
	Jars []runfmt.JarSum
	// ClasspathSHA256 digests every jar of the classpath in order (names and contents).
	ClasspathSHA256 string
	// Line is the evitaDB release line the build belongs to, read from what its protocol
	// offers: "2026.1" when its jars lack what 2026.2 added, "" for 2026.2 (the line
	// warmstat's catalogs are written for).
	Line string
}

// Identify reads the server's jar manifests, checksums its jars and checks that a server
// can start from them (main class, engine, gRPC API), with a one-line reason otherwise.
func (s Source) Identify() (Identity, error) {
	var id Identity
	jars, err := s.jars()
	if err != nil {
		return id, err
	}
	found := make([]bool, len(requiredClasses))
	newer := false // the build has what 2026.2's protocol added
	all := sha256.New()
	for _, j := range jars {
		sum, classes, mf, err := inspectJar(j)
		if err != nil {
			return id, fmt.Errorf("server jar %s: %w", j, err)
		}
		fmt.Fprintf(all, "%s\x00%s\n", filepath.Base(j), sum)
		newer = newer || classes[line2026_2]
		for i, rc := range requiredClasses {
			if classes[rc.path] {
				found[i] = true
				if i == 0 { // the server jar: its manifest names the build
					id.Version, id.BuildCommit = mf["Implementation-Version"], mf["Implementation-Build-Commit"]
				}
			}
		}
		if len(jars) == 1 || strings.HasPrefix(filepath.Base(j), "evita_") || strings.HasPrefix(filepath.Base(j), "evita-") {
			id.Jars = append(id.Jars, runfmt.JarSum{Name: filepath.Base(j), SHA256: sum})
		}
	}
	for i, rc := range requiredClasses {
		if !found[i] {
			return id, fmt.Errorf("evitaDB server %s (%d jars) lacks %s and cannot start: an incomplete classpath, or a thin evita_server jar without its modules (a release from make evita, or mvn dependency:build-classpath in evita_server, gives the whole one)", s.Short(), len(jars), rc.what)
		}
	}
	id.ClasspathSHA256 = hex.EncodeToString(all.Sum(nil))
	if !newer {
		id.Line = "2026.1"
	}
	return id, nil
}

// jars lists the classpath's jars: the classpath's entries, or the jar and the jars its
// manifest's Class-Path names (relative to the jar).
func (s Source) jars() ([]string, error) {
	if s.Jar == "" {
		var out []string
		for _, e := range s.Classpath {
			if strings.HasSuffix(e, ".jar") {
				out = append(out, e)
			}
		}
		return out, nil
	}
	mf, err := readManifest(s.Jar)
	if err != nil {
		return nil, fmt.Errorf("server jar %s: %w", s.Jar, err)
	}
	out := []string{s.Jar}
	for _, e := range strings.Fields(mf["Class-Path"]) {
		u, err := url.Parse(e)
		if err != nil {
			return nil, fmt.Errorf("server jar %s: Class-Path entry %q: %v", s.Jar, e, err)
		}
		p := u.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(s.Jar), p)
		}
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("server jar %s: Class-Path entry %s does not exist", s.Jar, p)
		}
		out = append(out, p)
	}
	return out, nil
}

// inspectJar returns a jar's SHA-256, the required classes it holds, and its manifest.
func inspectJar(path string) (string, map[string]bool, map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil, nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		return "", nil, nil, err
	}
	zr, err := zip.NewReader(f, st.Size())
	if err != nil {
		return "", nil, nil, fmt.Errorf("not a jar: %v", err)
	}
	classes := map[string]bool{}
	var mf map[string]string
	for _, zf := range zr.File {
		for _, rc := range requiredClasses {
			if zf.Name == rc.path {
				classes[rc.path] = true
			}
		}
		if zf.Name == line2026_2 {
			classes[line2026_2] = true
		}
		if zf.Name == "META-INF/MANIFEST.MF" {
			if mf, err = parseManifestEntry(zf); err != nil {
				return "", nil, nil, err
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), classes, mf, nil
}

func readManifest(jar string) (map[string]string, error) {
	zr, err := zip.OpenReader(jar)
	if err != nil {
		return nil, fmt.Errorf("not a jar: %v", err)
	}
	defer zr.Close()
	for _, zf := range zr.File {
		if zf.Name == "META-INF/MANIFEST.MF" {
			return parseManifestEntry(zf)
		}
	}
	return nil, errors.New("no META-INF/MANIFEST.MF")
}

// parseManifestEntry reads a jar manifest's main section (continuation lines start with
// one space).
func parseManifestEntry(zf *zip.File) (map[string]string, error) {
	r, err := zf.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	mf := map[string]string{}
	var last string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		switch {
		case line == "":
			return mf, nil // end of the main section
		case strings.HasPrefix(line, " ") && last != "":
			mf[last] += line[1:]
		default:
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			last = k
			mf[k] = strings.TrimPrefix(v, " ")
		}
	}
	return mf, sc.Err()
}

// Record is what the manifest keeps of a server warmstat started: its build (source,
// version and commit from its own jars, checksums) and its JVM (nil if unreadable).
func (s *Server) Record() (*runfmt.ServerBuild, *runfmt.JVM) {
	b := &runfmt.ServerBuild{Source: s.Server.Kind, Ref: s.Server.Ref, Version: s.Identity.Version,
		BuildCommit: s.Identity.BuildCommit, Jars: s.Identity.Jars, ClasspathSHA256: s.Identity.ClasspathSHA256}
	if co := s.Server.Checkout; co != nil {
		b.Checkout = &runfmt.Checkout{Root: co.Root, Commit: co.Commit, Dirty: co.Dirty}
	}
	j, err := s.JVM()
	if err != nil {
		return b, nil
	}
	rj := &runfmt.JVM{Java: j.Java, Vendor: j.Vendor, Version: j.Version, GC: j.GC, Options: j.Options, Flags: j.Flags, EnvOptions: j.EnvOptions}
	if j.ClassArchive != "" {
		rj.ClassArchive = filepath.Base(j.ClassArchive)
	}
	return b, rj
}

// ParseSource reads a server named in one word, as a series names its two builds:
// "release:V", "classpath:CP", "jar:FILE" or "checkout:DIR" — or, without a prefix, an
// evitaDB checkout (a directory), a runnable jar (a file ending in .jar), a classpath
// (a value holding ':' or '/'), else a release version.
//
// A path after a prefix may start with "~" or "~user" (no shell expands it there), as
// may each entry of a classpath.
func ParseSource(spec string) (Source, error) {
	if kind, rest, ok := strings.Cut(spec, ":"); ok {
		switch kind {
		case "release":
			return Release(rest)
		case "classpath", "cp":
			entries := strings.Split(rest, ":")
			for i, e := range entries {
				var err error
				if entries[i], err = ExpandHome(e); err != nil {
					return Source{}, err
				}
			}
			return FromClasspath(strings.Join(entries, ":"))
		case "jar":
			p, err := ExpandHome(rest)
			if err != nil {
				return Source{}, err
			}
			return FromJar(p)
		case "checkout", "home":
			p, err := ExpandHome(rest)
			if err != nil {
				return Source{}, err
			}
			return FromCheckout(p)
		}
	}
	if strings.HasPrefix(spec, "~") {
		p, err := ExpandHome(spec)
		if err != nil {
			return Source{}, err
		}
		spec = p
	}
	if st, err := os.Stat(spec); err == nil {
		if st.IsDir() {
			return FromCheckout(spec)
		}
		if strings.HasSuffix(spec, ".jar") {
			return FromJar(spec)
		}
	}
	if strings.ContainsAny(spec, ":/") {
		return FromClasspath(spec)
	}
	if spec == "" {
		return Source{}, errors.New("no server named")
	}
	return Release(spec)
}

// ExpandHome expands a leading "~" (the user's home, $HOME) or "~user" (that user's)
// in a path, as a shell does for a word of its own.
func ExpandHome(p string) (string, error) {
	if !strings.HasPrefix(p, "~") {
		return p, nil
	}
	name, rest, _ := strings.Cut(p[1:], "/")
	var home string
	if name == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("%s: %v", p, err)
		}
		home = h
	} else {
		u, err := user.Lookup(name)
		if err != nil {
			return "", fmt.Errorf("%s: no user %q to expand ~%s for", p, name, name)
		}
		home = u.HomeDir
	}
	return filepath.Join(home, rest), nil
}

// ClasspathString is the build's classpath as java's -cp takes it (a jar's manifest
// Class-Path applies on its own).
func (s Source) ClasspathString() (string, error) {
	if s.Jar != "" {
		return s.Jar, nil
	}
	if len(s.Classpath) == 0 {
		return "", fmt.Errorf("evitaDB %s: no classpath", s.Ref)
	}
	return strings.Join(s.Classpath, string(filepath.ListSeparator)), nil
}

// line2026_2 is a message evitaDB's protocol gained in 2026.2 (histograms on
// references): a build without it is of the 2026.1 line (Identity.Line).
const line2026_2 = "io/evitadb/externalApi/grpc/generated/GrpcSetReferenceSchemaBucketedMutation.class"

// Short is how a message names the build: its reference, or for a long classpath its
// first entry and size (a classpath of 140 jars is 10 kB).
func (s Source) Short() string {
	if len(s.Ref) <= 120 {
		return s.Ref
	}
	if len(s.Classpath) > 0 {
		return fmt.Sprintf("%s… (a classpath of %d entries)", s.Classpath[0], len(s.Classpath))
	}
	return s.Ref[:117] + "…"
}
