package loader_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/internal/evitatest"
	"github.com/warmstat/warmstat/loader"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/seed"
)

// The copy is judged by the server itself: for the fixture catalog (every schema
// feature, conditional facets and bucketed histograms included) and for a seeded
// catalog, a full REST dump of source and target after a load — catalog schema, every
// entity schema, every entity with all attributes, associated data, prices, hierarchy
// and references with attributes, in all locales — is identical but for versions.
// (The seeded catalog could not be dumped at all while Brand.products claimed
// ZERO_OR_ONE; conditional facets and histograms were never exercised by a copy.)
func TestCopyIsIdenticalThroughREST(t *testing.T) {
	srcSrv, src := evitatest.StartREST(t)
	dstSrv, dst := evitatest.StartREST(t)
	ctx := context.Background()
	evitatest.LoadFixture(t, ctx, src, "fixture")
	if _, err := seed.Seed(ctx, src, "seeded", seed.DefaultProfile(), 0.002, 7, false, nil); err != nil {
		t.Fatal(err)
	}
	for _, cat := range []string{"fixture", "seeded"} {
		c := loader.Config{Source: src, Target: dst, SourceCatalog: cat, TargetCatalog: cat + "_copy", Out: filepath.Join(t.TempDir(), cat),
			BatchSize: 50, Manifest: runfmt.Manifest{Build: runfmt.Build{Label: "test"}, Loader: runfmt.Loader{Version: "test"}}}
		res, err := loader.Run(ctx, c)
		if err != nil || res.Manifest.ExitCode != 0 {
			t.Fatalf("%s: load: %v", cat, err)
		}
		a := evitatest.RequireRESTDump(t, ctx, srcSrv.Addr, cat)
		b := evitatest.RequireRESTDump(t, ctx, dstSrv.Addr, cat+"_copy")
		if d := a.Diff(b, 20); len(d) > 0 {
			t.Errorf("%s: the copy differs from its source, as the server renders them:\n%s", cat, strings.Join(d, "\n"))
		}
		n := 0
		for _, es := range a.Entities {
			n += len(es)
		}
		if int64(n) != res.Manifest.Entities || n == 0 {
			t.Errorf("%s: REST lists %d entities, the load copied %d", cat, n, res.Manifest.Entities)
		}
		// the features a copy used to lose are really in the compared schemas
		pv, _ := a.Schemas["Product"]["references"].(map[string]any)["parameterValues"].(map[string]any)
		for _, f := range []string{"facetedPartially", "bucketed", "bucketedPartially"} {
			if l, _ := pv[f].([]any); len(l) == 0 {
				t.Errorf("%s: Product.parameterValues has no %s: the comparison proves nothing about it", cat, f)
			}
		}
		if v := a.CardinalityViolations(5); len(v) > 0 {
			t.Errorf("%s: %s", cat, strings.Join(v, "; "))
		}
	}
}
