package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/internal/evitatest"
)

// An interrupted series says so and how to go on, not a bare "context canceled".
func TestABInterruptedSaysHowToGoOn(t *testing.T) {
	older, newer := evitatest.TwoReleases(t)
	pristine, _ := evitatest.SmallSnapshot(t, older)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	// no heaps given: the reader's from the snapshot's record, as load chooses it, the
	// writer's at production's ratio to the catalog's live heap (the faithful method)
	code := run(ctx, []string{"warmstat", "ab", "--pristine", pristine, "--catalog", "shop", "--a", older.Ref, "--b", newer.Ref,
		"--out", filepath.Join(t.TempDir(), "s")}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "interrupted: the series stopped; the same command continues it") ||
		!strings.Contains(errb.String(), "heaps chosen from the snapshot's record (as load chooses them): --reader-heap ") ||
		!strings.Contains(errb.String(), "writer heap: --server-heap ") {
		t.Fatalf("exit %d %q", code, errb.String())
	}
}

// A series' heaps follow load's rule: not given, they come from the snapshot's record;
// a snapshot without one (a production export) needs its storage.compress and the heaps.
func TestABHeapsFollowLoadsRule(t *testing.T) {
	tmp := t.TempDir()
	if err := os.MkdirAll(filepath.Join(tmp, "p", "shop"), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"ab", "--pristine", filepath.Join(tmp, "p"), "--catalog", "shop", "--a", "2026.2.2", "--b", "2026.2.3", "--out", filepath.Join(tmp, "s")}
	for _, c := range []struct {
		extra []string
		want  string
	}{
		{nil, "the snapshot has no metadata file: give --snapshot-compress true|false (its storage.compress) with --server-heap and --reader-heap"},
		{[]string{"--snapshot-compress", "false", "--server-heap", "1g"}, "the heaps must be given: give --server-heap and --reader-heap"},
	} {
		_, stderr, code := runCLI(t, append(args, c.extra...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d %q", c.extra, code, stderr)
		}
	}
}

// A series started the older way (a remote writer: the default before every source was
// asked with the embedded writer) is continued by adding --target-mode remote, and the
// refusal to continue it otherwise says so.
func TestABOlderSeriesSaysHowToContinue(t *testing.T) {
	evitatest.TwoReleases(t)
	tmp := t.TempDir()
	wl := filepath.Join(tmp, "shop.wsw")
	synthWorkload(t, wl)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the plan is saved, then the interrupt ends it before any run
	args := []string{"warmstat", "ab", "--workload", wl, "--a", "2026.2.2", "--b", "2026.2.3", "--out", filepath.Join(tmp, "s"), "--server-heap", "1g"}
	var out, errb bytes.Buffer
	if code := run(ctx, append(args, "--target-mode", "remote"), &out, &errb); code != 1 || !strings.Contains(errb.String(), "interrupted") {
		t.Fatalf("the older way: exit %d %q", code, errb.String())
	}
	errb.Reset()
	code := run(context.Background(), args, &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), "it was started the older way (a remote writer)") || !strings.Contains(errb.String(), "add --target-mode remote to continue it") {
		t.Fatalf("continued the new way: exit %d %q", code, errb.String())
	}
}

// A --pristine that names the snapshot itself, not its parent, is refused with the
// command that was meant; one that misses the catalog lists the catalogs it holds.
func TestABPristineMissesSayWhatIsThere(t *testing.T) {
	tmp := t.TempDir()
	if err := os.MkdirAll(filepath.Join(tmp, "shop"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "shop.snapshot.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ pristine, catalog, want string }{
		{filepath.Join(tmp, "shop"), "shop", "is itself a snapshot: give its parent, --pristine " + tmp + " --catalog shop"},
		{tmp, "shpo", `no catalog directory "shpo" there (a pristine snapshot is made by warmstat seed --pristine); it holds shop`},
	} {
		_, stderr, code := runCLI(t, "ab", "--pristine", c.pristine, "--catalog", c.catalog, "--a", "2026.2.3", "--b", "2026.2.3", "--out", filepath.Join(tmp, "s"),
			"--server-heap", "1g", "--reader-heap", "1g")
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s %s: exit %d %q", c.pristine, c.catalog, code, stderr)
		}
	}
}
