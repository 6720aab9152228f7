package analyze

import (
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/internal/synthrun"
	"github.com/warmstat/warmstat/runfmt"
)

// The exported surface is what callers need and nothing else (x/perf's benchmath
// exports 13 names; this package exported 58, presentation helpers among them). A
// new export is a decision: add it here.
func TestExportedSurface(t *testing.T) {
	want := []string{
		"Advice", "Block", "ChangePoint", "ChangePointOptions", "ChangePoints", "CheckHarnessFigures", "CheckHarnessRun", "CollectionSummary",
		"CombineFleet", "Compare", "CompareOptions", "Comparison", "Comparison.Comparable", "Comparison.Duet", "ConditionValue",
		"ContractFields", "CostStats", "Decomposition", "Dominant", "DominantOf", "Duplicate", "Equivalent", "Estimate", "EstimateOf", "FailedRunError", "FailedRunError.Error", "Faster",
		"Fleet", "FleetMismatch", "FleetRefusal", "FleetRefusal.Error", "FleetRow", "FleetSeries", "GateFailures", "GateLook", "GateLook.Resolved",
		"GateResult", "GeoMean", "Group", "Health", "Heterogeneity", "HeterogeneityAlpha", "Insufficient", "LineFields", "LoadGroup",
		"LoadOptions", "LoadShown", "Look", "LookAt", "MachineChange", "MachineSpeed", "Mark", "MeasuresTransport", "Method", "Method.Bootstrap", "Metric", "Mismatch",
		"OptionError", "OptionError.Error", "Overall", "Pair", "Paired", "PairsByStartTime", "ParseMethod", "ParseQuantiles",
		"Profile", "ProfileOf", "ProfilesOf", "Quantiles", "QuantilesJava", "QuantilesLinear", "Refusal", "Refusal.Error", "RefuseDuplicates", "Row",
		"Row.Name", "RunHealth", "RunNote", "RunSummary", "Segmentation", "SequentialPlan", "SequentialPlan.Check",
		"SequentialPlan.FirstLook", "SequentialPlan.Level", "SeriesSetting", "Setting", "Slower", "Stats", "Summarize", "TargetModes",
		"Transport", "TransportCost", "TransportRow", "TransportRow.Dominated", "Unpaired", "Unresolved", "Verdict",
	}
	fset := token.NewFileSet()
	files, _ := filepath.Glob("*.go")
	var got []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				n := d.Name.Name
				if d.Recv != nil {
					typ := d.Recv.List[0].Type
					if s, ok := typ.(*ast.StarExpr); ok {
						typ = s.X
					}
					recv := typ.(*ast.Ident).Name
					if !ast.IsExported(recv) {
						continue // a method of an unexported type is not surface
					}
					n = recv + "." + n
				}
				got = append(got, n)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							got = append(got, s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, id := range s.Names {
							if id.IsExported() {
								got = append(got, id.Name)
							}
						}
					}
				}
			}
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("exported names (%d):\n%s\nwant (%d):\n%s", len(got), strings.Join(got, ", "), len(want), strings.Join(want, ", "))
	}
}

// The plots' percentiles are the summary's, for both definitions: the CDF's marks
// are Summarize's p50/p95/p99, each timeline block's median and p99 those of its
// upserts, and the two definitions give different pictures.
func TestProfileUsesTheSummaryPercentiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := synthrun.Write(dir, synthrun.Spec{Label: "p", Seed: 4}); err != nil {
		t.Fatal(err)
	}
	run, err := runfmt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	marks := map[Quantiles][]float64{}
	for _, q := range []Quantiles{QuantilesJava, QuantilesLinear} {
		s, err := Summarize(run, q)
		if err != nil {
			t.Fatal(err)
		}
		p, err := ProfileOf(run, "Product", q, 0)
		if err != nil {
			t.Fatal(err)
		}
		var product Stats
		for _, c := range s.Collections {
			if c.Name == "Product" {
				product = c.Stats
			}
		}
		want := []float64{product.MedianNs, product.P95Ns, product.P99Ns}
		for i, m := range p.Marks {
			if m.Ns != want[i] || m.Fraction <= 0 || m.Fraction > 1 {
				t.Fatalf("%s p%.0f: mark %v, summary %v", q, m.P, m.Ns, want[i])
			}
			marks[q] = append(marks[q], m.Ns)
		}
		if p.Block != 25 || len(p.Blocks) != 16 { // 400 upserts, at least 25 per block
			t.Fatalf("%d blocks of %d", len(p.Blocks), p.Block)
		}
		b := p.Blocks[3]
		var block []int64
		run.ScanRows(func(r runfmt.Row) error {
			if r.Collection == "Product" && len(block) < 100 {
				block = append(block, r.UpsertNs)
			}
			return nil
		})
		st := statsOf(slices.Clone(block[75:100]), q)
		if b.MedianNs != st.MedianNs || b.P99Ns != st.P99Ns || b.LastSeq-b.FirstSeq != 24 {
			t.Fatalf("%s block 4: median %v p99 %v, want %v %v", q, b.MedianNs, b.P99Ns, st.MedianNs, st.P99Ns)
		}
	}
	if slices.Equal(marks[QuantilesJava], marks[QuantilesLinear]) {
		t.Fatal("java and linear marks are the same")
	}
	if _, err := ProfileOf(run, "Product", QuantilesJava, -1); err == nil {
		t.Fatal("a negative block size accepted")
	}
}

// A group's estimate is the geometric mean with the one-sample log-scale t-interval;
// a coarse clock widens it by its rounding bound, and identical figures give none.
func TestEstimate(t *testing.T) {
	mk := func(res int64, loads ...int64) []*RunSummary {
		var out []*RunSummary
		for _, l := range loads {
			m := &runfmt.Manifest{Timings: runfmt.Timings{ResolutionNs: res, LoadWallNs: l}, GoLive: runfmt.GoLive{Status: runfmt.GoLiveSkipped}}
			s := &RunSummary{Run: &runfmt.Run{Dir: "r", Manifest: m}}
			s.derive()
			out = append(out, s)
		}
		return out
	}
	e := EstimateOf(mk(1, 2e9, 2.2e9, 2.1e9), Overall, metricLoadWall)
	y := []float64{math.Log(2), math.Log(2.2), math.Log(2.1)}
	c, h := mean(y), 4.302652729911275*math.Sqrt(variance(y)/3)
	if math.Abs(*e.Value-math.Exp(c)) > 1e-12 || math.Abs(*e.Low-math.Exp(c-h)) > 1e-9 || math.Abs(*e.High-math.Exp(c+h)) > 1e-9 {
		t.Fatalf("%v [%v, %v], want %v [%v, %v]", *e.Value, *e.Low, *e.High, math.Exp(c), math.Exp(c-h), math.Exp(c+h))
	}
	coarse := EstimateOf(mk(1e8, 2e9, 2.2e9, 2.1e9), Overall, metricLoadWall)
	if !(*coarse.Low < *e.Low-0.04 && *coarse.High > *e.High+0.04) {
		t.Fatalf("a 0.1 s clock must widen the interval by its rounding: [%v, %v] vs [%v, %v]", *coarse.Low, *coarse.High, *e.Low, *e.High)
	}
	same := EstimateOf(mk(1e8, 2.1e9, 2.1e9), Overall, metricLoadWall)
	if same.Low != nil || same.Reason != noSpread {
		t.Fatalf("identical figures: %+v", same)
	}
	zero := EstimateOf(mk(1e8, 0, 2.1e9), Overall, metricLoadWall)
	if zero.Runs != 1 || zero.Of != 2 || len(zero.Excluded) != 1 || !strings.Contains(zero.Excluded[0].Reason, "within the clock's rounding") {
		t.Fatalf("a 0.0 s reading: %+v", zero)
	}
}

// The one rule for the dominant collection: Product, else the most entities, ties by
// name; the same answer from counts, a run's summary and a group's runs.
func TestDominantIsOneRule(t *testing.T) {
	for _, c := range []struct {
		counts map[string]int64
		want   string
	}{
		{map[string]int64{"Product": 1, "Stock": 900}, "Product"},
		{map[string]int64{"Brand": 50, "Stock": 900, "Tag": 40}, "Stock"},
		{map[string]int64{"Zeta": 10, "Alpha": 10}, "Alpha"},
		{map[string]int64{}, ""},
	} {
		if got := Dominant(c.counts); got != c.want {
			t.Errorf("Dominant(%v) = %q, want %q", c.counts, got, c.want)
		}
		s := &RunSummary{}
		for n, k := range c.counts {
			s.Collections = append(s.Collections, CollectionSummary{Name: n, Stats: Stats{Count: k}})
		}
		if got := DominantOf(s); got != c.want {
			t.Errorf("DominantOf(%v) = %q, want %q", c.counts, got, c.want)
		}
		if got := dominantOfRuns([]*RunSummary{s, s}); got != c.want {
			t.Errorf("dominantOfRuns(%v) = %q, want %q", c.counts, got, c.want)
		}
	}
}
