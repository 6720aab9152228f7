package bisect

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/warmstat/warmstat/base/procgroup"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/runfmt"
)

// DefaultBuildCommand builds evitaDB's server jar in a checkout.
const DefaultBuildCommand = "mvn -q install -pl evita_server -am -DskipTests"

// Builder builds commits of one checkout, each once: the server jar a build leaves is
// kept in Cache by commit (and by build command and jar path, which change what a
// build makes), with the build's log, so a second bisect over the same commits builds
// nothing. A build that failed is kept too, with its log: it is built again only with
// RetryFailed.
type Builder struct {
	Root    string // the checkout: only read (each build runs in a clone of its own)
	Command string // run with sh -c in the clone (DefaultBuildCommand when empty)
	JarPath string // the server jar the command leaves, relative to the clone (evitaserver.CheckoutJar when empty)
	Cache   string // the builds by commit
	WorkDir string // where the clones are made; each is removed after its build
	// RetryFailed builds a commit again whose cached build failed (a build command or
	// a machine fixed since): its old entry is replaced.
	RetryFailed bool
	// Progress, if set, is told what is being built, and of a failed build found in
	// the cache.
	Progress func(msg string)

	swept bool
}

// Build is one commit's build.
type Build struct {
	Commit  string `json:"commit"`
	Command string `json:"command"`
	JarPath string `json:"jar_path"`
	Jar     string `json:"jar,omitempty"` // the cached server jar ("" when the build failed)
	Log     string `json:"log"`           // the build's output
	Error   string `json:"error,omitempty"`
	TookNs  int64  `json:"took_ns"`
	Cached  bool   `json:"-"` // found in the cache: built by an earlier invocation
}

// Failed reports whether the commit could not be built.
func (b Build) Failed() bool { return b.Error != "" }

const buildRecord = "build.json"

func (b *Builder) command() string {
	if b.Command == "" {
		return DefaultBuildCommand
	}
	return b.Command
}

func (b *Builder) jarPath() string {
	if b.JarPath == "" {
		return evitaserver.CheckoutJar
	}
	return b.JarPath
}

// entry is commit's cache directory.
func (b *Builder) entry(commit string) string {
	k := sha256.Sum256([]byte(b.command() + "\x00" + b.jarPath()))
	return filepath.Join(b.Cache, commit+"-"+hex.EncodeToString(k[:])[:12])
}

// Build builds commit, or finds its build in the cache. A build that fails is a
// Build with Error set and no error returned; the error is for what is not the
// commit's fault (the cache cannot be written, git fails, ctx is done).
func (b *Builder) Build(ctx context.Context, commit string) (Build, error) {
	dir := b.entry(commit)
	if got, found, err := b.cached(commit, dir); err != nil || found {
		return got, err
	}
	if err := b.sweep(); err != nil {
		return Build{}, err
	}
	if err := os.RemoveAll(dir); err != nil { // a build that did not finish (ours: the cache holds builds only)
		return Build{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Build{}, err
	}
	if err := os.MkdirAll(b.WorkDir, 0o755); err != nil {
		return Build{}, err
	}
	clone, err := os.MkdirTemp(b.WorkDir, "build-"+commit[:min(12, len(commit))]+"-")
	if err != nil {
		return Build{}, err
	}
	defer func() {
		os.RemoveAll(clone)  // made here, for this build only
		os.Remove(b.WorkDir) // and the directory that held it, once empty: no work/ left behind
	}()
	rec := Build{Commit: commit, Command: b.command(), JarPath: b.jarPath(), Log: filepath.Join(dir, "build.log")}
	if err := b.checkout(ctx, clone, commit); err != nil {
		return Build{}, err
	}
	if b.Progress != nil {
		b.Progress(fmt.Sprintf("building %.12s (%s) ...", commit, rec.Command))
	}
	runErr, tail, err := runBuild(ctx, &rec, clone)
	if err != nil {
		return Build{}, err
	}
	if ctx.Err() != nil {
		os.RemoveAll(dir) // not the commit's fault: built again next time
		return Build{}, ctx.Err()
	}
	if runErr != nil {
		rec.Error = fmt.Sprintf("%s: %v%s", rec.Command, runErr, tail)
	} else if err := keepJar(&rec, clone, dir); err != nil {
		return Build{}, err
	}
	return rec, runfmt.WriteJSONAtomic(filepath.Join(dir, buildRecord), rec)
}

// cached is commit's build from the cache, if found there (a failed build is not
// found when RetryFailed asks to build it again).
func (b *Builder) cached(commit, dir string) (got Build, found bool, err error) {
	if found, err = runfmt.ReadJSONStrict(filepath.Join(dir, buildRecord), &got); err != nil {
		return Build{}, false, err
	}
	if !found || got.Failed() && b.RetryFailed { // written last: a found entry is whole
		return Build{}, false, nil
	}
	got.Cached = true
	if got.Jar != "" {
		if _, err := os.Stat(got.Jar); err != nil {
			return Build{}, false, fmt.Errorf("the cached build of %.12s lost its jar (%v): remove %s to build it again", commit, err, dir)
		}
	}
	if got.Failed() && b.Progress != nil {
		b.Progress(fmt.Sprintf("%.12s: its build failed before (cached in %s; --rebuild-failed builds it again)", commit, dir))
	}
	return got, true, nil
}

// checkout makes clone a checkout of commit: a clone sharing the checkout's objects,
// so that the checkout's files, index and refs are never touched.
func (b *Builder) checkout(ctx context.Context, clone, commit string) error {
	if _, err := git(ctx, b.WorkDir, "clone", "--quiet", "--shared", "--no-checkout", b.Root, clone); err != nil {
		return err
	}
	if err := copySparse(ctx, b.Root, clone); err != nil {
		return err
	}
	_, err := git(ctx, clone, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", commit)
	return err
}

// runBuild runs the build command in clone, its output into rec.Log, and records how
// long it took. runErr is the command's failure (the commit's), with tail the end of
// its output; err is what is not the commit's fault.
func runBuild(ctx context.Context, rec *Build, clone string) (runErr error, tail string, err error) {
	logf, err := os.Create(rec.Log)
	if err != nil {
		return nil, "", err
	}
	began := time.Now()
	cmd := exec.CommandContext(ctx, "sh", "-c", rec.Command)
	cmd.Dir = clone
	// the build in a process group of its own, ended as a whole: a stopped bisect
	// leaves no mvn running on
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var out tailBuffer
	cmd.Stdout = io.MultiWriter(logf, &out)
	cmd.Stderr = cmd.Stdout
	runErr = cmd.Start()
	if runErr == nil {
		// a stop at once (SIGTERM) kills the group, not just sh, wherever warmstat is
		forget := procgroup.Track(cmd.Process.Pid)
		runErr = cmd.Wait()
		forget()
	}
	rec.TookNs = time.Since(began).Nanoseconds()
	if err := logf.Close(); err != nil {
		return nil, "", err
	}
	return runErr, out.last(), nil
}

// keepJar copies the jar a successful build left into the cache entry dir, or records
// that it left none.
func keepJar(rec *Build, clone, dir string) error {
	jar := filepath.Join(clone, rec.JarPath)
	if _, err := os.Stat(jar); err != nil {
		rec.Error = fmt.Sprintf("%s succeeded but left no %s", rec.Command, rec.JarPath)
		return nil
	}
	in, err := os.Open(jar)
	if err != nil {
		return err
	}
	defer in.Close()
	rec.Jar = filepath.Join(dir, "server.jar")
	return runfmt.WriteFileAtomic(rec.Jar, func(w io.Writer) error { _, err := io.Copy(w, in); return err })
}

// sweep removes, once, the clones of builds that did not end (a warmstat killed at
// once): the work directory is the bisect's, and its lock keeps any other warmstat
// out of it, so every clone in it is a leftover.
func (b *Builder) sweep() error {
	if b.swept {
		return nil
	}
	b.swept = true
	old, err := filepath.Glob(filepath.Join(b.WorkDir, "build-*"))
	if err != nil {
		return err
	}
	for _, d := range old {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
	}
	return nil
}

// tailBuffer keeps the last lines a build printed, for its error.
type tailBuffer struct{ b []byte }

const tailBytes = 4 << 10

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > tailBytes {
		t.b = t.b[len(t.b)-tailBytes:]
	}
	return len(p), nil
}

// last is the build's last non-empty line, as ": line" ("" when it printed nothing).
func (t *tailBuffer) last() string {
	lines := strings.Split(strings.TrimSpace(string(bytes.ToValidUTF8(t.b, nil))), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return ": " + l
	}
	return ""
}

// copySparse gives the clone the checkout's sparse-checkout patterns, when it has any:
// the clone checks out what the checkout does. A checkout made sparse to leave out
// files its repository lacks (a partial clone's large documentation blobs) is built
// without them, instead of failing on its first missing blob.
func copySparse(ctx context.Context, root, clone string) error {
	if on, _ := git(ctx, root, "config", "--bool", "core.sparseCheckout"); strings.TrimSpace(on) != "true" {
		return nil
	}
	from, err := git(ctx, root, "rev-parse", "--path-format=absolute", "--git-path", "info/sparse-checkout")
	if err != nil {
		return err
	}
	patterns, err := os.ReadFile(strings.TrimSpace(from))
	if err != nil {
		return fmt.Errorf("the checkout %s is sparse, but its patterns do not read: %w", root, err)
	}
	to, err := git(ctx, clone, "rev-parse", "--path-format=absolute", "--git-path", "info/sparse-checkout")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(strings.TrimSpace(to)), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(strings.TrimSpace(to), patterns, 0o644); err != nil {
		return err
	}
	cone, _ := git(ctx, root, "config", "--bool", "core.sparseCheckoutCone")
	if _, err := git(ctx, clone, "config", "core.sparseCheckoutCone", cmp.Or(strings.TrimSpace(cone), "false")); err != nil {
		return err
	}
	_, err = git(ctx, clone, "config", "core.sparseCheckout", "true")
	return err
}
