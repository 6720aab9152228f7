// Package workload is the workload file: a catalog's schemas and every entity's upsert
// request, read once from a source (warmstat extract) and replayed by the loader, so
// that a measured run needs no reader server and reads no source while it is timed.
//
// # Layout
//
// A workload file is the magic line "WARMSTAT-WORKLOAD v1\n" followed by chunks. A
// chunk is a 16-byte header — "WSCK", the compressed length, the raw length and the
// CRC-32C of the compressed bytes, each a little-endian uint32 — and one zstd frame.
// The raw bytes of all chunks, concatenated, are a stream of records: a kind byte, a
// uvarint length and that many bytes of payload. The records, in order:
//
//	'H' header         JSON (Header): where the workload came from, what it holds
//	'C' catalog schema  the source's GrpcCatalogSchema (protobuf)
//	'S' entity schema   one GrpcEntitySchema per collection of the source (protobuf)
//	then per collection, in load order:
//	'B' begin           JSON (Collection): name and source count
//	'E' entity          uvarint primary key, then the entity's GrpcUpsertEntityRequest
//	'Z' end             JSON (Collection): what was written and how long reading it took
//	'T' trailer         JSON (Trailer): the totals, written last
//
// A chunk whose checksum fails is refused with its file offset, and so is a file that
// ends before its trailer (truncated) or whose counts disagree with its records. Files
// are written to a temporary name beside the target and renamed when complete, and an
// existing file is never written into.
//
// Memory does not grow with the catalog: a chunk (about 1 MiB of records) is buffered
// on each side. zstd (github.com/klauspost/compress: pure Go, maintained, several
// times faster than gzip at a better ratio) keeps the file a fraction of the requests'
// size; protobuf's repeated field names and keys compress well.
package workload

import (
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"time"
)

// Magic starts every workload file.
const Magic = "WARMSTAT-WORKLOAD v1\n"

// SchemaV1 is the header's schema.
const SchemaV1 = "warmstat.workload/v1"

// Record kinds.
const (
	kindHeader       = 'H'
	kindCatalog      = 'C'
	kindEntitySchema = 'S'
	kindBegin        = 'B'
	kindEntity       = 'E'
	kindEnd          = 'Z'
	kindTrailer      = 'T'
)

const (
	chunkMagic  = "WSCK"
	chunkHeader = 16
	chunkRaw    = 1 << 20   // raw bytes per chunk
	maxChunk    = 256 << 20 // a length above this is damage, not data
	maxRecord   = 256 << 20 // evitaDB refuses larger entities (api.maxEntitySizeInBytes is 64 MB)
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func putChunkHeader(b []byte, compressed, raw int, crc uint32) {
	copy(b, chunkMagic)
	binary.LittleEndian.PutUint32(b[4:], uint32(compressed))
	binary.LittleEndian.PutUint32(b[8:], uint32(raw))
	binary.LittleEndian.PutUint32(b[12:], crc)
}

// DefaultBatchSize is the batch extract reads a source in unless told otherwise, and
// the one a generated workload records: a replay's conditions and a duet's lock-step
// follow the header's batch, so a generated file replays as the same catalog
// extracted with the defaults does.
const DefaultBatchSize = 1000

// Header says where a workload came from and what it holds.
type Header struct {
	Schema    string    `json:"schema"`
	CreatedAt time.Time `json:"created_at"`
	// Catalog is the source catalog's name.
	Catalog string `json:"catalog"`
	// Source is how the source was read ("spawn": a reader warmstat started on a
	// pristine snapshot; "attach": a running server), its address and the version it
	// reported; Server is the server build as the caller records it (runfmt's
	// ServerBuild), kept as given.
	SourceMode    string          `json:"source_mode"`
	SourceAddress string          `json:"source_address,omitempty"`
	SourceVersion string          `json:"source_version,omitempty"`
	Server        json.RawMessage `json:"server,omitempty"`
	// SnapshotSHA256 is the pristine snapshot's checksum (spawn mode); its seed scale
	// and live heap, when its metadata records them, size a replaying writer's heap as
	// they size a live one's.
	SnapshotSHA256        string   `json:"snapshot_sha256,omitempty"`
	SnapshotScale         *float64 `json:"snapshot_scale,omitempty"`
	SnapshotLiveHeapBytes *int64   `json:"snapshot_live_heap_bytes,omitempty"`
	// LiveHeapEstimateBytes is, for a generated workload of a profile whose memory was
	// measured at several scales, the live heap its catalog is estimated to hold in a
	// writer, and LiveHeapEstimateSource where the estimate comes from: a replay sizes
	// and refuses its writer's heap by it, before any JVM starts.
	LiveHeapEstimateBytes  *int64 `json:"live_heap_estimate_bytes,omitempty"`
	LiveHeapEstimateSource string `json:"live_heap_estimate_source,omitempty"`
	// ProductionShare is the catalog's own size, the entities the file holds as a share
	// of production's 386,369: a replaying writer's heap is proposed from it (23 GiB ×
	// share + 1 GiB). Absent in a file of a warmstat before it was recorded: its
	// SnapshotScale is then read as that share, as it always was.
	ProductionShare *float64 `json:"production_share,omitempty"`
	// SourceCounts are every source collection's LIVE entities; Fingerprint is the
	// dataset fingerprint of those counts (the one a live load of the source records).
	SourceCounts map[string]int64 `json:"source_counts"`
	Fingerprint  string           `json:"fingerprint"`
	// Collections are the collections the file holds, in load order; the subset and
	// cap they were read with (0 = none).
	Collections      []string `json:"collections"`
	CollectionSubset []string `json:"collection_subset,omitempty"`
	MaxPerCollection int      `json:"max_per_collection"`
	BatchSize        int      `json:"batch_size"`
}

// Collection is one collection's begin and end record.
type Collection struct {
	Name string `json:"name"`
	// Source is the collection's LIVE entities in the source; Entities how many the
	// file holds (min(source, cap)), known at its end.
	Source   int64 `json:"source"`
	Entities int64 `json:"entities,omitempty"`
	// ReadNs is the time spent reading the collection from the source (key listing
	// and fetches), WallNs its whole extraction.
	ReadNs int64 `json:"read_ns,omitempty"`
	WallNs int64 `json:"wall_ns,omitempty"`
}

// Trailer closes a complete workload file.
type Trailer struct {
	Entities    int64        `json:"entities"`
	Collections []Collection `json:"collections"`
	// ExtractNs is the whole extraction, schemas to trailer.
	ExtractNs int64 `json:"extract_ns"`
}

// Info is what Verify proves about a file.
type Info struct {
	Path    string
	SHA256  string // of the file's bytes: the workload's identity
	Size    int64
	Header  Header
	Trailer Trailer
}
