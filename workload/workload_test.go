package workload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/evita/pb"
)

// write makes a workload of n entities per collection with request bodies of varied,
// partly random bytes (so that chunks do not compress to nothing), spanning chunks.
func write(t testing.TB, path string, n int) map[string][][]byte {
	t.Helper()
	schemas := []*pb.GrpcEntitySchema{{Name: "Brand"}, {Name: "Product"}}
	h := Header{Catalog: "shop", SourceMode: "attach", SourceCounts: map[string]int64{"Brand": int64(n), "Product": int64(n) + 5},
		Fingerprint: "counts-sha256:x", Collections: []string{"Brand", "Product"}, BatchSize: 1000}
	w, err := Create(path, h, &pb.GrpcCatalogSchema{Name: "shop"}, schemas)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	want := map[string][][]byte{}
	for _, c := range h.Collections {
		if err := w.Begin(c, h.SourceCounts[c]); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			req := []byte(strings.Repeat(fmt.Sprintf("%s-%d;", c, i), 1+i%40))
			for range 64 {
				req = append(req, byte(rng.Uint32()))
			}
			if err := w.Entity(int32(i*3+1), req); err != nil {
				t.Fatal(err)
			}
			want[c] = append(want[c], req)
		}
		if err := w.End(int64(n)*1000, int64(n)*2000); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return want
}

// Everything written is read back, in order, byte for byte; Verify proves the totals
// and the file's digest.
func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shop.workload")
	want := write(t, path, 3000)
	info, err := Verify(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Trailer.Entities != 6000 || len(info.SHA256) != 64 || info.Header.Catalog != "shop" || info.Header.Schema != SchemaV1 {
		t.Fatalf("info %+v", info)
	}
	if sum, _ := FileSHA256(path); sum != info.SHA256 {
		t.Fatalf("Verify's digest %s is not the file's %s", info.SHA256, sum)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.EntitySchemas()) != 2 || r.CatalogSchema().GetName() != "shop" {
		t.Fatalf("schemas %v %v", r.EntitySchemas(), r.CatalogSchema())
	}
	for _, name := range []string{"Brand", "Product"} {
		c, err := r.NextCollection()
		if err != nil || c.Name != name {
			t.Fatalf("collection %+v %v, want %s", c, err, name)
		}
		for i := 0; ; i++ {
			pk, req, err := r.Next()
			if err == io.EOF {
				if i != len(want[name]) {
					t.Fatalf("%s: %d entities read, %d written", name, i, len(want[name]))
				}
				break
			}
			if err != nil || pk != int32(i*3+1) || !bytes.Equal(req, want[name][i]) {
				t.Fatalf("%s entity %d: pk %d err %v", name, i, pk, err)
			}
		}
	}
	if _, err := r.NextCollection(); err != io.EOF {
		t.Fatalf("after the last collection: %v", err)
	}
	if r.Trailer().Collections[1].ReadNs != 3000*1000 {
		t.Fatalf("trailer %+v", r.Trailer())
	}
}

// A damaged or truncated file is refused, with the offset where it went wrong; an
// existing file is never written into; nothing is left behind by an aborted writer.
func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "shop.workload")
	write(t, path, 3000)
	good, _ := os.ReadFile(path)
	if len(good) < 3*chunkRaw/4 {
		t.Logf("file of %d bytes", len(good))
	}
	check := func(name string, b []byte, want string) {
		t.Helper()
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		_, err := Verify(p)
		var fe *FormatError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), p+": offset ") {
			t.Errorf("%s: %v, want a FormatError naming %q", name, err, want)
		}
	}
	damaged := bytes.Clone(good)
	damaged[len(good)/2] ^= 0x40
	check("damaged", damaged, "checksum mismatch")
	check("truncated", good[:len(good)-7], "truncated")
	check("cut at a chunk", good[:len(Magic)], "truncated")
	check("no magic", append([]byte("PK\x03\x04"), good[4:]...), "not a workload file")
	header := bytes.Clone(good)
	header[len(Magic)+1] ^= 0xff // the first chunk's magic
	check("chunk header", header, "not a chunk header")
	check("trailing garbage", append(bytes.Clone(good), []byte("WSCK\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")...), "after the trailer")

	if _, err := Create(path, Header{}, &pb.GrpcCatalogSchema{}, nil); err == nil || !strings.Contains(err.Error(), "never overwritten") {
		t.Fatalf("an existing file: %v", err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, good) {
		t.Fatal("the existing file was touched")
	}
	w, err := Create(filepath.Join(dir, "aborted.workload"), Header{}, &pb.GrpcCatalogSchema{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Begin("Brand", 1)
	w.Entity(1, []byte("x"))
	w.Abort()
	if left, _ := filepath.Glob(filepath.Join(dir, "*aborted*")); len(left) != 0 {
		t.Fatalf("an aborted workload left %v", left)
	}
}

// Reading a workload costs constant memory: BenchmarkRead's allocations per entity do
// not grow with the file (make bench).
func BenchmarkRead(b *testing.B) {
	path := filepath.Join(b.TempDir(), "w")
	write(b, path, 5000)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Verify(path); err != nil {
			b.Fatal(err)
		}
	}
}
