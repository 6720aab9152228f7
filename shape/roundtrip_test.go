package shape

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/warmstat/warmstat/seed"
)

// TestShapeRoundTrip: the shape of a catalog, generated again at its source's scale and
// measured, is the shape it was generated from within Compare's tolerances — for the
// default catalog (scale 0.01).
func TestShapeRoundTrip(t *testing.T) {
	first := measure(t, generated(t, seed.DefaultProfile(), 0.01), Options{From: "workload"})
	if first.Measured.Scale != 0.01 {
		t.Fatalf("the shape says its source's scale is %g, the workload's header 0.01", first.Measured.Scale)
	}
	again := filepath.Join(t.TempDir(), "again.wsw")
	if _, err := seed.WriteWorkload(context.Background(), again, "shop", first, first.Measured.Scale, 7, nil); err != nil {
		t.Fatal(err)
	}
	for _, d := range Compare(measure(t, again, Options{From: "workload"}), first) {
		t.Errorf("%s %s: %s against %s (tolerance %s)", d.Where, d.What, d.Got, d.Want, d.Limit)
	}
	// anonymised, the generator knows no collection name to build a URL from: the
	// measured lengths must make it (a hostile user's finding)
	anon := measure(t, generated(t, seed.DefaultProfile(), 0.01), Options{From: "workload", Anonymise: true})
	anonAgain := filepath.Join(t.TempDir(), "anon-again.wsw")
	if _, err := seed.WriteWorkload(context.Background(), anonAgain, "catalog", anon, anon.Measured.Scale, 7, nil); err != nil {
		t.Fatal(err)
	}
	for _, d := range Compare(measure(t, anonAgain, Options{From: "workload", Anonymise: true}), anon) {
		t.Errorf("anonymised: %s %s: %s against %s (tolerance %s)", d.Where, d.What, d.Got, d.Want, d.Limit)
	}
}

// TestCompareFindsAChangedShape: Compare is not blind — a shape regenerated with fewer
// references, a lighter hub and shorter names is told apart from its source.
func TestCompareFindsAChangedShape(t *testing.T) {
	def := seed.DefaultProfile()
	first := measure(t, generated(t, def, 0.005), Options{From: "workload"})
	for i := range def.Collections {
		c := &def.Collections[i]
		if c.Name != "Product" {
			continue
		}
		for k := range c.References {
			if c.References[k].Name == "parameterValues" {
				c.References[k].Mean, c.References[k].Zipf = 7, 0.5
			}
		}
		for k := range c.Attributes {
			if c.Attributes[k].Name == "name" {
				c.Attributes[k].Length = 6
			}
		}
	}
	changed := measure(t, generated(t, def, 0.005), Options{From: "workload"})
	found := map[string]bool{}
	for _, d := range Compare(changed, first) {
		found[d.Where+" "+d.What] = true
	}
	for _, want := range []string{"Product.parameterValues per entity p50", "Product.parameterValues largest fan-in", "Product.name lengths p50", "Product back-references scanned per entity"} {
		if !found[want] {
			t.Errorf("Compare missed %q; it found %v", want, found)
		}
	}
}
