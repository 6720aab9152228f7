package workload

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"slices"

	"github.com/klauspost/compress/zstd"
	"github.com/warmstat/warmstat/base/strictjson"
	"github.com/warmstat/warmstat/evita/pb"
	"google.golang.org/protobuf/proto"
)

// FormatError is a workload file that cannot be used: damaged, truncated, or not a
// workload file. Offset is where in the file (bytes from its start) it went wrong.
type FormatError struct {
	Path   string
	Offset int64
	Reason string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%s: offset %d: %s", e.Path, e.Offset, e.Reason)
}

// chunks serves the raw bytes of a file's chunks, each checked before it is served.
type chunks struct {
	path   string
	f      io.Reader
	sum    hash.Hash // of the file's bytes as read
	dec    *zstd.Decoder
	at     int64 // file offset of the next chunk header
	chunk  int64 // file offset of the chunk being served
	comp   []byte
	raw    []byte
	pos    int
	served int64 // raw bytes served before the chunk being served
}

func (c *chunks) fail(at int64, format string, args ...any) error {
	return &FormatError{Path: c.path, Offset: at, Reason: fmt.Sprintf(format, args...)}
}

func (c *chunks) Read(p []byte) (int, error) {
	for c.pos == len(c.raw) {
		if err := c.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, c.raw[c.pos:])
	c.pos += n
	return n, nil
}

func (c *chunks) next() error {
	var h [chunkHeader]byte
	n, err := io.ReadFull(c.f, h[:])
	switch {
	case n == 0 && err == io.EOF:
		return io.EOF
	case err != nil:
		return c.fail(c.at, "truncated: %d of a chunk header's %d bytes", n, chunkHeader)
	case string(h[:4]) != chunkMagic:
		return c.fail(c.at, "not a chunk header (damaged)")
	}
	c.sum.Write(h[:])
	compressed, raw := binary.LittleEndian.Uint32(h[4:]), binary.LittleEndian.Uint32(h[8:])
	if compressed > maxChunk || raw > maxChunk || raw == 0 { // the writer writes no empty chunk
		return c.fail(c.at, "a chunk of %d bytes (%d raw): damaged", compressed, raw)
	}
	c.comp = slices.Grow(c.comp[:0], int(compressed))[:compressed]
	if n, err := io.ReadFull(c.f, c.comp); err != nil {
		return c.fail(c.at, "truncated: %d of the chunk's %d bytes", n, compressed)
	}
	c.sum.Write(c.comp)
	if crc32.Checksum(c.comp, castagnoli) != binary.LittleEndian.Uint32(h[12:]) {
		return c.fail(c.at, "chunk checksum mismatch (damaged)")
	}
	out, err := c.dec.DecodeAll(c.comp, c.raw[:0])
	if err != nil || len(out) != int(raw) {
		return c.fail(c.at, "chunk does not decompress to its %d bytes (%v)", raw, err)
	}
	c.served += int64(len(c.raw))
	c.raw, c.pos, c.chunk = out, 0, c.at
	c.at += chunkHeader + int64(compressed)
	return nil
}

// Reader reads a workload file record by record: Open, then NextCollection and, for
// each, Next until io.EOF; after the last collection NextCollection returns io.EOF and
// Trailer is known. It does not check what it has not read yet: Verify the file first.
type Reader struct {
	path    string
	file    *os.File
	c       *chunks
	r       *bufio.Reader
	buf     []byte
	header  Header
	catalog *pb.GrpcCatalogSchema
	schemas []*pb.GrpcEntitySchema
	open    *Collection
	done    bool
	trailer Trailer
	ended   []Collection
}

// Open reads a workload file's header and schemas.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := newReader(path, f, sha256.New())
	if err != nil {
		f.Close()
		return nil, err
	}
	r.file = f
	return r, nil
}

func newReader(path string, f io.Reader, sum hash.Hash) (*Reader, error) {
	magic := make([]byte, len(Magic))
	if n, err := io.ReadFull(f, magic); err != nil || string(magic) != Magic {
		return nil, &FormatError{Path: path, Offset: 0, Reason: fmt.Sprintf("not a workload file (it does not start with %q; %d bytes read)", Magic, n)}
	}
	sum.Write(magic)
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxChunk))
	if err != nil {
		return nil, err
	}
	c := &chunks{path: path, f: f, sum: sum, dec: dec, at: int64(len(Magic))}
	r := &Reader{path: path, c: c, r: bufio.NewReaderSize(c, 64<<10)}
	kind, b, err := r.record()
	if err != nil {
		return nil, err
	}
	if kind != kindHeader {
		return nil, r.fail("the first record is %q, not the header", kind)
	}
	if err := r.decode("header", b, &r.header); err != nil {
		return nil, err
	}
	if r.header.Schema != SchemaV1 {
		return nil, r.fail("header: schema %q, this warmstat reads %q", r.header.Schema, SchemaV1)
	}
	if kind, b, err = r.record(); err != nil {
		return nil, err
	}
	if kind != kindCatalog {
		return nil, r.fail("expected the catalog schema, found a %q record", kind)
	}
	r.catalog = &pb.GrpcCatalogSchema{}
	if err := proto.Unmarshal(b, r.catalog); err != nil {
		return nil, r.fail("catalog schema: %v", err)
	}
	for {
		kind, b, err := r.peekKind()
		if err != nil {
			return nil, err
		}
		if kind != kindEntitySchema {
			break
		}
		if _, b, err = r.record(); err != nil {
			return nil, err
		}
		s := &pb.GrpcEntitySchema{}
		if err := proto.Unmarshal(b, s); err != nil {
			return nil, r.fail("entity schema %d: %v", len(r.schemas)+1, err)
		}
		r.schemas = append(r.schemas, s)
	}
	return r, nil
}

// decode reads a JSON record strictly (strictjson's rule: unknown fields, data after
// the value and a truncated value are refused). The error names the record (what) and
// its field; its place is the file offset of the record's chunk (a record is one line).
func (r *Reader) decode(what string, b []byte, v any) error {
	err := strictjson.Unmarshal(what, b, v)
	var se *strictjson.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se) && se.Field != "":
		return r.fail("%s: field %s: %s", what, se.Field, se.Msg)
	case errors.As(err, &se):
		return r.fail("%s: %s", what, se.Msg)
	}
	return r.fail("%s: %v", what, err)
}

// offset is the file offset of the chunk the reader is in (records span chunks).
func (r *Reader) offset() int64 { return r.c.chunk }

func (r *Reader) fail(format string, args ...any) error {
	return &FormatError{Path: r.path, Offset: r.offset(), Reason: fmt.Sprintf(format, args...)}
}

func (r *Reader) peekKind() (byte, []byte, error) {
	b, err := r.r.Peek(1)
	if err != nil {
		return 0, nil, r.eof(err)
	}
	return b[0], nil, nil
}

// eof turns the end of the chunks into truncation: a complete file ends after its trailer.
func (r *Reader) eof(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return r.fail("truncated: the file ends before its trailer")
	}
	return err
}

// record reads one record; its payload is valid until the next call.
func (r *Reader) record() (byte, []byte, error) {
	kind, err := r.r.ReadByte()
	if err != nil {
		return 0, nil, r.eof(err)
	}
	n, err := binary.ReadUvarint(r.r)
	if err != nil {
		return 0, nil, r.eof(err)
	}
	if n > maxRecord {
		return 0, nil, r.fail("a %q record of %d bytes: damaged", kind, n)
	}
	r.buf = slices.Grow(r.buf[:0], int(n))[:n]
	if _, err := io.ReadFull(r.r, r.buf); err != nil {
		return 0, nil, r.eof(err)
	}
	return kind, r.buf, nil
}

// Header is the file's header.
func (r *Reader) Header() Header { return r.header }

// CatalogSchema is the source's catalog schema.
func (r *Reader) CatalogSchema() *pb.GrpcCatalogSchema { return r.catalog }

// EntitySchemas are the source's entity schemas, one per collection of the source.
func (r *Reader) EntitySchemas() []*pb.GrpcEntitySchema { return r.schemas }

// NextCollection starts the next collection; io.EOF after the last, when the trailer
// has been read.
func (r *Reader) NextCollection() (Collection, error) {
	if r.done {
		return Collection{}, io.EOF
	}
	for r.open != nil { // the rest of an unfinished collection is skipped
		if _, _, err := r.Next(); err == io.EOF {
			break
		} else if err != nil {
			return Collection{}, err
		}
	}
	kind, b, err := r.record()
	if err != nil {
		return Collection{}, err
	}
	switch kind {
	case kindTrailer:
		if err := r.decode("trailer", b, &r.trailer); err != nil {
			return Collection{}, err
		}
		if err := r.checkTrailer(); err != nil {
			return Collection{}, err
		}
		r.done = true
		return Collection{}, io.EOF
	case kindBegin:
		var c Collection
		if err := r.decode("collection record", b, &c); err != nil {
			return Collection{}, err
		}
		if c.Name == "" {
			return Collection{}, r.fail("collection record: field name: empty")
		}
		r.open = &c
		return c, nil
	}
	return Collection{}, r.fail("expected a collection or the trailer, found a %q record", kind)
}

// Next is the open collection's next entity: its primary key and its upsert request
// (valid until the next call); io.EOF at the collection's end.
func (r *Reader) Next() (int32, []byte, error) {
	if r.open == nil {
		return 0, nil, io.EOF
	}
	kind, b, err := r.record()
	if err != nil {
		return 0, nil, err
	}
	switch kind {
	case kindEntity:
		pk, n := binary.Uvarint(b)
		if n <= 0 || pk > 1<<31-1 {
			return 0, nil, r.fail("%s: an entity record without a primary key", r.open.Name)
		}
		r.open.Entities++
		return int32(pk), b[n:], nil
	case kindEnd:
		var c Collection
		if err := r.decode("end of "+r.open.Name, b, &c); err != nil {
			return 0, nil, err
		}
		if c.Name != r.open.Name || c.Entities != r.open.Entities {
			return 0, nil, r.fail("end of %s: says %s with %d entities, the file holds %d", r.open.Name, c.Name, c.Entities, r.open.Entities)
		}
		r.ended = append(r.ended, c)
		r.open = nil
		return 0, nil, io.EOF
	}
	return 0, nil, r.fail("%s: expected an entity or the collection's end, found a %q record", r.open.Name, kind)
}

func (r *Reader) checkTrailer() error {
	var n int64
	for _, c := range r.ended {
		n += c.Entities
	}
	if n != r.trailer.Entities || len(r.trailer.Collections) != len(r.ended) {
		return r.fail("trailer: %d entities in %d collections, the file holds %d in %d", r.trailer.Entities, len(r.trailer.Collections), n, len(r.ended))
	}
	if _, err := r.r.ReadByte(); err != io.EOF {
		return r.fail("data after the trailer")
	}
	return nil
}

// Trailer is the file's trailer, once NextCollection has returned io.EOF.
func (r *Reader) Trailer() Trailer { return r.trailer }

// SHA256 is the digest of the file's bytes read so far (the whole file once the
// trailer has been read).
func (r *Reader) SHA256() string { return hex.EncodeToString(r.c.sum.Sum(nil)) }

// Close releases the file.
func (r *Reader) Close() error {
	r.c.dec.Close()
	if r.file != nil {
		return r.file.Close()
	}
	return nil
}

// Verify reads a whole workload file — every chunk's checksum, every record, the
// trailer's totals, the collections the header promises — and returns what it holds
// and its SHA-256; a damaged or truncated file is refused with the offset named.
func Verify(path string) (Info, error) {
	r, err := Open(path)
	if err != nil {
		return Info{}, err
	}
	defer r.Close()
	var names []string
	for {
		c, err := r.NextCollection()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Info{}, err
		}
		names = append(names, c.Name)
		for {
			if _, _, err := r.Next(); err == io.EOF {
				break
			} else if err != nil {
				return Info{}, err
			}
		}
	}
	if !slices.Equal(names, r.header.Collections) {
		return Info{}, r.fail("holds collections %v, its header promises %v", names, r.header.Collections)
	}
	st, err := r.file.Stat()
	if err != nil {
		return Info{}, err
	}
	return Info{Path: path, SHA256: r.SHA256(), Size: st.Size(), Header: r.header, Trailer: r.trailer}, nil
}

// FileSHA256 is the digest of a file's bytes (a workload's identity, as Verify gives it).
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
