// Package evitatest finds and starts real evitaDB servers for tests. A server-backed
// test calls Server (or Start); without a server artifact it is skipped with the reason —
// or failed, naming what is missing, when WARMSTAT_REQUIRE_SERVER=1 (as CI sets it).
// Every server-backed test is counted in $WARMSTAT_SERVER_TESTS (a file; CI prints how
// many ran and how many skipped), and holds one of a few machine-wide slots while it
// runs (Slots): test packages run in parallel, and at most that many server-backed tests
// at once; a test whose verdict rests on speed runs alone (Exclusive).
package evitatest

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/profile"
)

// Releases are the evitaDB versions make evita fetched, oldest first.
func Releases() []string {
	files, _ := filepath.Glob(filepath.Join(evitaserver.FetchDir(), "*", ".complete"))
	var vs []string
	for _, f := range files {
		vs = append(vs, filepath.Base(filepath.Dir(f)))
	}
	slices.SortFunc(vs, compareVersions)
	return vs
}

// compareVersions orders dotted versions numerically where the parts are numbers.
func compareVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		na, ea := strconv.Atoi(pa[i])
		nb, eb := strconv.Atoi(pb[i])
		if ea == nil && eb == nil {
			if c := cmp.Compare(na, nb); c != 0 {
				return c
			}
		} else if c := cmp.Compare(pa[i], pb[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(pa), len(pb))
}

// Server is the server build tests run against: $WARMSTAT_EVITA_CLASSPATH, else the
// release $WARMSTAT_EVITA_VERSION, else the newest release make evita fetched. It marks
// t as server-backed (counted, locked; skipped or failed when there is none).
func Server(t testing.TB) evitaserver.Source {
	t.Helper()
	if cp := os.Getenv("WARMSTAT_EVITA_CLASSPATH"); cp != "" {
		s, err := evitaserver.FromClasspath(cp)
		if err != nil {
			unavailable(t, "WARMSTAT_EVITA_CLASSPATH: "+err.Error())
		}
		begin(t, "classpath")
		return s
	}
	v := os.Getenv("WARMSTAT_EVITA_VERSION")
	if v == "" {
		rs := Releases()
		if len(rs) == 0 {
			unavailable(t, "no evitaDB server: make evita has fetched no release into "+evitaserver.FetchDir()+
				" (EVITA_REPO=<repository> make evita), and WARMSTAT_EVITA_CLASSPATH is not set")
		}
		v = rs[len(rs)-1]
	}
	return release(t, v)
}

// TwoReleases are the two newest fetched releases (older, newer), for tests that
// compare builds.
func TwoReleases(t testing.TB) (evitaserver.Source, evitaserver.Source) {
	t.Helper()
	rs := Releases()
	if len(rs) < 2 {
		unavailable(t, fmt.Sprintf("needs two evitaDB releases, make evita has fetched %v (make evita EVITA_VERSION=2026.2.2 and 2026.2.3)", rs))
	}
	return release(t, rs[len(rs)-2]), release(t, rs[len(rs)-1])
}

// Line2026_1 is the newest fetched release of evitaDB's 2026.1 line, for tests of a
// comparison across the lines (make evita EVITA_VERSION=2026.1.20).
func Line2026_1(t testing.TB) evitaserver.Source {
	t.Helper()
	var last string
	for _, v := range Releases() {
		if strings.HasPrefix(v, "2026.1.") {
			last = v
		}
	}
	if last == "" {
		unavailable(t, fmt.Sprintf("needs a release of the 2026.1 line, make evita has fetched %v (make evita EVITA_VERSION=2026.1.20)", Releases()))
	}
	return release(t, last)
}

// Without is src with the jars whose names start with prefix left out: an incomplete
// build, for tests of how one is refused. It fails t when no jar was left out.
func Without(t testing.TB, src evitaserver.Source, prefix string) evitaserver.Source {
	t.Helper()
	var lean []string
	for _, j := range src.Classpath {
		if !strings.HasPrefix(filepath.Base(j), prefix) {
			lean = append(lean, j)
		}
	}
	s, err := evitaserver.FromClasspath(strings.Join(lean, ":"))
	if err != nil || len(lean) == len(src.Classpath) {
		t.Fatalf("%s without %s* (%d of %d jars): %v", src.Ref, prefix, len(lean), len(src.Classpath), err)
	}
	return s
}

func release(t testing.TB, v string) evitaserver.Source {
	t.Helper()
	s, err := evitaserver.Release(v)
	if err != nil {
		unavailable(t, err.Error())
	}
	begin(t, v)
	return s
}

// Required is true when a missing server is a failure (CI), not a reason to skip.
func Required() bool { return os.Getenv("WARMSTAT_REQUIRE_SERVER") == "1" }

func unavailable(t testing.TB, why string) {
	t.Helper()
	count(t, "skipped", why)
	if Required() {
		t.Fatalf("server-backed test cannot run (WARMSTAT_REQUIRE_SERVER=1): %s", why)
	}
	t.Skip(why)
}

var (
	mu        sync.Mutex
	locked    = map[string]bool{}
	exclusive = map[string]bool{}
)

// Slots is how many server-backed tests may run at once on this machine, across all
// test packages: $WARMSTAT_TEST_SLOTS, by default 2. On 2 cores a server-backed test
// keeps about one busy on average (JVM boots, loads, waits), so two of them fill the
// machine where one leaves half of it idle; a test whose assertions depend on having
// the machine to itself says so with Exclusive.
func Slots() int {
	if n, err := strconv.Atoi(os.Getenv("WARMSTAT_TEST_SLOTS")); err == nil && n >= 1 {
		return n
	}
	return 2
}

// Exclusive makes t, a server-backed test, run alone: no other server-backed test of any
// package runs beside it. For tests whose verdicts rest on speed (a slowdown to find, a
// CPU pinned and burned), and those that watch the whole machine. Call it first.
func Exclusive(t testing.TB) {
	mu.Lock()
	defer mu.Unlock()
	exclusive[t.Name()] = true
}

// begin counts t as run and takes a machine-wide server-test slot for its duration
// (every slot when t is Exclusive). The slots are flocks on files in the temporary
// directory; a gate lock, held shared for an instant by a test taking a slot and
// exclusively by an exclusive test for its whole run, lets an exclusive test in
// without the others taking every slot before it.
func begin(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		unavailable(t, "starts evitaDB servers (-short)")
	}
	mu.Lock()
	defer mu.Unlock()
	if locked[t.Name()] {
		return
	}
	count(t, "ran", what)
	open := func(name string) *os.File {
		f, err := os.OpenFile(filepath.Join(os.TempDir(), name), os.O_CREATE|os.O_RDWR, 0o666)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	lock := func(f *os.File, how int) bool {
		err := syscall.Flock(int(f.Fd()), how)
		if err != nil && how&syscall.LOCK_NB == 0 {
			t.Fatal(err)
		}
		return err == nil
	}
	waited := time.Now()
	gate := open("warmstat-server-tests.lock")
	var held []*os.File
	if exclusive[t.Name()] {
		lock(gate, syscall.LOCK_EX)
		for i := range Slots() {
			f := open(fmt.Sprintf("warmstat-server-tests.slot%d.lock", i))
			lock(f, syscall.LOCK_EX)
			held = append(held, f)
		}
	} else {
		for held == nil {
			lock(gate, syscall.LOCK_SH)
			for i := range Slots() {
				f := open(fmt.Sprintf("warmstat-server-tests.slot%d.lock", i))
				if lock(f, syscall.LOCK_EX|syscall.LOCK_NB) {
					held = append(held, f)
					break
				}
				f.Close()
			}
			lock(gate, syscall.LOCK_UN)
			if held == nil {
				time.Sleep(100 * time.Millisecond)
			}
		}
		gate.Close()
		gate = nil
	}
	if d := time.Since(waited); d > time.Second {
		t.Logf("waited %s for other packages' server tests", d.Round(time.Second))
	}
	locked[t.Name()] = true
	start := time.Now()
	t.Cleanup(func() {
		took := time.Since(start).Round(time.Second).String()
		count(t, "took", took) // CI lists the slowest
		if exclusive[t.Name()] {
			count(t, "alone", took)
		}
		mu.Lock()
		delete(locked, t.Name())
		mu.Unlock()
		for _, f := range held {
			f.Close() // drops the slot
		}
		if gate != nil {
			gate.Close()
		}
	})
}

func count(t testing.TB, what, detail string) {
	p := os.Getenv("WARMSTAT_SERVER_TESTS")
	if p == "" {
		return
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s\t%s\t%s\n", what, t.Name(), strings.ReplaceAll(detail, "\n", " "))
}

// Probe is evita.Probe (kept for the tests' readability).
var Probe = evita.Probe

// Start starts a server with a 1 GiB heap in a temporary directory, stopped when the
// test ends, and returns it with a connected client.
func Start(t testing.TB) (*evitaserver.Server, *evita.Client) {
	t.Helper()
	return start(t, false)
}

// StartREST is Start with the server's REST API enabled (see REST).
func StartREST(t testing.TB) (*evitaserver.Server, *evita.Client) {
	t.Helper()
	return start(t, true)
}

// StartRESTOn is StartREST on copies of stopped servers' catalogs (name -> directory).
func StartRESTOn(t testing.TB, catalogs map[string]string) (*evitaserver.Server, *evita.Client) {
	t.Helper()
	return start(t, true, catalogs)
}

// StartOn is Start on the build src (Server, Line2026_1, ...).
func StartOn(t testing.TB, src evitaserver.Source) (*evitaserver.Server, *evita.Client) {
	t.Helper()
	s, c, err := startE(src, t.TempDir(), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Kill() })
	return s, c
}

func start(t testing.TB, rest bool, catalogs ...map[string]string) (*evitaserver.Server, *evita.Client) {
	t.Helper()
	var cats map[string]string
	if len(catalogs) > 0 {
		cats = catalogs[0]
	}
	s, c, err := startE(Server(t), t.TempDir(), rest, cats)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Kill() }) // its data is the test's temporary directory: no graceful stop (4 s) needed
	return s, c
}

// StartTwo is Start twice, the two JVMs booting at once (a boot is mostly one core's
// work: two take little longer than one).
func StartTwo(t testing.TB) (*evitaserver.Server, *evita.Client, *evitaserver.Server, *evita.Client) {
	t.Helper()
	return startTwo(t, false)
}

// StartTwoREST is StartREST twice, booting at once.
func StartTwoREST(t testing.TB) (*evitaserver.Server, *evita.Client, *evitaserver.Server, *evita.Client) {
	t.Helper()
	return startTwo(t, true)
}

func startTwo(t testing.TB, rest bool) (*evitaserver.Server, *evita.Client, *evitaserver.Server, *evita.Client) {
	t.Helper()
	src := Server(t)
	type up struct {
		s   *evitaserver.Server
		c   *evita.Client
		err error
	}
	dirs := []string{t.TempDir(), t.TempDir()}
	ch := make([]chan up, 2)
	for i := range ch {
		ch[i] = make(chan up, 1)
		go func() {
			s, c, err := startE(src, dirs[i], rest, nil)
			ch[i] <- up{s, c, err}
		}()
	}
	var got [2]up
	for i := range got {
		got[i] = <-ch[i]
		if got[i].s != nil {
			u := got[i]
			t.Cleanup(func() { u.c.Close(); u.s.Kill() })
		}
	}
	for _, u := range got {
		if u.err != nil {
			t.Fatal(u.err)
		}
	}
	return got[0].s, got[0].c, got[1].s, got[1].c
}

// startE starts one test server in dir; on an error nothing is left running.
func startE(src evitaserver.Source, dir string, rest bool, cats map[string]string) (*evitaserver.Server, *evita.Client, error) {
	ctx := context.Background()
	s, err := evitaserver.Start(ctx, evitaserver.Config{Server: src, DataDir: filepath.Join(dir, "data"), HeapBytes: 1 << 30,
		Compress: true, REST: rest, Probe: Probe, Ready: 3 * time.Minute, WaitForMemory: 10 * time.Minute, Catalogs: cats})
	if err != nil {
		return nil, nil, err
	}
	c, err := evita.Dial(ctx, s.Addr, evita.Options{})
	if err != nil {
		s.Kill()
		return nil, nil, err
	}
	return s, c, nil
}

// Repository is the extra Maven repository holding evitaDB ($WARMSTAT_EVITA_REPO, which
// make test sets from EVITA_REPO), for tests of make evita itself. It marks t as
// server-backed.
func Repository(t testing.TB) string {
	t.Helper()
	r := os.Getenv("WARMSTAT_EVITA_REPO")
	if r == "" {
		unavailable(t, "no evitaDB Maven repository: set EVITA_REPO (make test passes it on as WARMSTAT_EVITA_REPO)")
	}
	if st, err := os.Stat(r); err != nil || !st.IsDir() {
		unavailable(t, "WARMSTAT_EVITA_REPO "+r+" is not a directory")
	}
	begin(t, "repository "+r)
	return r
}

// Processes lists the live processes whose command line contains s (a test's
// directory names the JVMs it started): a JVM outliving its run is a defect.
func Processes(s string) []int {
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), s) {
			if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// Profiler is the async-profiler make profiler fetched, for tests that profile a
// server; without it the test is skipped with the reason, or failed when
// WARMSTAT_REQUIRE_SERVER=1 (CI runs make profiler).
func Profiler(t testing.TB) profile.Artifact {
	t.Helper()
	a, err := profile.Fetched(profile.AsyncProfilerVersion)
	if err != nil {
		unavailable(t, err.Error())
	}
	return a
}
