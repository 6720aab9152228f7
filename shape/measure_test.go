package shape

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evita/pb"
	"github.com/warmstat/warmstat/internal/evitatest"
	"github.com/warmstat/warmstat/seed"
	"github.com/warmstat/warmstat/workload"
)

// generated writes the default profile's catalog at a scale into a workload file.
func generated(t *testing.T, p *seed.Profile, scale float64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gen.wsw")
	if _, err := seed.WriteWorkload(context.Background(), path, "shop", p, scale, 1, nil); err != nil {
		t.Fatal(err)
	}
	return path
}

func measure(t *testing.T, path string, opt Options) *seed.Profile {
	t.Helper()
	r, err := workload.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if opt.Now == nil {
		opt.Now = func() time.Time { return time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC) }
	}
	p, err := Measure(r, opt)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func collection(t *testing.T, p *seed.Profile, name string) seed.Collection {
	t.Helper()
	i := slices.IndexFunc(p.Collections, func(c seed.Collection) bool { return c.Name == name })
	if i < 0 {
		t.Fatalf("no collection %s", name)
	}
	return p.Collections[i]
}

func ref(t *testing.T, c seed.Collection, name string) seed.Reference {
	t.Helper()
	i := slices.IndexFunc(c.References, func(r seed.Reference) bool { return r.Name == name })
	if i < 0 {
		t.Fatalf("%s has no reference %s", c.Name, name)
	}
	return c.References[i]
}

func attr(t *testing.T, as []seed.Attribute, name string) seed.Attribute {
	t.Helper()
	i := slices.IndexFunc(as, func(a seed.Attribute) bool { return a.Name == name })
	if i < 0 {
		t.Fatalf("no attribute %s", name)
	}
	return as[i]
}

// TestMeasureGeneratedCatalog measures a catalog whose truth is known — the default
// profile's, generated at scale 0.01 — and checks the shape against it: exact counts,
// the schema's flags, and distributions near what the profile asked the generator for.
func TestMeasureGeneratedCatalog(t *testing.T) {
	def := seed.DefaultProfile()
	scale := 0.01
	p := measure(t, generated(t, def, scale), Options{From: "workload"})
	if err := p.Validate(); err != nil {
		t.Fatalf("the measured shape is not a valid profile: %v", err)
	}
	if p.Format != seed.ShapeV1 || p.Measured == nil || p.Measured.Catalog != "shop" {
		t.Fatalf("format %q, measured %+v", p.Format, p.Measured)
	}
	g := seed.NewGenerator(def, scale, 1)
	var total int64
	for _, dc := range def.Collections {
		c := collection(t, p, dc.Name)
		if c.MeasuredOn != int64(g.Count(dc.Name)) || c.CountAt(scale) != g.Count(dc.Name) {
			t.Errorf("%s: measured on %d, %d at scale %g; generated %d", dc.Name, c.MeasuredOn, c.CountAt(scale), scale, g.Count(dc.Name))
		}
		total += c.MeasuredOn
		if len(c.References) != len(dc.References) || len(c.Attributes) != len(dc.Attributes) || c.Hierarchy != dc.Hierarchy {
			t.Errorf("%s: %d references, %d attributes, hierarchy %v; the profile has %d, %d, %v", dc.Name,
				len(c.References), len(c.Attributes), c.Hierarchy, len(dc.References), len(dc.Attributes), dc.Hierarchy)
		}
	}
	if p.Measured.Entities != total {
		t.Errorf("measured %d entities, collections sum to %d", p.Measured.Entities, total)
	}
	if !slices.Equal(p.Locales, []string{"cs", "en"}) || !slices.Equal(p.Currencies, []string{"CZK", "EUR"}) {
		t.Errorf("locales %v, currencies %v", p.Locales, p.Currencies)
	}

	product := collection(t, p, "Product")
	pv := ref(t, product, "parameterValues")
	if pv.Index != "filtering" || !pv.Faceted || pv.Group != "Parameter" || pv.Reflected != "products" || pv.Target != "ParameterValue" {
		t.Errorf("parameterValues schema: %+v", pv)
	}
	if pv.PerEntity.N != product.MeasuredOn || math.Abs(pv.Mean-10)/10 > 0.05 || pv.Max > 60 {
		t.Errorf("parameterValues per Product: n %d mean %g max %d (the profile: Poisson mean 10, max 60)", pv.PerEntity.N, pv.Mean, pv.Max)
	}
	if pv.GroupedShare != 1 {
		t.Errorf("parameterValues grouped share %g, every value belongs to a parameter", pv.GroupedShare)
	}
	f := pv.FanIn
	if f.Targets != int64(g.Count("ParameterValue")) || f.Referenced > f.Targets || f.Top[0] != int64(f.Dist.Q[len(f.Dist.Q)-1]) {
		t.Errorf("parameterValues fan-in: %+v", f)
	}
	if int64(f.Dist.Mean*float64(f.Referenced)+0.5) < int64(pv.Mean*float64(product.MeasuredOn))*95/100 {
		t.Errorf("fan-in mean %g over %d targets does not add up to the %g references per Product", f.Dist.Mean, f.Referenced, pv.Mean)
	}
	if f.Top[0] < 5*int64(f.Dist.Q[5]) { // Zipf 1.1: the top value is far above the median
		t.Errorf("parameterValues fan-in is not skewed: top %d, median %g", f.Top[0], f.Dist.Q[5])
	}
	if f.TailAlpha < 0.5 || f.TailAlpha > 1.5 { // Zipf over ranks with s = 1.1: a Pareto index near 1/1.1
		t.Errorf("parameterValues fan-in tail index %g, Zipf 1.1 gives about 0.9", f.TailAlpha)
	}
	if u := ref(t, product, "pickupPoints").FanIn; u.TailAlpha < 3 { // uniform targets: a thin tail
		t.Errorf("pickupPoints (uniform) fan-in tail index %g: as heavy as a Zipf's", u.TailAlpha)
	}
	cat := ref(t, product, "categories")
	if cat.Min != 1 || cat.Max > 3 || cat.Index != "partitioning" || cat.ReflectedIndex != "filtering" {
		t.Errorf("categories: min %d max %d index %q reflected_index %q", cat.Min, cat.Max, cat.Index, cat.ReflectedIndex)
	}
	// back-references met: for each target of a reference with a reflected side, the
	// n-th entity pointing at it meets n-1, so a target of fan-in f adds f(f-1)/2,
	// whatever the order — counted here from the generator, not from the measurement
	fanIn := map[string]int64{}
	var applications int64
	pc := def.Collections[slices.IndexFunc(def.Collections, func(c seed.Collection) bool { return c.Name == "Product" })]
	reflected := map[string]bool{}
	for _, r := range pc.References {
		reflected[r.Name] = r.Reflected != ""
	}
	for i := range g.Count("Product") {
		for _, r := range g.Entity(pc, i).GetReferences() {
			if reflected[r.GetReferenceName()] {
				applications++
				fanIn[r.GetReferencedEntityReference().GetEntityType()+"/"+fmt.Sprint(r.GetReferencedEntityReference().GetPrimaryKey())]++
			}
		}
	}
	var met int64
	for _, f := range fanIn {
		met += f * (f - 1) / 2
	}
	n := float64(product.MeasuredOn)
	if e := product.Entangled; e == nil || math.Abs(e.ApplicationsPerEntity-float64(applications)/n) > 0.01 ||
		math.Abs(e.ScannedPerEntity-float64(met)/n)/(float64(met)/n) > 0.001 || e.ScannedPerApplication < 10 {
		t.Errorf("Product entangled %+v; the generated catalog: %d applications, %d back-references met, over %g products", product.Entangled, applications, met, n)
	}
	if c := collection(t, p, "Voucher"); c.Entangled != nil {
		t.Errorf("Voucher references nothing with a reflected side, yet entangled %+v", c.Entangled)
	}
	validity := attr(t, cat.Attributes, "assignmentValidity")
	if validity.Kind != "range" || math.Abs(validity.Share-0.2) > 0.04 {
		t.Errorf("assignmentValidity: kind %s share %g (the profile: 0.2)", validity.Kind, validity.Share)
	}
	code := attr(t, product.Attributes, "code")
	if !code.Unique || code.Share != 0 || math.Abs(float64(code.Distinct)-float64(product.MeasuredOn))/float64(product.MeasuredOn) > 0.02 {
		t.Errorf("code: unique %v share %g distinct %d of %d", code.Unique, code.Share, code.Distinct, product.MeasuredOn)
	}
	first := g.Entity(def.Collections[slices.IndexFunc(def.Collections, func(c seed.Collection) bool { return c.Name == "Product" })], 0)
	want := float64(len(first.GetGlobalAttributes()["code"]) - 2) // StringValue: a tag and a length byte
	if code.Lengths.Q[0] != want || code.Lengths.Q[len(code.Lengths.Q)-1] != want {
		t.Errorf("code lengths %v, the generator makes %g characters", code.Lengths.Q, want)
	}
	if pr := product.Prices; pr == nil || pr.PerEntity == nil || pr.Mean < 20 || pr.Lists < 2 || pr.NoneShare != 0 {
		t.Errorf("Product prices: %+v", product.Prices)
	}
	if product.LocalesPerEntity == nil || product.LocalesPerEntity.Q[5] != 2 {
		t.Errorf("Product locales per entity: %+v", product.LocalesPerEntity)
	}
	category := collection(t, p, "Category")
	if category.HierarchyDepth == nil || category.HierarchyDepth.Q[0] != 0 || category.HierarchyDepth.Q[len(category.HierarchyDepth.Q)-1] < 1 ||
		category.HierarchyChildren.N != category.MeasuredOn || category.HierarchyDepth.N != category.MeasuredOn {
		t.Errorf("Category hierarchy: depth %+v children %+v", category.HierarchyDepth, category.HierarchyChildren)
	}
}

// TestShapeFileRoundTrip: a measured shape written as JSON reads back, strictly, as
// the same profile.
func TestShapeFileRoundTrip(t *testing.T) {
	p := measure(t, generated(t, seed.DefaultProfile(), 0.002), Options{From: "workload"})
	path := filepath.Join(t.TempDir(), "shop.shape.json")
	if err := Write(path, p); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, p); err == nil {
		t.Fatal("Write replaced an existing shape file")
	}
	back, err := seed.LoadProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(p)
	b, _ := json.Marshal(back)
	if string(a) != string(b) {
		t.Fatal("the shape read back differs from the one written")
	}
}

// fixture writes the test fixture catalog (internal/evitatest: every kind of content,
// conditional facets, a sortable compound, an unmanaged group type) into a workload.
func fixture(t *testing.T) string {
	t.Helper()
	cat, schemas := evitatest.FixtureSchema()
	cat.Name = "fixture"
	byName := map[string]*pb.GrpcEntitySchema{}
	counts := map[string]int64{}
	var order []string
	entities := evitatest.FixtureEntities()
	for _, s := range schemas {
		byName[s.GetName()] = s
		order = append(order, s.GetName())
	}
	for _, e := range entities {
		counts[e.GetEntityType()]++
	}
	path := filepath.Join(t.TempDir(), "fixture.wsw")
	w, err := workload.Create(path, workload.Header{Catalog: "fixture", SourceMode: "generated", SourceCounts: counts, Collections: order}, cat, schemas)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range order {
		if err := w.Begin(name, counts[name]); err != nil {
			t.Fatal(err)
		}
		plan := evita.CopyPlan{Reflected: evita.ReflectedNames(byName[name]), WithPrices: byName[name].GetWithPrice()}
		for _, e := range entities {
			if e.GetEntityType() != name {
				continue
			}
			req, err := evita.UpsertRequest(e, plan)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Entity(e.GetPrimaryKey(), req); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.End(0, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestMeasureFixture: the fixture's shape keeps what the generator can make and says
// what it cannot (the sortable compound, the unmanaged group, the back side's own
// conditional facet), and its expressions keep their names but lose their literals.
func TestMeasureFixture(t *testing.T) {
	p := measure(t, fixture(t), Options{From: "workload"})
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	product := collection(t, p, "Product")
	if product.MeasuredOn != 6 || product.Prices == nil || product.Prices.Lists != 2 || product.Prices.InnerRecordShare == 0 {
		t.Errorf("Product: %d entities, prices %+v", product.MeasuredOn, product.Prices)
	}
	pv := ref(t, product, "parameterValues")
	if pv.FacetedPartially != "$reference.groupEntity?.attributes['inputWidgetType'] == 'v1'" || pv.Histogram == nil ||
		pv.Histogram.Partially != "$reference.groupEntity?.attributes['inputWidgetType'] == 'v1'" {
		t.Errorf("parameterValues expressions: %q, %+v", pv.FacetedPartially, pv.Histogram)
	}
	if brand := ref(t, product, "brand"); brand.Group != "" || brand.Cardinality != "zero-or-one" {
		t.Errorf("brand: group %q cardinality %q", brand.Group, brand.Cardinality)
	}
	notKept := strings.Join(p.Measured.NotKept, "; ")
	for _, want := range []string{"Product: 1 sortable attribute compound", "Product.brand: its group type `BrandGroup`", "ParameterValue.products: the reflected reference's own faceting"} {
		if !strings.Contains(notKept, want) {
			t.Errorf("not kept %q lacks %q", notKept, want)
		}
	}
	anon := measure(t, fixture(t), Options{From: "workload", Anonymise: true})
	if err := anon.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range anon.Collections {
		for _, r := range c.References {
			if strings.Contains(r.FacetedPartially, "inputWidgetType") || (r.FacetedPartially != "" && !strings.Contains(r.FacetedPartially, "['attribute")) {
				t.Errorf("anonymised expression %q: the attribute's name is not replaced by its new one", r.FacetedPartially)
			}
		}
	}
	if strings.Contains(strings.Join(anon.Measured.NotKept, ";"), "BrandGroup") || strings.Contains(strings.Join(anon.Measured.NotKept, ";"), "Product") {
		t.Errorf("anonymised notes still name the source: %v", anon.Measured.NotKept)
	}
	category := collection(t, p, "Category")
	if category.HierarchyDepth.Q[len(category.HierarchyDepth.Q)-1] != 2 || category.HierarchyChildren.Q[len(category.HierarchyChildren.Q)-1] != 2 {
		t.Errorf("Category hierarchy (1 <- 2, 3; 2 <- 4): depth %v, children %v", category.HierarchyDepth.Q, category.HierarchyChildren.Q)
	}
}
