package seed_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/seed"
)

// The built-in profile is valid, and what --print-profile prints loads back unchanged.
func TestDefaultProfileRoundTrips(t *testing.T) {
	p := seed.DefaultProfile()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "p.json")
	os.WriteFile(f, b, 0o644)
	back, err := seed.LoadProfile(f)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, p) {
		t.Fatal("the printed profile does not load back as itself")
	}
}

// small is a valid profile written by hand: the bad cases below each break one line.
const small = `{
  "locales": ["cs", "en"],
  "currencies": ["CZK"],
  "collections": [
    {
      "name": "Parameter",
      "count": 10,
      "attributes": [
        {"name": "code", "kind": "string", "unique": true},
        {"name": "inputWidgetType", "kind": "string", "filterable": true, "values": ["CHECKBOX", "INTERVAL"]}
      ]
    },
    {
      "name": "ParameterValue",
      "count": 100,
      "attributes": [{"name": "basicUnitValue", "kind": "decimal", "filterable": true}],
      "references": [
        {"name": "parameter", "target": "Parameter", "mean": 1, "min": 1, "max": 1, "cardinality": "exactly-one", "index": "filtering"}
      ]
    },
    {
      "name": "Product",
      "count": 1000,
      "attributes": [
        {"name": "name", "kind": "string", "localized": true, "sortable": true},
        {"name": "ean", "kind": "string", "unique": true}
      ],
      "prices": {"mean": 4, "max": 10, "lists": 3, "indexed_share": 1, "validity_share": 0, "inner_record_share": 0},
      "references": [
        {"name": "brand", "target": "Brand", "mean": 0.9, "max": 1, "cardinality": "zero-or-one", "index": "filtering"},
        {"name": "parameterValues", "target": "ParameterValue", "mean": 3, "max": 8, "index": "filtering", "faceted": true,
         "group": "Parameter", "reflected": "products",
         "faceted_partially": "$reference.groupEntity?.attributes['inputWidgetType'] == 'CHECKBOX'",
         "histogram": {"name": "basicUnitValue", "value": "$reference.referencedEntity?.attributes['basicUnitValue']"}}
      ]
    }
  ]
}
`

// Every bad profile is refused by LoadProfile with one line naming the file, the line
// and the field — before a server is touched (an unknown kind used to pass and panic
// in the generator after the catalog was created; unknown keys were ignored).
func TestBadProfilesNameFileLineField(t *testing.T) {
	f := filepath.Join(t.TempDir(), "small.json")
	os.WriteFile(f, []byte(small), 0o644)
	if _, err := seed.LoadProfile(f); err != nil {
		t.Fatalf("the valid profile: %v", err)
	}
	edit := func(old, new string) string {
		if strings.Count(small, old) != 1 {
			t.Fatalf("profile has no single %q", old)
		}
		return strings.Replace(small, old, new, 1)
	}
	lineOf := func(s, marker string) int { return strings.Count(s[:strings.Index(s, marker)], "\n") + 1 }
	cases := []struct {
		name, text, marker, field, msg string
	}{
		{"unknown kind", edit(`"kind": "decimal"`, `"kind": "decimel"`), `"decimel"`, "collections[1].attributes[0].kind", `unknown kind "decimel"`},
		{"unknown key", edit(`"count": 10,`, `"count": 10, "cuont": 4,`), `"cuont"`, "collections[0].cuont", "unknown field"},
		{"unknown nested key", edit(`"cardinality": "zero-or-one"`, `"cardinalty": "zero-or-one"`), `"cardinalty"`, "collections[2].references[0].cardinalty", "unknown field"},
		{"unknown top-level key", edit(`"currencies"`, `"currency"`), `"currency"`, "currency", "unknown field"},
		{"wrong type", edit(`"count": 10,`, `"count": "ten",`), `"ten"`, "collections[0].count", `expected a whole number, got "ten"`},
		{"fraction for a count", edit(`"count": 10,`, `"count": 2.5,`), `2.5`, "collections[0].count", "expected a whole number"},
		{"cardinality against max", edit(`"max": 1, "cardinality": "zero-or-one"`, `"max": 3, "cardinality": "zero-or-one"`), `"max": 3`, "collections[2].references[0].max", "allows one reference per entity"},
		{"unknown group", edit(`"group": "Parameter"`, `"group": "Parametr"`), `"Parametr"`, "collections[2].references[1].group", `groups by "Parametr"`},
		{"unknown cardinality", edit(`"cardinality": "exactly-one"`, `"cardinality": "exactly-two"`), `"exactly-two"`, "collections[1].references[0].cardinality", "unknown cardinality"},
		{"unique number", edit(`{"name": "ean", "kind": "string"`, `{"name": "ean", "kind": "long"`), `"name": "ean"`, "collections[2].attributes[1].unique", "only string attributes can be unique"},
		{"weights", edit(`"values": ["CHECKBOX", "INTERVAL"]`, `"values": ["CHECKBOX", "INTERVAL"], "weights": [1]`), `"weights"`, "collections[0].attributes[1].weights", "1 weights for 2 values"},
		{"histogram without value", edit(`, "value": "$reference.referencedEntity?.attributes['basicUnitValue']"`, ``), `"histogram"`, "collections[2].references[1].histogram", "value expression"},
		{"syntax", edit(`"locales": [`, `"locales": [,`), `[,`, "", "invalid JSON"},
		{"trailing data", small + "{}", "{}", "", "unexpected data after the document"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "bad.json")
			os.WriteFile(f, []byte(c.text), 0o644)
			_, err := seed.LoadProfile(f)
			if err == nil {
				t.Fatal("accepted")
			}
			want := f + ":" + itoa(lineOf(c.text, c.marker)) + ": "
			if c.field != "" {
				want += c.field + ": "
			}
			if msg := err.Error(); !strings.HasPrefix(msg, want) || !strings.Contains(msg, c.msg) || strings.Contains(msg, "\n") {
				t.Fatalf("got  %s\nwant %s...%s", msg, want, c.msg)
			}
		})
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// Validate itself (Seed and Pristine call it on any profile) refuses what the
// generator could not honour.
func TestValidateRules(t *testing.T) {
	load := func() *seed.Profile {
		var p seed.Profile
		if err := json.Unmarshal([]byte(small), &p); err != nil {
			t.Fatal(err)
		}
		return &p
	}
	if err := load().Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(*seed.Profile){
		"reflected into unmanaged":   func(p *seed.Profile) { p.Collections[2].References[0].Reflected = "products" },
		"facets without index":       func(p *seed.Profile) { p.Collections[2].References[1].Index = "" },
		"conditional without facets": func(p *seed.Profile) { p.Collections[2].References[1].Faceted = false },
		"duplicate collection":       func(p *seed.Profile) { p.Collections[1].Name = "Parameter" },
		"no currencies, prices":      func(p *seed.Profile) { p.Currencies = nil },
		"share above one":            func(p *seed.Profile) { p.Collections[2].Attributes[0].Share = 1.5 },
		"no locales, localized":      func(p *seed.Profile) { p.Locales = nil },
		"reflected shadows": func(p *seed.Profile) {
			p.Collections[1].References = append(p.Collections[1].References, seed.Reference{Name: "products", Target: "Product", Max: 1, Mean: 1})
		},
		"exactly-one with min 0": func(p *seed.Profile) { p.Collections[1].References[0].Min = 0 },
		"mean above max":         func(p *seed.Profile) { p.Collections[2].References[1].Mean = 9 },
	} {
		p := load()
		mod(p)
		if err := p.Validate(); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// ClampedAt names exactly the collections CountAt raises to one entity: their count
// at the scale is 1 although their share rounds to none, and every other count is
// their rounded share.
func TestClampedAtNamesTheRaisedCollections(t *testing.T) {
	p := seed.DefaultProfile()
	for _, scale := range []float64{0.0001, 0.002, 0.02, 1} {
		clamped := map[string]bool{}
		for _, name := range p.ClampedAt(scale) {
			clamped[name] = true
		}
		for _, c := range p.Collections {
			share := float64(c.Count) * scale
			switch {
			case clamped[c.Name] && (c.CountAt(scale) != 1 || share >= 0.5):
				t.Errorf("scale %g: %s (count %d, share %.3f) named as raised to one, but it gets %d", scale, c.Name, c.Count, share, c.CountAt(scale))
			case !clamped[c.Name] && share < 0.5:
				t.Errorf("scale %g: %s's share %.3f rounds to none, yet it is not named", scale, c.Name, share)
			}
		}
		if scale == 1 && len(clamped) != 0 {
			t.Errorf("at production size nothing is raised, got %v", p.ClampedAt(scale))
		}
	}
	if n := len(p.ClampedAt(0.0001)); 2*n <= len(p.Collections) {
		t.Errorf("at 0.0001 most of the default's collections are raised to one (what seed notes), got %d of %d", n, len(p.Collections))
	}
}

// Disproportionate speaks only when most collections are raised to one entity: a few
// small ones always are at a small scale.
func TestDisproportionateOnlyBeyondHalf(t *testing.T) {
	p := seed.DefaultProfile()
	if cl := p.Disproportionate(1); cl != nil {
		t.Errorf("at production size: %v", cl)
	}
	if cl := p.Disproportionate(0.0001); len(cl) != len(p.ClampedAt(0.0001)) {
		t.Errorf("at 0.0001: %v, want ClampedAt's %v", cl, p.ClampedAt(0.0001))
	}
	for _, s := range []float64{0.01, 0.001, 0.0005} {
		if cl, all := p.Disproportionate(s), p.ClampedAt(s); (cl != nil) != (2*len(all) > len(p.Collections)) {
			t.Errorf("at %g: %v of clamped %v", s, cl, all)
		}
	}
	if _, ok := p.OwnScale(); ok {
		t.Error("the built-in profile was not measured, yet has an own scale")
	}
	p.Measured = &seed.Measured{Scale: 0.2}
	if s, ok := p.OwnScale(); !ok || s != 0.2 {
		t.Errorf("a measured shape's own scale: %g %v, want 0.2", s, ok)
	}
}
