package evitatest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// REST reads a catalog through evitaDB's REST API — a second path the server
// validates itself (it refuses to render an entity that contradicts its schema, e.g. a
// ZERO_OR_ONE reference holding 31 entries), independent of our gRPC subset. The
// server must run with evitaserver.Config.REST (StartREST does).
type REST struct {
	Base string // http://host:port/rest/<catalog>
	hc   *http.Client
}

// NewREST talks to the REST API of the server at addr (the gRPC address: both APIs
// share the port).
func NewREST(addr, catalog string) *REST {
	return &REST{Base: "http://" + addr + "/rest/" + catalog, hc: &http.Client{Timeout: 5 * time.Minute}}
}

// restSettle is how long a 404 is retried: the server registers a catalog's REST
// routes asynchronously (after it is created, and again when it goes live), so a
// request right after a seed can find a route missing for a moment (seen once in CI:
// the schema routes answered, POST /Brand/list was 404).
const restSettle = 30 * time.Second

func (r *REST) do(ctx context.Context, method, path string, body any) (any, error) {
	deadline := time.Now().Add(restSettle)
	for {
		v, code, err := r.once(ctx, method, path, body)
		if code != http.StatusNotFound || time.Now().After(deadline) {
			return v, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (r *REST) once(ctx context.Context, method, path string, body any) (any, int, error) {
	var in io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, 0, err
		}
		in = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.Base+path, in)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.hc.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, resp.StatusCode, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, resp.StatusCode, fmt.Errorf("REST %s %s: HTTP %d: %s", method, path, resp.StatusCode, strings.TrimSpace(string(data)))
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // decimals and longs exactly as the server printed them
	if err := dec.Decode(&v); err != nil {
		return nil, resp.StatusCode, fmt.Errorf("REST %s %s: %v", method, path, err)
	}
	return v, resp.StatusCode, nil
}

// RESTDump is a catalog as its REST API renders it: the catalog schema, every entity
// schema, and every entity of every collection with everything — all attributes, all
// associated data, prices, the hierarchy parent, references with their attributes
// (reflected ones included), in all locales.
type RESTDump struct {
	Catalog  map[string]any
	Schemas  map[string]map[string]any
	Entities map[string][]any
}

// restPage is the page size of a REST dump.
const restPage = 500

// Dump reads the whole catalog. Fields that record history rather than content —
// versions — are removed; nothing else is touched.
func (r *REST) Dump(ctx context.Context) (*RESTDump, error) {
	cs, err := r.do(ctx, http.MethodGet, "/schema", nil)
	if err != nil {
		return nil, err
	}
	cat, _ := cs.(map[string]any)
	d := &RESTDump{Catalog: cat, Schemas: map[string]map[string]any{}, Entities: map[string][]any{}}
	schemas, _ := cat["entitySchemas"].(map[string]any) // keyed by a name variant: the name is inside
	var types []string
	for _, s := range schemas {
		if m, ok := s.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				types = append(types, n)
			}
		}
	}
	slices.Sort(types)
	if len(types) != len(schemas) {
		return nil, fmt.Errorf("REST catalog schema: %d entity schemas, %d of them named", len(schemas), len(types))
	}
	for _, ty := range types {
		s, err := r.do(ctx, http.MethodGet, "/"+ty+"/schema", nil)
		if err != nil {
			return nil, err
		}
		sch, _ := s.(map[string]any)
		d.Schemas[ty] = sch
		fetch := map[string]any{"attributeContentAll": true, "associatedDataContentAll": true, "dataInLocalesAll": true,
			"referenceContentAllWithAttributes": map[string]any{"attributeContentAll": true}}
		if sch["withPrice"] == true {
			fetch["priceContentAll"] = true
		}
		if sch["withHierarchy"] == true {
			fetch["hierarchyContent"] = map[string]any{}
		}
		for page := 1; ; page++ {
			v, err := r.do(ctx, http.MethodPost, "/"+ty+"/list", map[string]any{"require": map[string]any{
				"page": map[string]any{"number": page, "size": restPage}, "entityFetch": fetch}})
			if err != nil {
				return nil, err
			}
			list, _ := v.([]any)
			d.Entities[ty] = append(d.Entities[ty], list...)
			if len(list) < restPage {
				break
			}
		}
	}
	stripVersions(d.Catalog)
	for _, s := range d.Schemas {
		stripVersions(s)
	}
	for _, es := range d.Entities {
		for _, e := range es {
			stripVersions(e)
		}
	}
	return d, nil
}

func keys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// stripVersions removes every "version" key: a copy is written by other mutations
// than its source, so versions differ while content does not.
func stripVersions(v any) {
	switch v := v.(type) {
	case map[string]any:
		delete(v, "version")
		for _, x := range v {
			stripVersions(x)
		}
	case []any:
		for _, x := range v {
			stripVersions(x)
		}
	}
}

// Diff lists where b differs from a (at most max places), each as a path and both
// values; empty when they are equal.
func (a *RESTDump) Diff(b *RESTDump, max int) []string {
	var out []string
	add := func(path string, x, y any) {
		if len(out) < max {
			out = append(out, fmt.Sprintf("%s: %s != %s", path, short(x), short(y)))
		}
	}
	diffValue("catalog schema", catalogContent(a.Catalog), catalogContent(b.Catalog), add)
	for _, ty := range slices.Sorted(keys(union(a.Schemas, b.Schemas))) {
		diffValue(ty+" schema", a.Schemas[ty], b.Schemas[ty], add)
	}
	for _, ty := range slices.Sorted(keys(union(a.Entities, b.Entities))) {
		ea, eb := a.Entities[ty], b.Entities[ty]
		if len(ea) != len(eb) {
			add(ty+" entities", len(ea), len(eb))
		}
		for i := range min(len(ea), len(eb)) {
			pk := "?"
			if m, ok := ea[i].(map[string]any); ok {
				pk = fmt.Sprint(m["primaryKey"])
			}
			diffValue(fmt.Sprintf("%s %s", ty, pk), ea[i], eb[i], add)
		}
	}
	return out
}

// catalogContent is a catalog schema without its own name: a copy goes into a catalog
// of another name.
func catalogContent(c map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range c {
		if k != "name" && k != "nameVariants" {
			out[k] = v
		}
	}
	return out
}

func union[V any](a, b map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func diffValue(path string, a, b any, add func(string, any, any)) {
	ma, aok := a.(map[string]any)
	mb, bok := b.(map[string]any)
	if aok && bok {
		for _, k := range slices.Sorted(keys(union(ma, mb))) {
			diffValue(path+"."+k, ma[k], mb[k], add)
		}
		return
	}
	la, aok := a.([]any)
	lb, bok := b.([]any)
	if aok && bok && len(la) == len(lb) {
		for i := range la {
			diffValue(fmt.Sprintf("%s[%d]", path, i), la[i], lb[i], add)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		add(path, a, b)
	}
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 120 {
		return string(b[:117]) + "..."
	}
	return string(b)
}

// RequireRESTDump dumps a catalog or fails the test.
func RequireRESTDump(t testing.TB, ctx context.Context, addr, catalog string) *RESTDump {
	t.Helper()
	d, err := NewREST(addr, catalog).Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// CardinalityViolations lists entities holding more or fewer references of a name than
// the reference's cardinality allows (at most max of them). The REST API already
// refuses some (too many for ZERO_OR_ONE); this also counts missing ones.
func (a *RESTDump) CardinalityViolations(max int) []string {
	var out []string
	for _, ty := range slices.Sorted(keys(a.Schemas)) {
		refs, _ := a.Schemas[ty]["references"].(map[string]any)
		for _, name := range slices.Sorted(keys(refs)) {
			card, _ := refs[name].(map[string]any)["cardinality"].(string)
			lo, hi := 0, -1
			switch card {
			case "ZERO_OR_ONE":
				hi = 1
			case "EXACTLY_ONE":
				lo, hi = 1, 1
			case "ONE_OR_MORE", "ONE_OR_MORE_WITH_DUPLICATES":
				lo = 1
			}
			for _, e := range a.Entities[ty] {
				m, _ := e.(map[string]any)
				n := 0
				switch v := m[name].(type) {
				case []any:
					n = len(v)
				case map[string]any:
					n = 1
				}
				if (n < lo || (hi >= 0 && n > hi)) && len(out) < max {
					out = append(out, fmt.Sprintf("%s %v: %d references %s, cardinality %s", ty, m["primaryKey"], n, name, card))
				}
			}
		}
	}
	return out
}
