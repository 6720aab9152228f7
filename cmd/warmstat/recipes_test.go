package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/warmstat/warmstat/internal/evitatest"
)

// The fleet recipes, run on this machine as far as it allows, against real servers.
//
// GitHub Actions (recipes/github-actions/warmstat-fleet.yml): the workflow is read as
// GitHub reads it and its jobs are run in order as a runner would, each in a fresh
// workspace: the workload job, the series job for machines 1 and 2 of its matrix (two
// series with separate work and series directories), the verdict job. Every run step
// runs as the shell command it is (bash -eo pipefail, the workflow's env, its matrix
// value); what GitHub's actions do is done by the test: checkout, setup-go and
// setup-java are this machine's own, the steps that build warmstat and fetch the
// releases are the test's (the warmstat built for the tests, the releases make evita
// fetched), artifacts are copied between the jobs' workspaces as upload- and
// download-artifact lay them out.
//
// Kubernetes (recipes/kubernetes/warmstat-fleet.yaml): the manifests are checked (a
// ReadWriteMany volume, an Indexed Job with one pod per node whose size matches
// FLEET_SIZE, every container the same script runner on the shared volume) and their
// scripts run here in order on a directory standing for the volume: the workload job,
// the series pods of index 0 and 1, the verdict job.
//
// The knobs are small here: the shared scale-0.001 snapshot, 5 entities per collection,
// 2 pairs per machine, a 50 % threshold (so that the verdict steps, which fail on a
// slowdown, cannot fail on noise). The Kubernetes series run with another writer heap
// (2g against 1g): a series of each recipe combined is refused, naming the heap.
func TestFleetRecipes(t *testing.T) {
	older, newer := evitatest.TwoReleases(t)
	pristine, _ := evitatest.SmallSnapshot(t, older)
	bin := filepath.Dir(warmstatBinary(t))
	tmp := t.TempDir()
	knobs := map[string]string{"EVITA_A": older.Ref, "EVITA_B": newer.Ref, "SNAPSHOT": pristine, "CAP": "5", "PAIRS": "2", "HEAP": "1g", "THRESHOLD": "50"}

	gh := runGitHubFleet(t, filepath.Join(tmp, "github"), bin, knobs)
	out, err := os.ReadFile(filepath.Join(gh, "summary.md"))
	if err != nil || !strings.Contains(string(out), "### warmstat combine: B "+newer.Ref+" vs A "+older.Ref+" on 2 machines (4 pairs)") {
		t.Fatalf("the verdict job's summary: %v\n%s", err, out)
	}

	knobs["HEAP"] = "2g"
	k8s := runKubernetesFleet(t, filepath.Join(tmp, "kubernetes"), bin, knobs)
	if b, err := os.ReadFile(filepath.Join(k8s, "verdict.md")); err != nil || !strings.Contains(string(b), "on 2 machines (4 pairs)") {
		t.Fatalf("the verdict job's verdict.md: %v\n%s", err, b)
	}

	// one series of each recipe: another writer heap, another workload file
	_, stderr, code := runCLI(t, "combine", filepath.Join(gh, "fleet", "series-1"), filepath.Join(k8s, "series-0"))
	if code != 3 || !strings.Contains(stderr, "server-heap of A differs: 1g (") || !strings.Contains(stderr, "workload of B differs") {
		t.Fatalf("series of two plans: exit %d\n%s", code, stderr)
	}
}

// ghWorkflow is what the test reads of a GitHub Actions workflow.
type ghWorkflow struct {
	Name     string            `yaml:"name"`
	On       any               `yaml:"on"`
	Env      map[string]string `yaml:"env"`
	Defaults struct {
		Run struct{ Shell string } `yaml:"run"`
	} `yaml:"defaults"`
	Jobs map[string]struct {
		Needs    string `yaml:"needs"`
		If       string `yaml:"if"`
		RunsOn   string `yaml:"runs-on"`
		Strategy struct {
			FailFast *bool            `yaml:"fail-fast"`
			Matrix   map[string][]int `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []struct {
			Name string            `yaml:"name"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			If   string            `yaml:"if"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// runGitHubFleet runs the workflow's jobs (matrix machines 1 and 2) under dir and
// returns the verdict job's workspace (its step summary in summary.md).
func runGitHubFleet(t *testing.T, dir, bin string, knobs map[string]string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "recipes", "github-actions", "warmstat-fleet.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf ghWorkflow
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&wf); err != nil {
		t.Fatalf("the workflow: %v", err)
	}
	if wf.Defaults.Run.Shell != "bash" {
		t.Fatalf("the workflow's steps must run in bash -eo pipefail (defaults.run.shell: bash), not %q", wf.Defaults.Run.Shell)
	}
	series := wf.Jobs["series"]
	if wf.Jobs["series"].Needs != "workload" || wf.Jobs["verdict"].Needs != "series" || !strings.Contains(wf.Jobs["verdict"].If, "!cancelled()") ||
		len(series.Strategy.Matrix["machine"]) < 2 ||
		series.Strategy.FailFast == nil || *series.Strategy.FailFast {
		t.Fatalf("the workflow's jobs: series needs %q, verdict needs %q, matrix %v, fail-fast %v", series.Needs, wf.Jobs["verdict"].Needs,
			series.Strategy.Matrix, series.Strategy.FailFast)
	}
	for k := range knobs {
		if _, ok := wf.Env[k]; !ok {
			t.Fatalf("the workflow has no knob %s", k)
		}
	}
	artifacts := filepath.Join(dir, "artifacts")
	var verdict string
	for _, run := range []struct {
		job     string
		machine string
	}{{"workload", ""}, {"series", "1"}, {"series", "2"}, {"verdict", ""}} {
		ws := filepath.Join(dir, run.job+run.machine)
		if err := os.MkdirAll(ws, 0o755); err != nil {
			t.Fatal(err)
		}
		env := os.Environ()
		for k, v := range wf.Env {
			if kv, ok := knobs[k]; ok {
				v = kv
			}
			env = append(env, k+"="+v)
		}
		summary := filepath.Join(ws, "summary.md")
		env = append(env, "PATH="+bin+":"+os.Getenv("PATH"), "GITHUB_PATH="+filepath.Join(ws, "github-path"), "GITHUB_STEP_SUMMARY="+summary,
			"GITHUB_WORKSPACE="+ws)
		var setup []string
		for _, st := range wf.Jobs[run.job].Steps {
			switch {
			case strings.HasPrefix(st.Uses, "actions/setup-"), strings.HasPrefix(st.Uses, "actions/checkout@"):
				setup = append(setup, st.Uses)
			case st.Name == "Build warmstat" || st.Name == "Fetch the evitaDB builds": // the test's warmstat, make evita's releases
				if !strings.Contains(st.Run, "make -C warmstat") {
					t.Fatalf("%s: %q builds no warmstat target", st.Name, st.Run)
				}
				setup = append(setup, st.Name)
			case strings.HasPrefix(st.Uses, "actions/upload-artifact@"):
				uploadArtifact(t, ws, filepath.Join(artifacts, matrixValue(t, st.With["name"], run.machine)), matrixValue(t, st.With["path"], run.machine))
			case strings.HasPrefix(st.Uses, "actions/download-artifact@"):
				downloadArtifact(t, ws, artifacts, st.With["name"], st.With["pattern"], st.With["path"])
			case st.Run != "":
				cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", matrixValue(t, st.Run, run.machine))
				cmd.Dir, cmd.Env = ws, env
				out, err := cmd.CombinedOutput()
				t.Logf("%s%s: %s\n%s", run.job, run.machine, st.Name, tail(out, 40))
				if err != nil {
					t.Fatalf("%s%s: step %q: %v", run.job, run.machine, st.Name, err)
				}
			default:
				t.Fatalf("%s: a step the test cannot run: %+v", run.job, st)
			}
		}
		if run.job != "verdict" && len(setup) != 5 || run.job == "verdict" && len(setup) != 3 {
			t.Fatalf("%s: the set-up steps %v", run.job, setup)
		}
		verdict = ws
	}
	return verdict
}

// matrixValue is s with the matrix machine substituted; any other expression is a step
// the test cannot run as GitHub would.
func matrixValue(t *testing.T, s, machine string) string {
	t.Helper()
	s = strings.ReplaceAll(s, "${{ matrix.machine }}", machine)
	if strings.Contains(s, "${{") {
		t.Fatalf("an expression the test does not evaluate: %q", s)
	}
	return s
}

// uploadArtifact copies the paths (one a line, ! excluding) into the artifact: a single
// directory's contents, as upload-artifact roots an artifact at the paths' common parent.
func uploadArtifact(t *testing.T, ws, artifact, paths string) {
	t.Helper()
	var include, exclude []string
	for _, p := range strings.Fields(paths) {
		if strings.HasPrefix(p, "!") {
			exclude = append(exclude, strings.TrimPrefix(p, "!"))
		} else {
			include = append(include, p)
		}
	}
	if len(include) != 1 {
		t.Fatalf("upload-artifact: the test lays out one path, got %v", include)
	}
	src := filepath.Join(ws, include[0])
	st, err := os.Stat(src)
	if err != nil {
		t.Fatalf("upload-artifact: %v", err)
	}
	if !st.IsDir() {
		copyPath(t, src, filepath.Join(artifact, filepath.Base(src)), nil)
		return
	}
	var skip []string
	for _, e := range exclude {
		skip = append(skip, filepath.Join(ws, e))
	}
	copyPath(t, src, artifact, skip)
}

// downloadArtifact copies one artifact (name) into path, or every artifact matching
// pattern into path/<artifact>.
func downloadArtifact(t *testing.T, ws, artifacts, name, pattern, path string) {
	t.Helper()
	dest := filepath.Join(ws, path)
	if name != "" {
		copyPath(t, filepath.Join(artifacts, name), dest, nil)
		return
	}
	all, _ := os.ReadDir(artifacts)
	n := 0
	for _, a := range all {
		if ok, _ := filepath.Match(pattern, a.Name()); ok {
			copyPath(t, filepath.Join(artifacts, a.Name()), filepath.Join(dest, a.Name()), nil)
			n++
		}
	}
	if n == 0 {
		t.Fatalf("download-artifact: no artifact matches %q", pattern)
	}
}

// copyPath copies a file or a tree (hidden files left out, as upload-artifact does; a
// path in skip left out).
func copyPath(t *testing.T, src, dst string, skip []string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if slices.Contains(skip, p) || p != src && strings.HasPrefix(info.Name(), ".") {
			if info.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		out, err := os.Create(to)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// runKubernetesFleet checks the manifests and runs their scripts under dir (standing
// for the shared volume); it returns that directory.
func runKubernetesFleet(t *testing.T, dir, bin string, knobs map[string]string) string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "recipes", "kubernetes", "warmstat-fleet.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type container struct {
		Command []string
		Args    []string
		EnvFrom []struct {
			ConfigMapRef struct{ Name string } `yaml:"configMapRef"`
		} `yaml:"envFrom"`
		VolumeMounts []struct {
			Name      string
			MountPath string `yaml:"mountPath"`
		} `yaml:"volumeMounts"`
	}
	type doc struct {
		Kind     string
		Metadata struct{ Name string }
		Data     map[string]string
		Spec     struct {
			AccessModes    []string `yaml:"accessModes"`
			CompletionMode string   `yaml:"completionMode"`
			Completions    int
			Parallelism    int
			Template       struct {
				Spec struct {
					Affinity struct {
						PodAntiAffinity struct {
							Required []struct {
								TopologyKey string `yaml:"topologyKey"`
							} `yaml:"requiredDuringSchedulingIgnoredDuringExecution"`
						} `yaml:"podAntiAffinity"`
					}
					Containers []container
				}
			}
		}
	}
	docs := map[string]doc{}
	dec := yaml.NewDecoder(f)
	for {
		var d doc
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("the manifests: %v", err)
		}
		docs[d.Kind+"/"+d.Metadata.Name] = d
	}
	cfg := docs["ConfigMap/warmstat-fleet"].Data
	series := docs["Job/warmstat-series"].Spec
	if !slices.Contains(docs["PersistentVolumeClaim/warmstat-fleet"].Spec.AccessModes, "ReadWriteMany") || series.CompletionMode != "Indexed" ||
		cfg["FLEET_SIZE"] == "" || cfg["FLEET_SIZE"] != strconv.Itoa(series.Completions) || series.Completions != series.Parallelism ||
		len(series.Template.Spec.Affinity.PodAntiAffinity.Required) != 1 || series.Template.Spec.Affinity.PodAntiAffinity.Required[0].TopologyKey != "kubernetes.io/hostname" {
		t.Fatalf("the manifests: a ReadWriteMany volume, an Indexed Job of FLEET_SIZE pods one per node; got %+v and %+v", docs["PersistentVolumeClaim/warmstat-fleet"].Spec, series)
	}
	script := func(job string) string {
		cs := docs["Job/"+job].Spec.Template.Spec.Containers
		if len(cs) != 1 || !slices.Equal(cs[0].Command, []string{"bash", "-eo", "pipefail", "-c"}) || len(cs[0].Args) != 1 ||
			len(cs[0].EnvFrom) != 1 || cs[0].EnvFrom[0].ConfigMapRef.Name != "warmstat-fleet" ||
			!slices.ContainsFunc(cs[0].VolumeMounts, func(m struct {
				Name      string
				MountPath string `yaml:"mountPath"`
			}) bool {
				return m.Name == "fleet" && m.MountPath == cfg["FLEET_DIR"]
			}) {
			t.Fatalf("job %s: one container running its script with the ConfigMap's env and the volume at FLEET_DIR; got %+v", job, cs)
		}
		return cs[0].Args[0]
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// the snapshot copied to the volume, as the workload job expects it
	if err := os.Symlink(knobs["SNAPSHOT"], filepath.Join(dir, "pristine")); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	for k, v := range cfg {
		if kv, ok := knobs[k]; ok {
			v = kv
		}
		switch k {
		case "FLEET_DIR":
			v = dir
		case "WORK_DIR": // the series pods' own disks: one for both here
			v = filepath.Join(filepath.Dir(dir), "node-disk")
		case "FLEET_SIZE":
			v = "2"
		}
		env = append(env, k+"="+v)
	}
	for _, run := range []struct{ job, index string }{{"warmstat-workload", ""}, {"warmstat-series", "0"}, {"warmstat-series", "1"}, {"warmstat-verdict", ""}} {
		cmd := exec.Command("bash", "-eo", "pipefail", "-c", script(run.job))
		cmd.Env = env
		if run.index != "" {
			cmd.Env = append(cmd.Env, "JOB_COMPLETION_INDEX="+run.index)
		}
		out, err := cmd.CombinedOutput()
		t.Logf("%s %s:\n%s", run.job, run.index, tail(out, 40))
		if err != nil {
			t.Fatalf("%s %s: %v", run.job, run.index, err)
		}
	}
	return dir
}

// tail is the last n lines of out.
func tail(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
