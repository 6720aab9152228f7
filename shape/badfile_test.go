package shape

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/seed"
)

// TestBadShapeFilesAreRefusedWithFileLineField: a shape file from a newer warmstat, a
// truncated one and hand edits that make a value impossible are refused with the file,
// the line and the field, never read into a catalog.
func TestBadShapeFilesAreRefusedWithFileLineField(t *testing.T) {
	good := filepath.Join(t.TempDir(), "good.json")
	if err := Write(good, measure(t, generated(t, seed.DefaultProfile(), 0.002), Options{From: "workload"})); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	// the first occurrence of old, replaced
	edit := func(old, nu string) string {
		if !strings.Contains(text, old) {
			t.Fatalf("the shape file has no %q", old)
		}
		return strings.Replace(text, old, nu, 1)
	}
	cases := []struct {
		name, content, field, msg string
		needle                    string // the edited text: its line is the one the error names
	}{
		{"newer version", edit(`"format": "warmstat.shape/v1"`, `"format": "warmstat.shape/v2"`), "format", "newer warmstat", `"format"`},
		{"negative count", edit(`"measured_on": 1,`, `"measured_on": -4,`), "collections[0].measured_on", "negative measured_on -4", `"measured_on": -4`},
		{"quantiles out of order", edit(`"q": [32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32]`, `"q": [32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 31, 32]`),
			"collections[0].attributes[0].lengths.q[12]", "out of order", `31, 32]`},
		{"negative sd", edit(`"sd": 0,`, `"sd": -1,`), "sd", "standard deviation", `"sd": -1`},
		{"truncated", text[:len(text)/2], "", "invalid JSON", ""},
		{"a field twice", edit(`"measured_on": 1,`, `"measured_on": 1, "measured_on": 7,`), "measured_on", "given twice", `"measured_on": 7`},
		{"negative entities", edit(`"entities": `, `"entities": -`), "measured.entities", "negative count", `"entities": -`},
		{"a share above 1", edit(`"indexed_share": `, `"indexed_share": 1`), "prices.indexed_share", "not in [0, 1]", `"indexed_share": 1`},
		{"a live heap too small", edit(`"entities": `, `"live_heap_bytes": 1, "entities": `), "measured.live_heap_bytes", "at least 16 MiB", `"live_heap_bytes": 1`},
		{"a live heap without its entities", edit(`"entities": 779`, `"live_heap_bytes": 300000000, "entities": 0`), "measured.entities", "needs the entities it was measured with", `"entities": 0`},
		{"unknown field", edit(`"measured_on": 1,`, `"measured_on": 1, "measured_in": 2,`), "measured_in", "unknown field", `"measured_in"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.json")
			if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := seed.LoadProfile(path)
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, path+":") || !strings.Contains(msg, c.field) || !strings.Contains(msg, c.msg) || strings.Contains(msg, "\n") {
				t.Fatalf("got %q; want one line, %s:LINE, the field %q and %q", msg, path, c.field, c.msg)
			}
			if c.needle != "" {
				want := path + ":" + strconv.Itoa(strings.Count(c.content[:strings.Index(c.content, c.needle)], "\n")+1) + ":"
				if !strings.HasPrefix(msg, want) {
					t.Fatalf("got %q; want the line of %q (%s)", msg, c.needle, want)
				}
			}
		})
	}
}
