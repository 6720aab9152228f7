package profile

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/runfmt"
)

const testReference = `# a test reference
warmstat-fidelity-reference 1
name test-ref
about shares chosen for the test
entry get     cpu   total 20   main  Schema.get | made up
entry leaf    cpu   self  10   main  java.util.HashMap.getNode | made up
entry group   cpu   total 50   minor Schema.get,Verifier.* | made up
entry inner   cpu   total 5    main  IntMap$* | made up
entry key     alloc self  40   main  *$Key | made up
entry nothere alloc total 10   minor Absent.frame | made up
`

func parseRef(t *testing.T, text string) *Reference {
	t.Helper()
	r, err := ParseReference(strings.NewReader(text), "test.ref")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A malformed reference is refused with its file, line and field.
func TestReferenceParsedStrictly(t *testing.T) {
	r := parseRef(t, testReference)
	if r.Name != "test-ref" || len(r.Entries) != 6 || r.Entries[2].Frames[1] != "Verifier.*" || !r.Entries[0].Main || r.Entries[2].Main ||
		r.Entries[4].Event != "alloc" || r.Entries[1].Measure != MeasureSelf || r.Entries[0].Line != 5 {
		t.Fatalf("parsed %+v", r)
	}
	head := "warmstat-fidelity-reference 1\nname x\n"
	for _, c := range []struct{ text, want string }{
		{"", "test.ref: field format: empty"},
		{"name x\n", "test.ref:1: field format: not a fidelity reference"},
		{"warmstat-fidelity-reference 2\n", "test.ref:1: field format: version 2 is newer than this warmstat reads (1)"},
		{"warmstat-fidelity-reference one\n", "test.ref:1: field format: version \"one\""},
		{head, "test.ref: field entry: no entries"},
		{"warmstat-fidelity-reference 1\nentry a cpu self 1 main f | s\n", "test.ref: field name: missing"},
		{head + "entry a cpu self 1 main f\n", "test.ref:3: field source: missing"},
		{head + "entry a cpu self 1 main f |  \n", "test.ref:3: field source: missing"},
		{head + "entry a gpu self 1 main f | s\n", "test.ref:3: field event: \"gpu\""},
		{head + "entry a cpu all 1 main f | s\n", "test.ref:3: field measure: \"all\""},
		{head + "entry a cpu self -1 main f | s\n", "test.ref:3: field share: \"-1\""},
		{head + "entry a cpu self 101 main f | s\n", "test.ref:3: field share: \"101\""},
		{head + "entry a cpu self x main f | s\n", "test.ref:3: field share"},
		{head + "entry a cpu self 1 major f | s\n", "test.ref:3: field class: \"major\""},
		{head + "entry a cpu self 1 main | s\n", "test.ref:3: field frames: an entry is"},
		{head + "entry a cpu self 1 | s\n", "test.ref:3: field class: an entry is"},
		{head + "entry a cpu self 1 main f g | s\n", "test.ref:3: field frames: an entry is"},
		{head + "entry a cpu self 1 main f,,g | s\n", "test.ref:3: field frames: a pattern that names no frame"},
		{head + "entry a cpu self 1 main f,** | s\n", "test.ref:3: field frames: a pattern that names no frame"},
		{head + "entry a cpu self 1 main f | s\n\nentry a cpu total 2 main g | s\n", "test.ref:5: field id: \"a\" already defined on line 3"},
		{head + "name y\n", "test.ref:3: field name: given twice"},
		{head + "about\n", "test.ref:3: field about: empty"},
		{head + "frames f\n", "test.ref:3: field key: unknown key \"frames\""},
		{head + "entry a cpu self 60 main f | s\nentry b cpu self 50 main g | s\n", "test.ref: field share: the cpu self entries add up to 110.00 %"},
	} {
		_, err := ParseReference(strings.NewReader(c.text), "test.ref")
		var pe *runfmt.ParseError
		if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q…", c.text, err, c.want)
		}
	}
}

// The built-in production reference parses and names the main entries.
func TestBuiltinReference(t *testing.T) {
	r, err := LoadReference(DefaultReference)
	if err != nil {
		t.Fatal(err)
	}
	main := map[string]float64{}
	for _, e := range r.Entries {
		if e.Main {
			main[e.ID] = e.Share
		}
	}
	want := map[string]float64{"getReference": 15.36, "schema-resolution": 18.7, "HashMap.getNode-leaf": 21.36, "verifyReferenceCardinalities": 11,
		"ObjectIntHashMap": 12.77, "AttributeKey": 18.24, "ComparableReferenceKey": 12.34}
	if len(main) != len(want) {
		t.Fatalf("main entries %v, want %v", main, want)
	}
	for id, s := range want {
		if main[id] != s {
			t.Errorf("%s: %v, want %v", id, main[id], s)
		}
	}
	if _, err := LoadReference(filepath.Join(t.TempDir(), "nope.ref")); err == nil || !strings.Contains(err.Error(), "neither a built-in reference (production-2026.2.2)") {
		t.Fatalf("missing file: %v", err)
	}
}

// Frame patterns match a name or a tail of it after a '.'.
func TestFramePatterns(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"EntitySchema.getReference", "io.evitadb.api.requestResponse.schema.dto.EntitySchema.getReference", true},
		{"EntitySchema.getReference", "io.evitadb.api.requestResponse.schema.dto.EntitySchema.getReferenceOrThrowException", false},
		{"EntitySchema.getReference", "x.SubEntitySchema.getReference", false},
		{"HashMap.getNode", "java.util.LinkedHashMap.getNode", false},
		{"java.util.HashMap.getNode", "java.util.HashMap.getNode", true},
		{"ObjectIntHashMap$*", "com.carrotsearch.hppc.ObjectIntHashMap$EntryIterator.fetch", true},
		{"ObjectIntHashMap.*", "com.carrotsearch.hppc.ObjectIntHashMap.rehash", true},
		{"ObjectIntHashMap.*", "com.carrotsearch.hppc.ObjectIntHashMapX.rehash", false},
		{"*$AttributeKey", "io.evitadb.api.requestResponse.data.AttributesContract$AttributeKey", true},
		{"*$AttributeKey", "io.evitadb.api.requestResponse.data.ReferenceAttributeKey", false},
		{"*libz.so*", "/usr/lib/x86_64-linux-gnu/libz.so.1.2.13", true},
		{"Deflater.deflateBytes*", "java.util.zip.Deflater.deflateBytesBytes", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
	} {
		if got := matches([]string{c.pattern}, c.name); got != c.want {
			t.Errorf("%s ~ %s: %v", c.pattern, c.name, got)
		}
	}
}

// On profiles of known shares, each entry's share is the one built in: self counts
// the leaf only, total counts a sample once however many of its frames match, runs of
// one event pool, and an event no run gave is named as not measured.
func TestFidelityKnownShares(t *testing.T) {
	tmp := t.TempDir()
	// cpu: 100 samples in run 1 (and 50 of the JIT compiler's, left out), 100 in run 2
	profiledRun(t, filepath.Join(tmp, "cpu", "r1"), "b", 1,
		"main;ex.Schema.get;java.util.HashMap.getNode 10\n"+ // get (total), leaf, group
			"main;ex.Verifier.check;ex.Schema.get 10\n"+ // get, group once
			"main;ex.Verifier.check;c.IntMap$Iter.next 5\n"+ // group, inner
			"main;other 75\n"+
			"thread_native_entry;CompileBroker::compiler_thread_loop;C2Compiler::compile_method;java.util.HashMap.getNode 50\n", // JIT: left out
		"main;golive;ex.Schema.get 50\n")
	profiledRun(t, filepath.Join(tmp, "cpu", "r2"), "b", 2,
		"main;ex.Schema.get 20\nmain;other;java.util.HashMap.getNode 10\nmain;other 70\n", "main;golive 1\n")
	allocRun := filepath.Join(tmp, "alloc")
	profiledRunMode(t, "alloc", allocRun, "b", 3, "main;build;ex.AttributesContract$Key 300\nmain;build;byte[] 700\n", "main;x 1\n")

	ref := parseRef(t, testReference)
	f, err := FidelityReport(ref, 1.5, 2, filepath.Join(tmp, "cpu"), allocRun)
	if err != nil {
		t.Fatal(err)
	}
	// pooled cpu: get 10+10+20 = 40 of 200; leaf 10+10 = 20; group 10+10+5+20 = 45; inner 5
	want := map[string]float64{"get": 20, "leaf": 10, "group": 22.5, "inner": 2.5, "key": 30, "nothere": 0}
	for _, e := range f.Entries {
		if e.RunShare == nil || math.Abs(*e.RunShare-want[e.ID]) > 1e-9 {
			t.Errorf("%s: run share %v, want %v", e.ID, e.RunShare, want[e.ID])
			continue
		}
		if r := *e.RunShare / e.Share; math.Abs(*e.Ratio-r) > 1e-12 || *e.Faithful != (r >= 1/1.5 && r <= 1.5) {
			t.Errorf("%s: ratio %v faithful %v", e.ID, *e.Ratio, *e.Faithful)
		}
	}
	if f.Runs[0].JITPct != 100*50.0/150 || f.Runs[1].JITPct != 0 {
		t.Fatalf("the JIT compiler's share: %+v", f.Runs)
	}
	// callers: get's 40 samples came from main (10 + 20) and from Verifier.check (10)
	if c := f.Entries[0].Callers; len(c) != 2 || c[0].Path != "main" || c[0].SharePct != 15 || c[1].Path != "Verifier.check ← main" || c[1].SharePct != 5 {
		t.Fatalf("callers of get: %+v", c)
	}
	// inner's frame sits under Verifier.check; a self entry's callers skip its own frames
	if c := f.Entries[3].Callers; len(c) != 1 || c[0].Path != "Verifier.check ← main" {
		t.Fatalf("callers of inner: %+v", c)
	}
	s := f.Summary
	// main: get ×1, leaf ×1, inner ×0.5 (outside), key ×0.75
	if s.Main != 4 || s.MainMeasured != 4 || s.MainFaithful != 3 || s.Worst != "inner" || math.Abs(*s.WorstRatio-0.5) > 1e-12 ||
		math.Abs(*s.GeoMeanRatio-math.Pow(0.5*0.75, 0.25)) > 1e-12 || len(f.Runs) != 3 {
		t.Fatalf("summary %+v runs %d", s, len(f.Runs))
	}
	if line := f.Line(); !strings.HasPrefix(line, "3 of 4 main entries within ×1.5 of test-ref; geometric mean of the ratios ×0.78, furthest inner at ×0.50") {
		t.Fatalf("line %q", line)
	}
	// cpu alone: the alloc entry is not measured, and the line says which profile is missing
	f, err = FidelityReport(ref, 1.5, 0, filepath.Join(tmp, "cpu", "r1"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Entries[4].RunShare != nil || f.Summary.MainMeasured != 3 || !strings.Contains(f.Line(), "(1 not measured: no alloc profile given)") {
		t.Fatalf("cpu only: %+v %q", f.Summary, f.Line())
	}
	// runs of two builds are not pooled
	other := filepath.Join(tmp, "other")
	profiledRun(t, other, "c", 4, "main;x 1\n", "main;y 1\n")
	var mixed *Refusal
	if _, err := FidelityReport(ref, 1.5, 0, allocRun, other); !errors.As(err, &mixed) || !strings.Contains(err.Error(), "ran different server builds (build b; build c)") {
		t.Fatalf("two builds: %v", err)
	}
	for _, within := range []float64{1, math.Inf(1), math.NaN()} {
		if _, err := FidelityReport(ref, within, 0, allocRun); err == nil {
			t.Fatalf("within %g accepted", within)
		}
	}
	// a wall profile holds no share a reference names
	wallRun := filepath.Join(tmp, "wall")
	profiledRunMode(t, "wall", wallRun, "b", 5, "main;x 1\n", "main;y 1\n")
	var refusal *Refusal
	if _, err := FidelityReport(ref, 1.5, 0, wallRun); !errors.As(err, &refusal) {
		t.Fatalf("wall profile: %v", err)
	}
}

// Runs are pooled only when they are one build's writer on one workload, each once: a
// run given twice (or a copy of it) would weigh double, a run of other jars under the
// same label or of another workload would mix two answers into one share. Jars, not
// labels, say which build ran. A profile whose own labels contradict its manifest, or
// one with no sample to count, is refused rather than read as a share.
func TestFidelityPoolsOnlyLikeRuns(t *testing.T) {
	tmp := t.TempDir()
	ref := parseRef(t, testReference)
	run := func(name, label string, seed uint64, jars, workload string) string {
		dir := filepath.Join(tmp, name)
		// each run's samples its own (two runs never record the same profile), get 10 % in all
		stacks := fmt.Sprintf("main;ex.Schema.get 10\nmain;other 80\nmain;filler%d 10\n", seed)
		profiledRun(t, dir, label, seed, stacks, "main;golive 1\n")
		path := filepath.Join(dir, runfmt.ManifestFile)
		m, err := runfmt.ReadManifest(path)
		if err != nil {
			t.Fatal(err)
		}
		m.Server.Build = &runfmt.ServerBuild{Source: runfmt.ServerFromRelease, Ref: label, Version: label, ClasspathSHA256: strings.Repeat(jars, 64)}
		m.Source = &runfmt.Source{Mode: runfmt.SourceReplay, Workload: "w.wsw", WorkloadSHA256: strings.Repeat(workload, 64)}
		if err := runfmt.WriteManifest(path, m); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	a := run(filepath.Join("set", "a"), "v1", 1, "a", "1")
	relabelled := run("relabelled", "my-label", 2, "a", "1") // the same jars under another name
	otherJars := run("other-jars", "v1", 3, "b", "1")        // another build under the same name
	otherWorkload := run("other-workload", "v1", 4, "a", "2")
	embedded := run("embedded", "v1", 5, "a", "1")
	{ // the same build and workload, applied by the embedded writer: no transport in its samples
		path := filepath.Join(embedded, runfmt.ManifestFile)
		m, err := runfmt.ReadManifest(path)
		if err != nil {
			t.Fatal(err)
		}
		m.TargetMode = runfmt.TargetEmbedded
		if err := runfmt.WriteManifest(path, m); err != nil {
			t.Fatal(err)
		}
	}

	f, err := FidelityReport(ref, 1.5, 0, a, relabelled)
	if err != nil || len(f.Runs) != 2 || *f.Entries[0].RunShare != 10 {
		t.Fatalf("the same jars under two labels: %v %+v", err, f)
	}
	var refusal *Refusal
	for _, c := range []struct {
		paths []string
		want  string
	}{
		{[]string{a, otherJars}, "ran different server builds (build v1, jars aaaaaaaaaaaa; build v1, jars bbbbbbbbbbbb)"},
		{[]string{a, otherWorkload}, "replayed different workloads (111111111111, 222222222222)"},
		{[]string{a, embedded}, "ran different writers (remote, embedded)"},
		{[]string{a, a + string(filepath.Separator)}, "is given twice"},
		{[]string{filepath.Dir(a), a}, "is given twice"}, // a directory of runs holding it, and the run
	} {
		if _, err := FidelityReport(ref, 1.5, 0, c.paths...); !errors.As(err, &refusal) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want a refusal saying %q", c.paths, err, c.want)
		}
	}
	// a copy of a run directory is the same run
	copied := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(copied, os.DirFS(a)); err != nil {
		t.Fatal(err)
	}
	if _, err := FidelityReport(ref, 1.5, 0, a, copied); !errors.As(err, &refusal) || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("a run and its copy: %v", err)
	}

	// the JIT compiler's samples only: nothing to count, and said so
	jit := filepath.Join(tmp, "jit-only")
	profiledRun(t, jit, "v1", 9, "thread_native_entry;CompileBroker::compiler_thread_loop 50\n", "main;golive 1\n")
	if _, err := FidelityReport(ref, 1.5, 0, jit); err == nil || !strings.Contains(err.Error(), "holds no sample outside the JIT compiler's") {
		t.Errorf("a profile of the compiler only: %v", err)
	}

	// a load profile replaced by the goLive one, or by an alloc profile: refused when read
	swapped := run("swapped", "v1", 10, "a", "1")
	alloc := filepath.Join(tmp, "alloc")
	profiledRunMode(t, "alloc", alloc, "v1", 11, "main;x 100\n", "main;y 1\n")
	for _, c := range []struct{ from, want string }{
		{filepath.Join(swapped, ProfileDir, "golive.pb.gz"), "the profile says it is of phase golive"},
		{filepath.Join(alloc, ProfileDir, "load.pb.gz"), "a cpu profile should hold cpu samples, but it holds alloc_space"},
	} {
		b, err := os.ReadFile(c.from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(swapped, ProfileDir, "load.pb.gz"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := FidelityReport(ref, 1.5, 0, swapped); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("load.pb.gz from %s: %v, want %q", c.from, err, c.want)
		}
	}
}

// A main entry whose frames no sample reached has a ratio of zero; the geometric mean
// counts it as ×0.001 and the line says so, rather than printing a mean that is not
// the mean of the ratios shown.
func TestFidelityLineSaysWhatTheMeanFloors(t *testing.T) {
	tmp := t.TempDir()
	ref := parseRef(t, testReference)
	profiledRun(t, tmp, "b", 1, "main;ex.Schema.get 20\nmain;java.util.HashMap.getNode 10\nmain;other 70\n", "main;golive 1\n")
	f, err := FidelityReport(ref, 1.5, 0, tmp)
	if err != nil {
		t.Fatal(err)
	}
	// get ×1, leaf ×1, inner ×0 (counted as ×0.001)
	if f.Summary.Floored != 1 || math.Abs(*f.Summary.GeoMeanRatio-math.Cbrt(0.001)) > 1e-12 ||
		!strings.Contains(f.Line(), "geometric mean of the ratios ×0.10 (1 ratio(s) of ×0.00 counted as ×0.001), furthest inner at ×0.00") {
		t.Fatalf("%+v %q", f.Summary, f.Line())
	}
}

// Pooled runs keep their own shares: each entry lists every run's, and a main entry
// for which one run alone would have given another verdict than the pool is named —
// runs on both sides of the factor, or all of them outside while their pool is within.
// One run alone has no list.
func TestFidelityKeepsEachRunsShare(t *testing.T) {
	tmp := t.TempDir()
	ref := parseRef(t, testReference)
	// get (reference 20 %): 10 % in r1 (×0.5, outside), 25 % in r2 (×1.25, within), 17.5 % pooled (within)
	// leaf (reference 10 %): 5 % in r1 (×0.5), 16 % in r2 (×1.6): both outside, pooled 10.5 % within
	// inner (reference 5 %): 5 % in both: settled
	r1, r2 := filepath.Join(tmp, "r1"), filepath.Join(tmp, "r2")
	profiledRun(t, r1, "b", 1, "main;ex.Schema.get 10\nmain;x;java.util.HashMap.getNode 5\nmain;c.IntMap$It.next 5\nmain;other 80\n", "main;golive 1\n")
	profiledRun(t, r2, "b", 2, "main;ex.Schema.get 25\nmain;x;java.util.HashMap.getNode 16\nmain;c.IntMap$It.next 5\nmain;other 54\n", "main;golive 1\n")
	f, err := FidelityReport(ref, 1.5, 0, r1, r2)
	if err != nil {
		t.Fatal(err)
	}
	shares := func(rs []RunShare) (dirs []string, v []float64) {
		for _, r := range rs {
			dirs, v = append(dirs, r.Dir), append(v, r.SharePct)
		}
		return dirs, v
	}
	get, leaf, inner := f.Entries[0], f.Entries[1], f.Entries[3]
	dirs, v := shares(get.RunShares)
	if math.Abs(*get.RunShare-17.5) > 1e-9 || !*get.Faithful || !slices.Equal(dirs, []string{r1, r2}) ||
		len(v) != 2 || math.Abs(v[0]-10) > 1e-9 || math.Abs(v[1]-25) > 1e-9 {
		t.Errorf("get: pooled %v %v, runs %v; want 17.5 within, runs [10 25] of r1, r2", *get.RunShare, *get.Faithful, get.RunShares)
	}
	if _, v = shares(leaf.RunShares); math.Abs(*leaf.RunShare-10.5) > 1e-9 || !*leaf.Faithful || len(v) != 2 || v[0] != 5 || v[1] != 16 {
		t.Errorf("leaf: pooled %v %v, runs %v; want 10.5 within, runs [5 16]", *leaf.RunShare, *leaf.Faithful, leaf.RunShares)
	}
	if len(inner.RunShares) != 2 {
		t.Errorf("inner: runs %v", inner.RunShares)
	}
	if !slices.Equal(f.Summary.Unsettled, []string{"get", "leaf"}) || !strings.Contains(f.Line(), "one run alone would have judged otherwise: get, leaf") {
		t.Errorf("unsettled %v, line %q", f.Summary.Unsettled, f.Line())
	}
	if f.Entries[4].RunShares != nil { // alloc: no run of it
		t.Errorf("alloc entry without runs: %v", f.Entries[4].RunShares)
	}
	one, err := FidelityReport(ref, 1.5, 0, r1)
	if err != nil || one.Entries[0].RunShares != nil || one.Summary.Unsettled != nil {
		t.Errorf("one run: %v %v %v", err, one.Entries[0].RunShares, one.Summary.Unsettled)
	}

	editManifest := func(dir string, edit func(m *runfmt.Manifest)) {
		path := filepath.Join(dir, runfmt.ManifestFile)
		m, err := runfmt.ReadManifest(path)
		if err != nil {
			t.Fatal(err)
		}
		edit(m)
		if err := runfmt.WriteManifest(path, m); err != nil {
			t.Fatal(err)
		}
	}
	var refusal *Refusal
	// a run sampled ten times as coarsely would weigh as much with a tenth of the samples
	coarse := filepath.Join(tmp, "coarse")
	profiledRun(t, coarse, "b", 3, "main;ex.Schema.get 1\nmain;other 9\n", "main;golive 1\n")
	editManifest(coarse, func(m *runfmt.Manifest) { m.WriterProfile.Interval = 10e6 })
	if _, err := FidelityReport(ref, 1.5, 0, r1, coarse); !errors.As(err, &refusal) || !strings.Contains(err.Error(), "every 10ms") ||
		!strings.Contains(err.Error(), "every 1ms") {
		t.Errorf("runs sampled at 1 ms and 10 ms: %v", err)
	}
	// a copy whose manifest was edited to look like another run holds the same samples
	edited := filepath.Join(tmp, "edited")
	if err := os.CopyFS(edited, os.DirFS(r1)); err != nil {
		t.Fatal(err)
	}
	editManifest(edited, func(m *runfmt.Manifest) { m.RunID += "-other" })
	if _, err := FidelityReport(ref, 1.5, 0, r1, edited); !errors.As(err, &refusal) || !strings.Contains(err.Error(), "is given twice (also as "+r1+", the same load profile)") {
		t.Errorf("an edited copy: %v", err)
	}
	// a negative sample is a damaged profile, not a share
	damaged := filepath.Join(tmp, "damaged")
	profiledRun(t, damaged, "b", 4, "main;ex.Schema.get 10\nmain;other 90\n", "main;golive 1\n")
	pb := filepath.Join(damaged, ProfileDir, "load.pb.gz")
	p, _, err := readPprof(pb)
	if err != nil {
		t.Fatal(err)
	}
	p.Sample[0].Value[len(p.Sample[0].Value)-1] *= -1
	if err := writePprof(pb, p); err != nil {
		t.Fatal(err)
	}
	if _, err := FidelityReport(ref, 1.5, 0, damaged); err == nil || !strings.Contains(err.Error(), "holds a negative") {
		t.Errorf("a negative sample: %v", err)
	}
}
