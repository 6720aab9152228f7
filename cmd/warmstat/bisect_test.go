package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/warmstat/warmstat/bisect"
	"github.com/warmstat/warmstat/internal/evitatest"
	"github.com/warmstat/warmstat/series"
)

// buildJava is the test repository's build: `java Build.java` writes target/server.jar,
// a runnable jar of the real evitaDB server (Main-Class io.evitadb.server.EvitaServer,
// Class-Path the release's jars, given by the test in WARMSTAT_TEST_SERVER_CLASSPATH).
// A commit with Slow.java compiles it into the jar as its Launcher-Agent-Class, which
// `java -jar` runs before the server's own main; a commit with BROKEN does not build.
const buildJava = `import java.io.File;
import java.nio.file.*;
import java.util.*;
import java.util.jar.*;
import javax.tools.ToolProvider;

public class Build {
    public static void main(String[] args) throws Exception {
        if (Files.exists(Path.of("BROKEN"))) {
            System.err.println("error: BROKEN: this commit does not compile");
            System.exit(1);
        }
        List<String> cp = new ArrayList<>();
        for (String e : System.getenv("WARMSTAT_TEST_SERVER_CLASSPATH").split(":")) cp.add(new File(e).toURI().getRawPath());
        Manifest m = new Manifest();
        Attributes a = m.getMainAttributes();
        a.put(Attributes.Name.MANIFEST_VERSION, "1.0");
        a.put(Attributes.Name.MAIN_CLASS, "io.evitadb.server.EvitaServer");
        a.put(Attributes.Name.CLASS_PATH, String.join(" ", cp));
        Path classes = Path.of("target", "classes");
        Files.createDirectories(classes);
        if (Files.exists(Path.of("Slow.java"))) {
            if (ToolProvider.getSystemJavaCompiler().run(null, null, null, "-d", classes.toString(), "Slow.java") != 0) System.exit(1);
            a.put(new Attributes.Name("Launcher-Agent-Class"), "Slow");
        }
        try (JarOutputStream jar = new JarOutputStream(Files.newOutputStream(Path.of("target", "server.jar")), m)) {
            try (var files = Files.list(classes)) {
                for (Path f : (Iterable<Path>) files::iterator) {
                    jar.putNextEntry(new JarEntry(f.getFileName().toString()));
                    jar.write(Files.readAllBytes(f));
                    jar.closeEntry();
                }
            }
        }
    }
}
`

// slowJava is an agent that really slows the server's writes: when the server converts
// its first upsert (the boot and the schema before it are not slowed, so the test
// spends no time on them), it pins every thread of its JVM to one CPU and starts burn
// threads spinning on that CPU beside them: the writer has a share of one core instead
// of two.
const slowJava = `import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;

public class Slow {
    static final int BURN = %d;

    public static void agentmain(String args, Instrumentation inst) {
        inst.addTransformer(new ClassFileTransformer() {
            private boolean engaged;

            @Override
            public synchronized byte[] transform(ClassLoader l, String name, Class<?> c, ProtectionDomain d, byte[] b) {
                if (!engaged && "io/evitadb/externalApi/grpc/requestResponse/data/mutation/EntityUpsertMutationConverter".equals(name)) {
                    engaged = true;
                    engage();
                }
                return null; // no class is changed
            }
        });
    }

    static void engage() {
        String cpu = Integer.toString(Runtime.getRuntime().availableProcessors() - 1);
        try {
            Process p = new ProcessBuilder("taskset", "-a", "-p", "-c", cpu, Long.toString(ProcessHandle.current().pid()))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (p.waitFor() != 0) throw new IllegalStateException("taskset exited " + p.exitValue());
        } catch (Exception e) {
            e.printStackTrace();
            Runtime.getRuntime().halt(70); // a server that cannot be slowed must not pass for a fast one
        }
        for (int i = 0; i < BURN; i++) new Spin().start();
    }

    static final class Spin extends Thread {
        Spin() { super("slow-burn"); setDaemon(true); }
        @Override public void run() { long x = 0; while (true) x++; }
    }
}
`

// slowRepository makes the test's evitaDB stand-in checkout: a real git history whose
// every commit builds the real server. It returns the commits by name: good (as
// released), docs (no change to the server), slow (the server made slower), broken
// (does not build), fix (builds again, still slow), tidy (no change to the server).
func slowRepository(t *testing.T) (string, map[string]string) {
	t.Helper()
	root := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=Ann Tester", "-c", "user.email=ann@example.org"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2026-11-30T10:00:00Z", "GIT_COMMITTER_DATE=2026-11-30T10:00:00Z")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	commit := func(subject string) string {
		git("add", "-A")
		git("commit", "-q", "-m", subject)
		return git("rev-parse", "HEAD")
	}
	git("init", "-q", "-b", "main")
	write("Build.java", buildJava)
	write(".gitignore", "target/\n")
	write("README", "the server\n")
	c := map[string]string{"good": commit("The server as released")}
	write("README", "the server, built by java Build.java\n")
	c["docs"] = commit("Describe the build")
	write("Slow.java", fmt.Sprintf(slowJava, 2))
	c["slow"] = commit("Spin two threads beside the server")
	write("BROKEN", "x\n")
	c["broken"] = commit("Start a refactoring that does not compile")
	if err := os.Remove(filepath.Join(root, "BROKEN")); err != nil {
		t.Fatal(err)
	}
	c["fix"] = commit("Finish the refactoring")
	write("README", "the server, built by java Build.java (JDK 17)\n")
	c["tidy"] = commit("Tidy the README")
	return root, c
}

// A bisect of real builds of the real server, each run a real load: the test
// repository's commits build runnable server jars, one of which makes the server really
// slower (pinned to one CPU with two threads burning beside it: a third of a core
// instead of two). The bisect confirms the slowdown, skips the commit that does not
// build (the first it probes), and names the culprit; interrupted once its
// confirmation is recorded, the same command goes on without redoing it, and every
// commit it probes is built exactly once. A range without a slowdown ends in "no
// regression confirmed" (exit 3), building only the commit it had not built before.
//
// It costs 2 paired series of 3 pairs and one unpaired series of 2 runs a side, the
// loads capped at 5 entities per collection.
// CI's machine is not quiet (other packages build and test beside this one): pairs
// cancel what moves both runs of a pair, and the change (×4 or more) is far outside the
// noise left, so the verdicts do not depend on the machine being quiet. What costs a
// series more each is tested in bisect with series answered by the test: a split
// regression (TestSearchNamesEachPartOfASplitRegression), an undecidable probe.
func TestBisectRealBuilds(t *testing.T) {
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Fatal("the test's slow build pins its server with taskset (util-linux): not found")
	}
	src := evitatest.Server(t)
	pristine, _ := evitatest.SmallSnapshot(t, src)
	t.Setenv("WARMSTAT_TEST_SERVER_CLASSPATH", strings.Join(src.Classpath, ":"))
	root, c := slowRepository(t)
	short := func(name string) string { return c[name][:12] }
	tmp := t.TempDir()
	cache := filepath.Join(tmp, "builds")
	// the series: paired, one look at 3 pairs (the slowdown is far outside the noise)
	paired := []string{"--max-runs", "3"}
	args := func(good, bad, out string, series ...string) []string {
		return append([]string{"bisect", "--evita-home", root, "--good", c[good], "--bad", c[bad], "--out", filepath.Join(tmp, out),
			"--build-cmd", "java Build.java", "--server-jar-path", "target/server.jar", "--build-cache", cache,
			"--pristine", pristine, "--catalog", "shop", "--server-heap", "1g", "--reader-heap", "1g", "--replay", "--max-per-collection", "5",
			"--threshold", "5", "--format", "md",
			// the test's builds are jars without a class-data archive: their JVMs boot 2 s
			// sooner without verifying the server's bytecode (both sides; recorded)
			"--writer-jvm-option", "-XX:+UnlockDiagnosticVMOptions", "--writer-jvm-option", "-XX:-BytecodeVerificationRemote"}, series...)
	}

	// interrupted once its confirmation is recorded
	dir := filepath.Join(tmp, "bisect")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		out, err string
		code     int
	}
	first := make(chan result, 1)
	go func() {
		var out, errb strings.Builder
		code := run(ctx, append([]string{"warmstat"}, args("docs", "tidy", "bisect", paired...)...), &out, &errb)
		first <- result{out.String(), errb.String(), code}
	}()
	var r1 result
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if st, err := bisect.Read(dir); err == nil && st != nil && len(st.Probes) == 1 {
			cancel()
			r1 = <-first
			break
		}
		select {
		case r1 = <-first:
			t.Fatalf("the bisect ended before it was interrupted: exit %d\n%s\n%s", r1.code, r1.out, r1.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no confirmation recorded in 5 minutes")
		}
	}
	t.Logf("interrupted bisect:\n%s", r1.err)
	if r1.code != 1 || !strings.Contains(r1.err, "the same command continues it") {
		t.Fatalf("interrupted bisect: exit %d", r1.code)
	}
	if len(evitatest.Processes(dir)) != 0 {
		t.Fatal("the interrupted bisect left JVMs running")
	}

	out, stderr, code := runCLI(t, args("docs", "tidy", "bisect", paired...)...)
	t.Logf("resumed bisect:\n%s\n%s", out, stderr)
	if code != 0 {
		t.Fatalf("resumed bisect: exit %d", code)
	}
	// nothing done twice: the commits probed built once across both invocations (the
	// one that does not build too: its failure is cached), the confirmation not run again
	logs := r1.err + stderr
	for _, name := range []string{"docs", "slow", "broken", "tidy"} {
		if n := strings.Count(logs, "building "+short(name)); n != 1 {
			t.Errorf("%s built %d times", name, n)
		}
	}
	if strings.Contains(stderr, short("tidy")+" against "+short("docs")+", in ") {
		t.Errorf("the resumed bisect ran its confirmation again")
	}
	for _, want := range []string{
		"### warmstat bisect " + short("docs") + ".." + short("tidy") + " (4 commits), gate Product/mean",
		"- **culprit 1 of 1: " + short("slow") + ` "Spin two threads beside the server" (Ann Tester <ann@example.org>, 2026-11-30`,
		"skipped " + short("broken") + ": its build failed: java Build.java: exit status 1: error: BROKEN: this commit does not compile",
		"| " + short("tidy") + " | " + short("docs") + " |", "| " + short("slow") + " | " + short("docs") + " |",
		"machine time: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the result lacks %q", want)
		}
	}
	if m := regexp.MustCompile(`culprit 1 of 1: .*?: ([+-][0-9.]+) % \[`).FindStringSubmatch(out); m == nil {
		t.Error("the culprit's change is not shown")
	} else if v, _ := strconv.ParseFloat(m[1], 64); v < 100 {
		t.Errorf("the culprit's change %s %%: its server has a third of a core instead of two", m[1])
	}
	st, err := bisect.Read(dir)
	if err != nil || st == nil {
		t.Fatalf("bisect.json: %v", err)
	}
	if len(st.Builds) != 4 || !st.Builds[c["broken"]].Failed() || st.Outcome == nil || st.Outcome.Kind != bisect.Found {
		t.Fatalf("bisect.json: %d builds, outcome %+v", len(st.Builds), st.Outcome)
	}
	// every probe is an ordinary series directory: compare works on it
	for _, p := range st.Probes {
		if _, e, code := runCLI(t, "compare", filepath.Join(dir, p.Series, "A"), filepath.Join(dir, p.Series, "B")); code != 0 {
			t.Errorf("compare %s: exit %d %s", p.Series, code, e)
		}
	}

	// a range without a slowdown: nothing bisected, and only the commit not built
	// before is built. Its confirmation is the cheapest series there is, 2 unpaired runs
	// a side, which cannot resolve (about one degree of freedom) and so never calls a
	// change it did not see; --alpha 0.1 keeps a false "slower" below one CI run in a
	// thousand all the same.
	out, stderr, code = runCLI(t, args("good", "docs", "none", "--unpaired", "--max-runs", "2", "--alpha", "0.1")...)
	t.Logf("no slowdown:\n%s\n%s", out, stderr)
	if code != 3 || !strings.Contains(out, "no regression confirmed: good against bad: ") || !strings.Contains(stderr, "building "+short("good")) ||
		strings.Contains(stderr, "building "+short("docs")) {
		t.Fatalf("no slowdown: exit %d", code)
	}

}

// What a bisect refuses, and a range none of whose builds succeed, with no server ever
// started (every build fails): the good end named as the one that cannot be measured,
// the outcome recorded, the failure cached and said so, built again on request; a
// bisect directory in use, someone else's, or inside the checkout refused; another
// series setting named.
func TestBisectRefusalsAndFailedBuilds(t *testing.T) {
	root, c := slowRepository(t)
	tmp := t.TempDir()
	pristine := filepath.Join(tmp, "pristine")
	if err := os.MkdirAll(filepath.Join(pristine, "shop"), 0o755); err != nil {
		t.Fatal(err)
	}
	args := func(out string, extra ...string) []string {
		return append([]string{"bisect", "--evita-home", root, "--good", c["docs"], "--bad", c["tidy"], "--out", out,
			"--build-cmd", "echo cannot build; false", "--build-cache", filepath.Join(tmp, "cache"),
			"--pristine", pristine, "--catalog", "shop", "--gate", "Product/mean", "--server-heap", "1g", "--reader-heap", "1g"}, extra...)
	}
	dir := filepath.Join(tmp, "b")
	out, stderr, code := runCLI(t, args(dir, "--format", "json")...)
	if code != 1 || !strings.Contains(stderr, "the good commit "+c["docs"][:12]+" cannot be measured: its build failed: echo cannot build; false: exit status 1: cannot build") ||
		!strings.Contains(stderr, "nothing to bisect") || !strings.Contains(out, `"kind": "end-unmeasurable"`) {
		t.Fatalf("every build failing: exit %d\n%s\n%s", code, out, stderr)
	}
	// the failure is cached, and said so; --rebuild-failed builds it again
	_, stderr, _ = runCLI(t, args(dir)...)
	if !strings.Contains(stderr, c["docs"][:12]+": its build failed before (cached in ") || strings.Contains(stderr, "building ") {
		t.Fatalf("a cached failure:\n%s", stderr)
	}
	_, stderr, _ = runCLI(t, args(dir, "--rebuild-failed")...)
	if !strings.Contains(stderr, "building "+c["docs"][:12]) {
		t.Fatalf("--rebuild-failed:\n%s", stderr)
	}
	// another series setting is named; the same plan given by hashes is the same bisect
	_, stderr, code = runCLI(t, args(dir, "--threshold", "3")...)
	if code != 2 || !strings.Contains(stderr, "threshold_pct 2 then, 3 now") {
		t.Fatalf("another threshold: exit %d %s", code, stderr)
	}
	foreign := filepath.Join(tmp, "foreign")
	os.MkdirAll(foreign, 0o755)
	os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644)
	release, err := series.LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		args []string
		code int
		want string
	}{
		{args(dir), 1, "in use by another warmstat process"},
		{args(foreign), 2, "holds files and no bisect.json"},
		{args(filepath.Join(root, "out")), 2, "inside the checkout"},
		{append(args(filepath.Join(tmp, "x")), "stray"), 2, `unexpected argument "stray"`},
		{args(filepath.Join(tmp, "x"), "--build-cmd", " "), 2, "--build-cmd is empty"},
		{args(filepath.Join(tmp, "x"), "--server-jar-path", "../../etc/hostname"), 2, "a path inside the checkout"},
		{args(filepath.Join(tmp, "x"), "--evita-home", filepath.Join(root, "sub")), 2, "is not a git checkout"},
	} {
		_, stderr, code := runCLI(t, r.args...)
		if code != r.code || !strings.Contains(stderr, r.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d %q, want %d %q", r.args[len(r.args)-2:], code, stderr, r.code, r.want)
		}
	}
	release()
	if b, err := os.ReadFile(filepath.Join(foreign, "notes.txt")); err != nil || string(b) != "mine" {
		t.Fatal("the foreign directory was touched")
	}
	if out, err := exec.Command("git", "-C", root, "status", "--porcelain").Output(); err != nil || len(out) != 0 {
		t.Fatalf("the checkout changed: %q %v", out, err)
	}
}
