package analyze_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/internal/synthrun"
	"github.com/warmstat/warmstat/runfmt"
)

// Groups of one build that differ only in target mode give the transport's cost per
// collection: remote − embedded per upsert, whose interval holds the true difference,
// and its share of the remote figure; any other difference (the build's jars
// included) is refused, naming it.
func TestTransportCost(t *testing.T) {
	dir := t.TempDir()
	remoteCols := []synthrun.Collection{{Name: "Product", N: 400, MeanNs: 7.2e6}, {Name: "Stock", N: 160, MeanNs: 600e3}}
	embCols := []synthrun.Collection{{Name: "Product", N: 400, MeanNs: 6.9e6}, {Name: "Stock", N: 160, MeanNs: 150e3}}
	embedded := func(m *runfmt.Manifest) { m.TargetMode = runfmt.TargetEmbedded }
	rp, err := synthrun.Group(dir+"/remote", 5, 1, synthrun.Spec{Label: "v1", Tau: 0.02, Collections: remoteCols})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := synthrun.Group(dir+"/embedded", 5, 11, synthrun.Spec{Label: "v1", Tau: 0.02, Collections: embCols, Mutate: embedded})
	if err != nil {
		t.Fatal(err)
	}
	load := func(name, p string) *analyze.Group {
		g, err := analyze.LoadGroup(name, p, analyze.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	// either order: the remote group is found by its mode
	tc, err := analyze.Transport(load("A", ep), load("B", rp), analyze.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tc.Remote.Name != "B" || tc.Embedded.Name != "A" || len(tc.Rows) != 2 {
		t.Fatalf("transport %+v", tc)
	}
	want := map[string]float64{"Product": 300, "Stock": 450} // µs: the specs' difference (the synthetic factor's mean is 1.001)
	for _, r := range tc.Rows {
		w := want[r.Collection] * 1.00125
		if r.CostLowUs == nil || *r.CostLowUs > w || *r.CostHighUs < w || r.RunsRemote != 5 || r.RunsEmbedded != 5 {
			t.Fatalf("%s: cost %v [%v, %v], want %.1f inside", r.Collection, *r.CostUs, r.CostLowUs, r.CostHighUs, w)
		}
		share := 100 * want[r.Collection] / map[string]float64{"Product": 7200, "Stock": 600}[r.Collection]
		if *r.ShareLowPct > share || *r.ShareHighPct < share {
			t.Fatalf("%s: share %.1f [%.1f, %.1f], want %.1f inside", r.Collection, *r.SharePct, *r.ShareLowPct, *r.ShareHighPct, share)
		}
	}
	for _, c := range []struct {
		name   string
		mutate func(*runfmt.Manifest)
		field  string
	}{
		{"another build", func(m *runfmt.Manifest) { embedded(m); m.Server.Version = "2026.2.2" }, "server-version"},
		{"another build label", func(m *runfmt.Manifest) { embedded(m); m.Build.Label = "v2" }, "build"},
		{"another condition", func(m *runfmt.Manifest) { embedded(m); no := false; m.Conditions.StorageCompress = &no }, "storage-compress"},
		{"a replay against a live run", func(m *runfmt.Manifest) {
			embedded(m)
			m.Source = &runfmt.Source{Mode: runfmt.SourceReplay, Workload: "w", WorkloadSHA256: strings.Repeat("0", 64)}
		}, "source-mode"},
	} {
		p, err := synthrun.Group(t.TempDir(), 2, 21, synthrun.Spec{Label: "v1", Collections: embCols, Mutate: c.mutate})
		if err != nil {
			t.Fatal(err)
		}
		_, err = analyze.Transport(load("A", rp), load("B", p), analyze.CompareOptions{})
		var ref *analyze.Refusal
		if !errors.As(err, &ref) || !slices.ContainsFunc(ref.Mismatches, func(m analyze.Mismatch) bool { return m.Field == c.field }) {
			t.Errorf("%s: %v, want a refusal naming %s", c.name, err, c.field)
		}
	}
	if _, _, ok := analyze.TargetModes(load("A", rp), load("B", rp)); ok {
		t.Error("two remote groups taken for a transport measurement")
	}
}
