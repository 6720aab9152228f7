package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/warmstat/warmstat/internal/synthrun"
)

// historyWorkflow is what the test reads of recipes/github-actions/warmstat-history.yml.
type historyWorkflow struct {
	On          map[string]any    `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Env         map[string]string `yaml:"env"`
	Defaults    struct {
		Run struct{ Shell string } `yaml:"run"`
	} `yaml:"defaults"`
	Jobs map[string]struct {
		Concurrency any `yaml:"concurrency"`
		Steps       []struct {
			Name string            `yaml:"name"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// The history recipe keeps its history as it says: three pushes' jobs, each in a
// workspace of its own with a checkout of the pushed commit and its measured run, run
// the workflow's "Add it to the history" and "The history's change points and page"
// steps as a runner would (bash -eo pipefail, the workflow's env) against a repository
// standing for GitHub's: the first makes the history branch, the other two run at once
// (whichever pushes second rebases and pushes again), and the branch ends with all three
// points, each under its commit, and a page. The steps that build evitaDB and measure it
// are not run here (a synthetic run stands for the measured one); their shape is checked.
func TestHistoryRecipe(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "recipes", "github-actions", "warmstat-history.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf historyWorkflow
	if err := yaml.NewDecoder(bytes.NewReader(raw)).Decode(&wf); err != nil {
		t.Fatalf("the workflow: %v", err)
	}
	job, ok := wf.Jobs["measure"]
	if !ok || wf.On["push"] == nil || wf.Permissions["contents"] != "write" || wf.Defaults.Run.Shell != "bash" || job.Concurrency != nil {
		t.Fatalf("the workflow: a measure job on push, contents: write, bash steps, no concurrency group (it would cancel pending pushes' jobs); got %+v", wf)
	}
	steps := map[string]string{}
	var uses []string
	for _, st := range job.Steps {
		if st.Run != "" {
			steps[st.Name] = st.Run
		}
		if st.Uses != "" {
			uses = append(uses, st.Uses)
		}
		if strings.HasPrefix(st.Uses, "actions/checkout@") && st.With["path"] == "evitadb" && st.With["fetch-depth"] != "0" {
			t.Errorf("the evitaDB checkout is shallow (fetch-depth %q): a build's place in the branch needs its history", st.With["fetch-depth"])
		}
	}
	for _, name := range []string{"Build the pushed commit's server", "Measure it once", "Add it to the history", "The history's change points and page"} {
		if steps[name] == "" {
			t.Fatalf("the workflow has no step %q", name)
		}
	}
	if m := steps["Measure it once"]; !strings.Contains(m, "--target-mode embedded") || !strings.Contains(m, "--scale 0.1") || wf.Env["HEAP"] != "4.5g" {
		t.Errorf("the measurement is not the one command's setting (embedded, the default catalog at 0.1, 4.5g): %q, HEAP %q", m, wf.Env["HEAP"])
	}
	if !strings.Contains(strings.Join(uses, " "), "actions/upload-pages-artifact@") || !strings.Contains(strings.Join(uses, " "), "actions/deploy-pages@") {
		t.Errorf("the page is not published: %v", uses)
	}

	tmp := t.TempDir()
	gitIn := func(dir string, args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=Ann", "-c", "user.email=ann@example.org"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	// GitHub's repository: three commits on dev, one per push
	origin, seedRepo := filepath.Join(tmp, "origin.git"), filepath.Join(tmp, "seed")
	gitIn(tmp, "init", "-q", "--bare", "-b", "dev", origin)
	gitIn(tmp, "init", "-q", "-b", "dev", seedRepo)
	var commits []string
	for i := range 3 {
		os.WriteFile(filepath.Join(seedRepo, "file"), []byte(fmt.Sprint(i)), 0o644)
		gitIn(seedRepo, "add", ".")
		gitIn(seedRepo, "commit", "-q", "-m", fmt.Sprintf("change %d", i))
		commits = append(commits, gitIn(seedRepo, "rev-parse", "HEAD"))
	}
	gitIn(seedRepo, "push", "-q", origin, "dev")

	bin := filepath.Dir(warmstatBinary(t))
	steps2 := []string{"Add it to the history", "The history's change points and page"}
	runJob := func(i int) error {
		ws := filepath.Join(tmp, fmt.Sprintf("job%d", i))
		if err := os.MkdirAll(ws, 0o755); err != nil {
			return err
		}
		// actions/checkout: the pushed commit, with the branch's history
		if out, err := exec.Command("git", "clone", "-q", origin, filepath.Join(ws, "evitadb")).CombinedOutput(); err != nil {
			return fmt.Errorf("clone: %v %s", err, out)
		}
		if out, err := exec.Command("git", "-C", filepath.Join(ws, "evitadb"), "checkout", "-q", "--detach", commits[i]).CombinedOutput(); err != nil {
			return fmt.Errorf("checkout: %v %s", err, out)
		}
		// the measured run
		if _, err := synthrun.Write(filepath.Join(ws, "run"), synthrun.Spec{Label: commits[i][:10], Seed: uint64(i + 1), Effect: 1, Tau: 0.01, Machine: 0.01, Theta: 2.5, Cost: true}); err != nil {
			return err
		}
		env := append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "GITHUB_STEP_SUMMARY="+filepath.Join(ws, "summary.md"), "GITHUB_WORKSPACE="+ws,
			"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		for k, v := range wf.Env {
			env = append(env, k+"="+v)
		}
		for _, name := range steps2 {
			cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", steps[name])
			cmd.Dir, cmd.Env = ws, env
			out, err := cmd.CombinedOutput()
			t.Logf("job %d: %s\n%s", i, name, tail(out, 20))
			if err != nil {
				return fmt.Errorf("job %d: step %q: %v\n%s", i, name, err, out)
			}
		}
		return nil
	}
	if err := runJob(0); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := 1; i < 3; i++ {
		wg.Go(func() { errs[i] = runJob(i) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	points := gitIn(origin, "ls-tree", "-r", "--name-only", wf.Env["HISTORY_BRANCH"])
	for _, c := range commits {
		if !strings.Contains(points, c[:10]) {
			t.Errorf("the history branch has no point of %s:\n%s", c[:10], points)
		}
	}
	if n := strings.Count(points, "hist/points/"); n != 3 {
		t.Errorf("%d points on the history branch, want 3:\n%s", n, points)
	}
	summary, _ := os.ReadFile(filepath.Join(tmp, "job0", "summary.md"))
	page, err := os.ReadFile(filepath.Join(tmp, "job0", "site", "index.html"))
	if !strings.Contains(string(summary), "1 build") || err != nil || !strings.Contains(string(page), "<svg") {
		t.Errorf("the first job's summary and page: %v\n%s", err, summary)
	}
}
