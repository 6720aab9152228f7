package workload

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/warmstat/warmstat/base/staging"
	"github.com/warmstat/warmstat/evita/pb"
	"google.golang.org/protobuf/proto"
)

// Writer writes a workload file: Create, then per collection Begin, Entity for each
// entity and End, then Close. The file appears at its path only when Close succeeds.
type Writer struct {
	path, tmp string
	f         *os.File
	enc       *zstd.Encoder
	raw       []byte // records not yet in a chunk
	out       []byte // a compressed chunk, reused
	begin     time.Time
	trailer   Trailer
	open      *Collection // the collection being written
	err       error       // the first failure: every later call returns it
}

// Create starts a workload file at path, which must not exist (a workload file is
// never written into): the header and the schemas first.
func Create(path string, h Header, catalog *pb.GrpcCatalogSchema, schemas []*pb.GrpcEntitySchema) (*Writer, error) {
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("%s exists: a workload file is never overwritten (choose another path, or remove it)", path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), staging.Pattern(path))
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o644); err != nil { // CreateTemp's 0600; a workload is shared like a run
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	w := &Writer{path: path, tmp: f.Name(), f: f, enc: enc, begin: time.Now()}
	if _, err := f.WriteString(Magic); err != nil {
		w.Abort()
		return nil, err
	}
	h.Schema = SchemaV1
	hb, err := json.Marshal(h)
	if err != nil {
		w.Abort()
		return nil, err
	}
	w.record(kindHeader, hb)
	cb, err := proto.Marshal(catalog)
	if err != nil {
		w.Abort()
		return nil, err
	}
	w.record(kindCatalog, cb)
	for _, s := range schemas {
		sb, err := proto.Marshal(s)
		if err != nil {
			w.Abort()
			return nil, err
		}
		w.record(kindEntitySchema, sb)
	}
	if w.err != nil {
		err := w.err
		w.Abort()
		return nil, err
	}
	return w, nil
}

// record appends one record, writing a chunk when enough have gathered.
func (w *Writer) record(kind byte, payload ...[]byte) {
	if w.err != nil {
		return
	}
	n := 0
	for _, p := range payload {
		n += len(p)
	}
	if n > maxRecord {
		w.err = fmt.Errorf("workload: a record of %d bytes (at most %d)", n, maxRecord)
		return
	}
	w.raw = append(w.raw, kind)
	w.raw = binary.AppendUvarint(w.raw, uint64(n))
	for _, p := range payload {
		w.raw = append(w.raw, p...)
	}
	if len(w.raw) >= chunkRaw {
		w.flush()
	}
}

// flush compresses the gathered records into one chunk.
func (w *Writer) flush() {
	if w.err != nil || len(w.raw) == 0 {
		return
	}
	w.out = append(w.out[:0], make([]byte, chunkHeader)...)
	w.out = w.enc.EncodeAll(w.raw, w.out)
	body := w.out[chunkHeader:]
	putChunkHeader(w.out, len(body), len(w.raw), crc32.Checksum(body, castagnoli))
	if _, err := w.f.Write(w.out); err != nil {
		w.err = err
	}
	w.raw = w.raw[:0]
}

// Begin starts a collection; source is its LIVE entities in the source.
func (w *Writer) Begin(name string, source int64) error {
	if w.open != nil {
		return fmt.Errorf("workload: collection %s is still open", w.open.Name)
	}
	w.open = &Collection{Name: name, Source: source}
	b, _ := json.Marshal(Collection{Name: name, Source: source})
	w.record(kindBegin, b)
	return w.err
}

// Entity adds one entity's upsert request (bytes of a GrpcUpsertEntityRequest).
func (w *Writer) Entity(pk int32, request []byte) error {
	if w.open == nil {
		return errors.New("workload: an entity outside a collection")
	}
	if pk < 0 {
		return fmt.Errorf("workload: primary key %d is negative", pk)
	}
	var key [binary.MaxVarintLen64]byte
	w.record(kindEntity, key[:binary.PutUvarint(key[:], uint64(pk))], request)
	w.open.Entities++
	return w.err
}

// End closes the collection being written, with the time its reading took.
func (w *Writer) End(readNs, wallNs int64) error {
	if w.open == nil {
		return errors.New("workload: no collection to end")
	}
	c := *w.open
	c.ReadNs, c.WallNs = readNs, wallNs
	b, _ := json.Marshal(c)
	w.record(kindEnd, b)
	w.trailer.Collections = append(w.trailer.Collections, c)
	w.trailer.Entities += c.Entities
	w.open = nil
	return w.err
}

// Close writes the trailer, syncs the file and moves it into place.
func (w *Writer) Close() error {
	if w.open != nil {
		w.Abort()
		return fmt.Errorf("workload: collection %s was not ended", w.open.Name)
	}
	w.trailer.ExtractNs = time.Since(w.begin).Nanoseconds()
	b, _ := json.Marshal(w.trailer)
	w.record(kindTrailer, b)
	w.flush()
	err := w.err
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.enc.Close()
	if err == nil {
		// the path was free at Create: refuse to replace what appeared there since
		if _, serr := os.Lstat(w.path); serr == nil {
			err = fmt.Errorf("%s appeared while the workload was written: not overwritten", w.path)
		} else {
			err = os.Rename(w.tmp, w.path)
		}
	}
	if err != nil {
		os.Remove(w.tmp)
		return fmt.Errorf("workload %s: %w", w.path, err)
	}
	return nil
}

// Abort gives the file up: nothing is left at its path.
func (w *Writer) Abort() {
	w.f.Close()
	os.Remove(w.tmp)
	if w.enc != nil {
		w.enc.Close()
	}
}

// Totals is what the writer has written so far (complete after Close).
func (w *Writer) Totals() Trailer { return w.trailer }
