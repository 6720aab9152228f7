package workload

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// withHeader is the workload file good with its header record's JSON replaced by
// edit's (the first chunk decompressed, the record rewritten, the chunk compressed and
// checksummed again): a file whose chunks are sound and whose header is not.
func withHeader(t *testing.T, good []byte, edit func(json []byte) []byte) []byte {
	t.Helper()
	chunk := good[len(Magic):]
	compressed := binary.LittleEndian.Uint32(chunk[4:])
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	raw, err := dec.DecodeAll(chunk[chunkHeader:chunkHeader+compressed], nil)
	if err != nil || raw[0] != kindHeader {
		t.Fatalf("the first chunk: %v, record %q", err, raw[0])
	}
	n, k := binary.Uvarint(raw[1:])
	payload := raw[1+k : 1+k+int(n)]
	json := edit(bytes.Clone(payload))
	rec := append(binary.AppendUvarint([]byte{kindHeader}, uint64(len(json))), json...)
	raw = append(rec, raw[1+k+int(n):]...)
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	comp := enc.EncodeAll(raw, nil)
	h := make([]byte, chunkHeader)
	putChunkHeader(h, len(comp), len(raw), crc32.Checksum(comp, castagnoli))
	out := append([]byte(Magic), h...)
	out = append(out, comp...)
	return append(out, chunk[chunkHeader+compressed:]...)
}

// The header's JSON is read by the strict rule: a header with data after its value (a
// NUL and garbage, a second value), cut in the middle, or with a field this warmstat
// does not know is refused with the file, the offset and the header named, and the
// file is left as it was; the same header rewritten unchanged still reads.
func TestHeaderReadStrictly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "shop.workload")
	write(t, path, 10)
	good, _ := os.ReadFile(path)
	same := filepath.Join(dir, "same.workload")
	os.WriteFile(same, withHeader(t, good, func(j []byte) []byte { return j }), 0o644)
	if _, err := Verify(same); err != nil {
		t.Fatalf("the header rewritten unchanged: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func([]byte) []byte
		want string
	}{
		{"nul and garbage", func(j []byte) []byte { return append(j, "\x00{garbage"...) }, "data after the JSON value"},
		{"second value", func(j []byte) []byte { return append(append(j, '\n'), j...) }, "data after the JSON value"},
		{"cut", func(j []byte) []byte { return j[:len(j)/2] }, "truncated JSON"},
		{"unknown field", func(j []byte) []byte { return bytes.Replace(j, []byte(`"catalog"`), []byte(`"catalogue"`), 1) }, "field catalogue: unknown field"},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".workload")
		damaged := withHeader(t, good, c.edit)
		os.WriteFile(p, damaged, 0o644)
		_, err := Open(p)
		var fe *FormatError
		if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), p+": offset ") || !strings.Contains(err.Error(), "header: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a FormatError naming the file, the header and %q", c.name, err, c.want)
		}
		if b, _ := os.ReadFile(p); !bytes.Equal(b, damaged) {
			t.Errorf("%s: reading changed the file", c.name)
		}
	}
}
