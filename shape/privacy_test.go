package shape

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/evita/pb"
	"github.com/warmstat/warmstat/seed"
	"github.com/warmstat/warmstat/workload"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// remap moves every primary key of a workload to nine digits (a bijection), so that a
// key cannot pass for one of the small counts a shape holds: a key found in the shape
// is a leak, never a coincidence.
func remap(pk int32) int32 { return int32(100_000_000 + int64(pk)*7919%900_000_000) }

// eachEntity reads a workload: collection begins, each entity's decoded upsert request,
// and collection ends, in order.
func eachEntity(t *testing.T, r *workload.Reader, begin func(workload.Collection), entity func(pk int32, u *pb.GrpcUpsertEntityRequest), end func()) {
	t.Helper()
	for {
		c, err := r.NextCollection()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		begin(c)
		for {
			pk, req, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			var u pb.GrpcUpsertEntityRequest
			if err := proto.Unmarshal(req, &u); err != nil {
				t.Fatal(err)
			}
			entity(pk, &u)
		}
		end()
	}
}

func remapped(t *testing.T, in string) string {
	t.Helper()
	r, err := workload.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := filepath.Join(t.TempDir(), "remapped.wsw")
	w, err := workload.Create(out, r.Header(), r.CatalogSchema(), r.EntitySchemas())
	if err != nil {
		t.Fatal(err)
	}
	eachEntity(t, r, func(c workload.Collection) {
		if err := w.Begin(c.Name, c.Source); err != nil {
			t.Fatal(err)
		}
	}, func(pk int32, u *pb.GrpcUpsertEntityRequest) {
		um := u.GetEntityMutation().GetEntityUpsertMutation()
		um.EntityPrimaryKey = wrapperspb.Int32(remap(um.GetEntityPrimaryKey().GetValue()))
		for _, m := range um.GetMutations() {
			switch m := m.GetMutation().(type) {
			case *pb.GrpcLocalMutation_SetParentMutation:
				m.SetParentMutation.PrimaryKey = remap(m.SetParentMutation.PrimaryKey)
			case *pb.GrpcLocalMutation_InsertReferenceMutation:
				m.InsertReferenceMutation.ReferencePrimaryKey = remap(m.InsertReferenceMutation.ReferencePrimaryKey)
			case *pb.GrpcLocalMutation_SetReferenceGroupMutation:
				g := m.SetReferenceGroupMutation
				g.ReferencePrimaryKey, g.GroupPrimaryKey = remap(g.ReferencePrimaryKey), remap(g.GroupPrimaryKey)
			case *pb.GrpcLocalMutation_ReferenceAttributeMutation:
				m.ReferenceAttributeMutation.ReferencePrimaryKey = remap(m.ReferenceAttributeMutation.ReferencePrimaryKey)
			}
		}
		b, err := proto.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Entity(remap(pk), b); err != nil {
			t.Fatal(err)
		}
	}, func() {
		if err := w.End(0, 0); err != nil {
			t.Fatal(err)
		}
	})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// secrets are the catalog's values a shape must never hold: every string of at least
// six characters (attribute values, associated-data content, price amounts) and every
// number of at least five digits (primary keys, integer and date-time values), as text.
// Shorter ones are left out: a shape's own small figures (a mean of 754.6, four
// significant digits) would meet a short value of the catalog by chance.
type secrets struct {
	strings map[string]bool
	numbers map[string]bool
	keys    int
}

func (s *secrets) value(v []byte) {
	fs, _ := fields(v)
	for _, f := range fs {
		switch {
		case f.num >= 100:
		case f.bytes != nil && f.num == 1 && isText(f.bytes):
			s.str(string(f.bytes))
		case f.bytes != nil:
			s.value(f.bytes) // a nested message: a decimal's string, a date-time's seconds, a range's ends
		default:
			s.num(int64(f.value))
		}
	}
}

func isText(b []byte) bool {
	if _, err := fields(b); err != nil {
		return true
	}
	for _, c := range b { // a printable string that also parses as a message is text
		if c < 0x20 {
			return false
		}
	}
	return true
}

func (s *secrets) str(v string) {
	if len([]rune(v)) >= 6 {
		s.strings[v] = true
	}
}

func (s *secrets) num(v int64) {
	if t := strconv.FormatInt(v, 10); len(strings.TrimLeft(t, "-")) >= 5 {
		s.numbers[t] = true
	}
}

func catalogSecrets(t *testing.T, path string) *secrets {
	t.Helper()
	s := &secrets{strings: map[string]bool{}, numbers: map[string]bool{}}
	r, err := workload.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	eachEntity(t, r, func(workload.Collection) {}, func(pk int32, u *pb.GrpcUpsertEntityRequest) {
		s.num(int64(pk))
		s.keys++
		for _, m := range u.GetEntityMutation().GetEntityUpsertMutation().GetMutations() {
			switch m := m.GetMutation().(type) {
			case *pb.GrpcLocalMutation_UpsertAttributeMutation:
				s.value(m.UpsertAttributeMutation.GetAttributeValue())
			case *pb.GrpcLocalMutation_UpsertAssociatedDataMutation:
				s.value(m.UpsertAssociatedDataMutation.GetAssociatedDataValue())
			case *pb.GrpcLocalMutation_UpsertPriceMutation:
				p := m.UpsertPriceMutation
				for _, amount := range [][]byte{p.GetPriceWithoutTax(), p.GetPriceWithTax(), p.GetTaxRate()} {
					s.str(text(amount))
				}
			case *pb.GrpcLocalMutation_SetParentMutation:
				s.num(int64(m.SetParentMutation.GetPrimaryKey()))
			case *pb.GrpcLocalMutation_InsertReferenceMutation:
				s.num(int64(m.InsertReferenceMutation.GetReferencePrimaryKey()))
			case *pb.GrpcLocalMutation_SetReferenceGroupMutation:
				s.num(int64(m.SetReferenceGroupMutation.GetGroupPrimaryKey()))
			case *pb.GrpcLocalMutation_ReferenceAttributeMutation:
				s.value(m.ReferenceAttributeMutation.GetAttributeMutation().GetUpsertAttributeMutation().GetAttributeValue())
			}
		}
	}, func() {})
	return s
}

// leaks lists every string and number of a shape file that is one of the catalog's
// values (or, for a long value, contains it).
func leaks(t *testing.T, shapeFile string, s *secrets) []string {
	t.Helper()
	data, err := os.ReadFile(shapeFile)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var found []string
	var all strings.Builder // every string of the shape, for the long values' substring search
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch v := tok.(type) {
		case string:
			if s.strings[v] {
				found = append(found, "string "+strconv.Quote(v))
			}
			all.WriteString(v)
			all.WriteByte(0)
			for _, w := range strings.FieldsFunc(v, func(r rune) bool { return r < '0' || r > '9' }) {
				if s.numbers[w] {
					found = append(found, "number "+w+" in "+strconv.Quote(v))
				}
			}
		case json.Number:
			if s.numbers[v.String()] || s.strings[v.String()] {
				found = append(found, "number "+v.String())
			}
		}
	}
	text := all.String()
	for secret := range s.strings {
		if len(secret) >= 8 && strings.Contains(text, secret) {
			found = append(found, "a string holding "+strconv.Quote(secret))
		}
	}
	return found
}

// TestShapeHoldsNoValue is the privacy promise: a shape of a catalog holds none of its
// attribute values, associated-data content, price amounts or primary keys — taken of
// the default catalog with its keys moved to nine digits, plain and anonymised.
func TestShapeHoldsNoValue(t *testing.T) {
	fix := remapped(t, fixture(t))
	fs := catalogSecrets(t, fix)
	for _, v := range []string{"CHECKBOX", "INTERVAL", "img-1-a.jpg,img-1-b.jpg", "100.00", "8590001"} {
		if !fs.strings[v] { // the fixture's values the shape must not hold, among them the expressions' literals
			t.Fatalf("the fixture's secrets lack %q", v)
		}
	}
	src := remapped(t, generated(t, seed.DefaultProfile(), 0.005))
	s := catalogSecrets(t, src)
	if len(s.strings) < 1000 || len(s.numbers) < s.keys/2 {
		t.Fatalf("too few secrets to prove anything: %d strings, %d numbers of %d entities", len(s.strings), len(s.numbers), s.keys)
	}
	for _, c := range []struct {
		name    string
		path    string
		secrets *secrets
	}{{"fixture", fix, fs}, {"default catalog", src, s}} {
		for _, anonymise := range []bool{false, true} {
			p := measure(t, c.path, Options{From: "workload", Anonymise: anonymise})
			file := filepath.Join(t.TempDir(), "shape.json")
			if err := Write(file, p); err != nil {
				t.Fatal(err)
			}
			if found := leaks(t, file, c.secrets); len(found) > 0 {
				t.Errorf("%s, anonymise %v: the shape holds %d value(s) of the catalog, e.g. %v", c.name, anonymise, len(found), found[:min(5, len(found))])
			}
		}
	}
	// the check itself finds a value when there is one
	p := measure(t, src, Options{From: "workload"})
	var planted string
	for v := range s.strings {
		planted = v
		break
	}
	p.Collections[0].Source = planted
	file := filepath.Join(t.TempDir(), "leaky.json")
	if err := Write(file, p); err != nil {
		t.Fatal(err)
	}
	if found := leaks(t, file, s); len(found) == 0 {
		t.Fatalf("a shape holding the value %q passed the check", planted)
	}
}
