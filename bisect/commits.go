package bisect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// Commit is one commit of the range, as git names it.
type Commit struct {
	Hash    string `json:"hash"`
	Subject string `json:"subject"`
	Author  string `json:"author"` // "Name <email>"
	Date    string `json:"date"`   // the author date, ISO 8601
}

// Short is the commit's abbreviated hash.
func (c Commit) Short() string { return c.Hash[:min(12, len(c.Hash))] }

// Range resolves good and bad in the checkout root and lists the first-parent commits
// of good..bad, oldest first, the bad one last; good itself is returned apart. It is
// refused when good is not an ancestor of bad, when they are the same commit, or when
// tracked files of the checkout have uncommitted changes (a bisect builds commits: the
// changes would be in none of them, and a user who expects them measured would be
// misled).
func Range(ctx context.Context, root, good, bad string) (Commit, []Commit, error) {
	if err := isTop(ctx, root); err != nil {
		return Commit{}, nil, err
	}
	g, err := resolve(ctx, root, good)
	if err != nil {
		return Commit{}, nil, err
	}
	b, err := resolve(ctx, root, bad)
	if err != nil {
		return Commit{}, nil, err
	}
	if g == b {
		return Commit{}, nil, fmt.Errorf("bisect: good %s and bad %s are the same commit %.12s", good, bad, g)
	}
	if _, err := git(ctx, root, "merge-base", "--is-ancestor", g, b); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 {
			return Commit{}, nil, fmt.Errorf("bisect: good %s (%.12s) is not an ancestor of bad %s (%.12s)", good, g, bad, b)
		}
		return Commit{}, nil, err
	}
	if out, err := git(ctx, root, "status", "--porcelain=v1", "--untracked-files=no"); err != nil {
		return Commit{}, nil, err
	} else if s := strings.TrimSpace(out); s != "" {
		first, _, _ := strings.Cut(s, "\n")
		return Commit{}, nil, fmt.Errorf("bisect: the checkout %s has uncommitted changes to tracked files (%s ...): a bisect builds commits, so they would be measured in none; commit or stash them", root, strings.TrimSpace(first))
	}
	out, err := git(ctx, root, "rev-list", "--first-parent", "--reverse", g+".."+b)
	if err != nil {
		return Commit{}, nil, err
	}
	hashes := strings.Fields(out)
	if len(hashes) == 0 || hashes[len(hashes)-1] != b {
		return Commit{}, nil, fmt.Errorf("bisect: bad %.12s is not on the first-parent line from good %.12s", b, g)
	}
	// good merged in from a side branch: the line's older commits do not contain it,
	// and a probe of them "against good" would compare unrelated builds
	if parent, err := git(ctx, root, "rev-parse", "--verify", "--quiet", hashes[0]+"^1"); err != nil || strings.TrimSpace(parent) != g {
		return Commit{}, nil, fmt.Errorf("bisect: good %s (%.12s) is not on bad's first-parent line (it reaches bad through a merge): give a good commit on that line, such as the merge's first parent", good, g)
	}
	gc, err := describe(ctx, root, g)
	if err != nil {
		return Commit{}, nil, err
	}
	commits := make([]Commit, 0, len(hashes))
	for _, h := range hashes {
		c, err := describe(ctx, root, h)
		if err != nil {
			return Commit{}, nil, err
		}
		commits = append(commits, c)
	}
	return gc, commits, nil
}

// resolve is rev's full commit hash.
// isTop checks that root is the top directory of a git checkout, naming what it is
// instead (git's own words for what git refuses, such as a checkout of another user).
func isTop(ctx context.Context, root string) error {
	out, err := git(ctx, root, "rev-parse", "--show-toplevel")
	if err != nil {
		var ge *gitError
		if errors.As(err, &ge) && ge.msg != "" {
			first, _, _ := strings.Cut(ge.msg, "\n")
			return fmt.Errorf("bisect: %s is not a git checkout warmstat can read: %s", root, strings.TrimPrefix(first, "fatal: "))
		}
		return fmt.Errorf("bisect: %s is not a git checkout: %w", root, err)
	}
	top := strings.TrimSpace(out)
	a, errA := filepath.EvalSymlinks(top)
	b, errB := filepath.EvalSymlinks(root)
	if errA != nil || errB != nil || a != b {
		return fmt.Errorf("bisect: %s is inside the checkout %s: give its top directory", root, top)
	}
	return nil
}

// CheckCheckout refuses a root that is not the top directory of a git checkout.
func CheckCheckout(ctx context.Context, root string) error {
	abs, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	return isTop(ctx, abs)
}

func resolve(ctx context.Context, root, rev string) (string, error) {
	out, err := git(ctx, root, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("bisect: %q is not a commit of %s", rev, root)
	}
	return strings.TrimSpace(out), nil
}

func describe(ctx context.Context, root, hash string) (Commit, error) {
	out, err := git(ctx, root, "log", "-1", "--format=%H%x00%s%x00%an <%ae>%x00%aI", hash)
	if err != nil {
		return Commit{}, err
	}
	f := strings.Split(strings.TrimRight(out, "\n"), "\x00")
	if len(f) != 4 {
		return Commit{}, fmt.Errorf("bisect: git log of %.12s: %q", hash, out)
	}
	return Commit{Hash: f[0], Subject: f[1], Author: f[2], Date: f[3]}, nil
}

// git runs git in dir; its error carries git's own message.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), &gitError{args: args, msg: strings.TrimSpace(stderr.String()), ExitError: ee}
		}
		return string(out), fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

type gitError struct {
	args []string
	msg  string
	*exec.ExitError
}

func (e *gitError) Error() string {
	return fmt.Sprintf("git %s: %s (%s)", strings.Join(e.args, " "), e.ExitError, e.msg)
}

func (e *gitError) Unwrap() error { return e.ExitError }

// Place is where a commit stands in a checkout's history: for a history's points.
type Place struct {
	Commit
	Order      int    // its ancestors' count (git rev-list --count): grows along any branch
	CommitDate string // the committer date, ISO 8601
	Tags       []string
}

// Locate resolves rev in the checkout root and says where it stands.
func Locate(ctx context.Context, root, rev string) (Place, error) {
	h, err := resolve(ctx, root, rev)
	if err != nil {
		return Place{}, err
	}
	c, err := describe(ctx, root, h)
	if err != nil {
		return Place{}, err
	}
	p := Place{Commit: c}
	out, err := git(ctx, root, "rev-list", "--count", h)
	if err != nil {
		return Place{}, err
	}
	if _, err := fmt.Sscan(strings.TrimSpace(out), &p.Order); err != nil {
		return Place{}, fmt.Errorf("counting the ancestors of %.12s: git said %q", h, out)
	}
	if out, err = git(ctx, root, "log", "-1", "--format=%cI", h); err != nil {
		return Place{}, err
	}
	p.CommitDate = strings.TrimSpace(out)
	if out, err = git(ctx, root, "tag", "--points-at", h); err != nil {
		return Place{}, err
	}
	p.Tags = strings.Fields(out)
	return p, nil
}

// Between lists the commits after from up to and including to, in topological order
// (oldest first; every commit of merged branches, not only the first parents): the
// builds a history of from..to measures.
func Between(ctx context.Context, root, from, to string) ([]string, error) {
	f, err := resolve(ctx, root, from)
	if err != nil {
		return nil, err
	}
	t, err := resolve(ctx, root, to)
	if err != nil {
		return nil, err
	}
	out, err := git(ctx, root, "rev-list", "--topo-order", "--reverse", f+".."+t)
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// TopoPositions places commits in one topological order of root's history (git
// rev-list --topo-order, oldest first), which keeps each branch's commits together: two
// branches merged later are one after the other, not interleaved by date. A commit
// root does not have is left out.
func TopoPositions(ctx context.Context, root string, commits []string) (map[string]int, error) {
	var have []string
	for _, c := range commits {
		if _, err := resolve(ctx, root, c); err == nil {
			have = append(have, c)
		}
	}
	out := map[string]int{}
	if len(have) == 0 {
		return out, nil
	}
	list, err := git(ctx, root, append([]string{"rev-list", "--topo-order", "--reverse"}, have...)...)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, c := range have {
		want[c] = true
	}
	for i, h := range strings.Fields(list) {
		if want[h] {
			out[h] = i
		}
	}
	return out, nil
}

// BisectFrom is the good end a bisect of a change between two builds starts from:
// before itself when it is an ancestor of after, else their merge base (before lies on
// another branch, merged later: the change is in what after's branch adds since the
// two branches parted).
func BisectFrom(ctx context.Context, root, before, after string) (string, error) {
	b, err := resolve(ctx, root, before)
	if err != nil {
		return "", err
	}
	a, err := resolve(ctx, root, after)
	if err != nil {
		return "", err
	}
	if _, err := git(ctx, root, "merge-base", "--is-ancestor", b, a); err == nil {
		return b, nil
	}
	out, err := git(ctx, root, "merge-base", b, a)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}
