package bisect

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repo makes a git repository of n commits on one line, each writing file n, and a
// side branch merged after the second commit (first-parent order skips its commit).
func repo(t *testing.T, n int) (string, []string) {
	t.Helper()
	root := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=Ann Tester", "-c", "user.email=ann@example.org"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q", "-b", "main")
	var hashes []string
	for i := range n {
		os.WriteFile(filepath.Join(root, "file"), []byte(strings.Repeat("x", i+1)), 0o644)
		run("add", ".")
		run("commit", "-q", "-m", "commit "+string(rune('a'+i)))
		hashes = append(hashes, run("rev-parse", "HEAD"))
		if i == 1 {
			run("checkout", "-q", "-b", "side")
			os.WriteFile(filepath.Join(root, "side"), []byte("s"), 0o644)
			run("add", ".")
			run("commit", "-q", "-m", "side work")
			run("checkout", "-q", "main")
			run("merge", "-q", "--no-ff", "-m", "merge side", "side")
			hashes = append(hashes, run("rev-parse", "HEAD"))
		}
	}
	return root, hashes
}

func TestRangeIsTheFirstParentLine(t *testing.T) {
	root, h := repo(t, 4) // a b merge c d
	ctx := context.Background()
	good, commits, err := Range(ctx, root, h[0], "main")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range commits {
		got = append(got, c.Hash)
	}
	if good.Hash != h[0] || strings.Join(got, " ") != strings.Join(h[1:], " ") {
		t.Fatalf("good %s, commits %v, want %v", good.Hash, got, h[1:])
	}
	if c := commits[1]; c.Subject != "merge side" || c.Author != "Ann Tester <ann@example.org>" || !strings.HasPrefix(c.Date, "20") {
		t.Fatalf("the merge commit: %+v", c)
	}
	for _, c := range []struct{ good, bad, want string }{
		{h[2], h[0], "is not an ancestor of bad"},
		{h[1], h[1], "the same commit"},
		{"nope", h[1], `"nope" is not a commit of`},
	} {
		if _, _, err := Range(ctx, root, c.good, c.bad); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Range(%s, %s): %v, want %q", c.good, c.bad, err, c.want)
		}
	}
	// a commit of the side branch is not on the first-parent line of main
	side := strings.TrimSpace(mustGit(t, root, "rev-parse", "side"))
	if _, _, err := Range(ctx, root, h[0], side); err != nil {
		t.Fatalf("a range ending on the side branch is its own first-parent line: %v", err)
	}
	// uncommitted changes to tracked files are refused; untracked files are not
	os.WriteFile(filepath.Join(root, "untracked"), []byte("u"), 0o644)
	if _, _, err := Range(ctx, root, h[0], "main"); err != nil {
		t.Fatalf("an untracked file: %v", err)
	}
	os.WriteFile(filepath.Join(root, "file"), []byte("changed"), 0o644)
	if _, _, err := Range(ctx, root, h[0], "main"); err == nil || !strings.Contains(err.Error(), "uncommitted changes to tracked files (M file") {
		t.Fatalf("a dirty checkout: %v", err)
	}
}

func mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
	return string(out)
}

// Each commit is built once, in a clone of its own: the checkout is never touched, a
// failed build is kept with its log, and a second builder over the same cache builds
// nothing.
func TestBuildsAreCachedByCommit(t *testing.T) {
	root, h := repo(t, 3)
	before := mustGit(t, root, "status", "--porcelain=v1", "--ignored") + mustGit(t, root, "rev-parse", "HEAD") + mustGit(t, root, "worktree", "list")
	tmp := t.TempDir()
	count := filepath.Join(tmp, "builds")
	// the "jar" is the built commit's file and hash; commit a's build fails
	cmd := `echo built >>` + count + ` && grep -qx x file && exit 3 || { mkdir -p out && cat file > out/server.jar && git rev-parse HEAD >> out/server.jar && echo done building; }`
	b := &Builder{Root: root, Command: cmd, JarPath: "out/server.jar", Cache: filepath.Join(tmp, "cache"), WorkDir: filepath.Join(tmp, "work")}
	ctx := context.Background()
	for round := range 2 {
		for i, c := range h {
			got, err := b.Build(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if got.Cached != (round == 1) {
				t.Fatalf("round %d, commit %d: cached %v", round, i, got.Cached)
			}
			if i == 0 {
				if !got.Failed() || got.Jar != "" || !strings.Contains(got.Error, "exit status 3") {
					t.Fatalf("a failing build: %+v", got)
				}
				continue
			}
			jar, err := os.ReadFile(got.Jar)
			if err != nil || !strings.HasSuffix(string(jar), c+"\n") || got.Failed() || got.TookNs <= 0 {
				t.Fatalf("commit %d: %+v %q %v", i, got, jar, err)
			}
			if log, _ := os.ReadFile(got.Log); !strings.Contains(string(log), "done building") {
				t.Fatalf("commit %d: its log %q", i, log)
			}
		}
		b = &Builder{Root: root, Command: cmd, JarPath: "out/server.jar", Cache: filepath.Join(tmp, "cache"), WorkDir: filepath.Join(tmp, "work2")}
	}
	if n, _ := os.ReadFile(count); strings.Count(string(n), "built") != len(h) {
		t.Fatalf("%d builds for %d commits", strings.Count(string(n), "built"), len(h))
	}
	after := mustGit(t, root, "status", "--porcelain=v1", "--ignored") + mustGit(t, root, "rev-parse", "HEAD") + mustGit(t, root, "worktree", "list")
	if after != before {
		t.Fatalf("the checkout changed:\n%s\n%s", before, after)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "work", "*")); len(left) != 0 {
		t.Fatalf("clones left: %v", left)
	}
	// another command is another build
	b.Command = cmd + " && echo again"
	if got, err := b.Build(ctx, h[1]); err != nil || got.Cached {
		t.Fatalf("another build command: %+v %v", got, err)
	}
}

// A good commit merged in from a side branch is an ancestor of bad but not on its
// first-parent line: the line's older commits do not contain it, so the range is
// refused, as are a directory that is no checkout and one inside a checkout.
func TestRangeRefusesWhatIsNotALine(t *testing.T) {
	root, _ := repo(t, 4) // a b merge(side) c d
	ctx := context.Background()
	if _, _, err := Range(ctx, root, "side", "main"); err == nil || !strings.Contains(err.Error(), "is not on bad's first-parent line") {
		t.Fatalf("good on a side branch: %v", err)
	}
	if _, _, err := Range(ctx, t.TempDir(), "HEAD~1", "HEAD"); err == nil || !strings.Contains(err.Error(), "is not a git checkout") {
		t.Fatalf("not a checkout: %v", err)
	}
	sub := filepath.Join(root, "sub")
	os.MkdirAll(sub, 0o755)
	if _, _, err := Range(ctx, sub, "HEAD~1", "HEAD"); err == nil || !strings.Contains(err.Error(), "is inside the checkout") {
		t.Fatalf("a subdirectory: %v", err)
	}
}

// A sparse checkout (one that leaves out what its partial clone lacks) is built sparse:
// the build's clone checks out what the checkout does, and a full checkout all of it.
func TestBuildKeepsTheCheckoutsSparseness(t *testing.T) {
	root, h := repo(t, 3) // a b merge(side) c: the merge holds the file side
	tmp := t.TempDir()
	build := func(name, cmd string) Build {
		t.Helper()
		b := &Builder{Root: root, Command: cmd, JarPath: "out/server.jar", Cache: filepath.Join(tmp, name), WorkDir: filepath.Join(tmp, "work")}
		got, err := b.Build(context.Background(), h[2])
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := build("full", `test -e side && mkdir -p out && echo j > out/server.jar`); got.Failed() {
		t.Fatalf("a full checkout's build has no file side: %s", got.Error)
	}
	mustGit(t, root, "sparse-checkout", "set", "--no-cone", "/*", "!/side")
	if got := build("sparse", `test ! -e side && test -e file && mkdir -p out && echo j > out/server.jar`); got.Failed() {
		t.Fatalf("a sparse checkout's build checked out what the checkout leaves out: %s", got.Error)
	}
}
