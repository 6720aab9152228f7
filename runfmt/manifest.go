package runfmt

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/warmstat/warmstat/base/strictjson"
)

// SchemaV1 is the manifest schema this package reads and writes.
const SchemaV1 = "warmstat.run/v1"

// Loader names.
const (
	LoaderWarmstat    = "warmstat"
	LoaderJavaHarness = "java-harness"
)

// Target modes.
const (
	TargetRemote   = "remote"
	TargetEmbedded = "embedded"
)

// goLive outcomes.
const (
	GoLiveOK      = "ok"
	GoLiveFailed  = "failed"
	GoLiveSkipped = "skipped"
	// GoLiveUnconfirmed: the call completed but the catalog's state could not be read
	// afterwards, so ALIVE is not proven; never counted as a transition time.
	GoLiveUnconfirmed = "unconfirmed"
)

// Verification outcomes.
const (
	Verified   = "verified"
	VerifySkip = "skipped"
	Unverified = "unverified"
	Mismatch   = "mismatch"
)

// Run outcomes: did the load loop run to its end?
const (
	OutcomeComplete    = "complete"
	OutcomeAborted     = "aborted"
	OutcomeInterrupted = "interrupted"
	// OutcomeFailed: the load ran, but what it measured cannot be trusted or the run
	// could not be completed — the pristine snapshot it read changed during the run,
	// or what is recorded after the load (the writer's GC, its profile) could not be
	// written. Detail names the cause.
	OutcomeFailed = "failed"
)

// Manifest describes one run: its conditions, its aggregate timings and whether it
// can be trusted to be complete. See the package doc for the rules.
type Manifest struct {
	Schema        string       `json:"schema"`
	RunID         string       `json:"run_id"`
	Build         Build        `json:"build"`
	Loader        Loader       `json:"loader"`
	Server        Server       `json:"server"`
	Reader        Reader       `json:"reader"`
	TargetMode    string       `json:"target_mode"`
	Conditions    Conditions   `json:"conditions"`
	SourceCatalog string       `json:"source_catalog"`
	TargetCatalog string       `json:"target_catalog"`
	Dataset       Dataset      `json:"dataset"`
	StartedAt     *time.Time   `json:"started_at"`
	Machine       Machine      `json:"machine"`
	Entities      int64        `json:"entities"`
	Timings       Timings      `json:"timings"`
	Collections   []Collection `json:"collections"`
	GoLive        GoLive       `json:"golive"`
	Verification  Verification `json:"verification"`
	Outcome       Outcome      `json:"outcome"`
	ExitCode      int          `json:"exit_code"`
	WriterGC      *GCStats     `json:"writer_gc,omitempty"`
	// Factors are what the JVMs and the machine did during the load window beside the
	// measured work (spawn mode; nil otherwise).
	Factors  *VarianceFactors `json:"variance_factors,omitempty"`
	ReaderGC *GCStats         `json:"reader_gc,omitempty"`
	// WarmUp is what each warm-up load before the measured one took (Conditions.
	// WarmUpLoads of them), for the reader: none of it is in the measured figures.
	WarmUp []WarmUpLoad `json:"warm_up,omitempty"`
	// WriterProfile: a profiler ran on the writer (runfmt/profile.go); nil = unprofiled.
	WriterProfile *WriterProfile `json:"writer_profile,omitempty"`
	Import        *Import        `json:"import,omitempty"`
	// Source is where the load's entities came from; nil = a live source server (as
	// for every run before replay existed).
	Source *Source `json:"source,omitempty"`
	// Duet: the run was made at the same time as its partner run of the other build,
	// in lock-step (ab --duet); nil = a run made alone.
	Duet *Duet `json:"duet,omitempty"`
}

// Duet is a run made beside its partner run of the other build, both writers replaying
// the same workload at once: both warmed behind a barrier before either measured load
// began, the loads in lock-step by batch (neither starts batch k+1 before both ended
// batch k), goLive when both loads had ended, each writer on a CPU set of its own.
// The waits are the time this run's loader spent waiting for its partner at those
// barriers: a faster side waits, so its load_wall_ns and collection walls leave them
// out (they are its own work); its entities' start_ns in entities.csv keep them (a
// timeline).
type Duet struct {
	Partner      string `json:"partner"`       // the partner run's run id
	PartnerBuild string `json:"partner_build"` // the partner run's build label
	// Slot is the run's place in the duet, 1 or 2: the CPU set its writer had (the
	// first or second half of the machine's CPUs). A series alternates it pair by
	// pair and analyses it as a factor.
	Slot         int    `json:"slot"`
	CPUs         string `json:"cpus"`         // the writer's CPU set as asked ("0", "0-3")
	CPUsAllowed  string `json:"cpus_allowed"` // as the kernel had it for every writer thread when the load began ("" unknown)
	StartWaitNs  int64  `json:"start_wait_ns"`
	BatchWaitNs  int64  `json:"batch_wait_ns"`
	BatchWaits   int64  `json:"batch_waits"` // the batch boundaries met (every one a barrier)
	GoLiveWaitNs int64  `json:"golive_wait_ns"`
}

// Source modes (Source.Mode).
const (
	SourceLive   = "live"   // fetched from a source server during the load
	SourceReplay = "replay" // read from a workload file (warmstat extract)
)

// Source is where a load read its entities: a live server, or a workload file
// replayed (its path, SHA-256 and the fingerprint of the source it was read from).
type Source struct {
	Mode           string `json:"mode"`
	Workload       string `json:"workload,omitempty"`
	WorkloadSHA256 string `json:"workload_sha256,omitempty"`
}

// SourceMode is the run's source mode ("live" when unrecorded).
func (m *Manifest) SourceMode() string {
	if m.Source == nil || m.Source.Mode == "" {
		return SourceLive
	}
	return m.Source.Mode
}

// Build identifies the evitaDB build under test.
type Build struct {
	Label  string `json:"label"`
	Commit string `json:"commit,omitempty"`
}

// Loader identifies the program that measured the run.
type Loader struct {
	Name    string      `json:"name"`
	Version UnknownText `json:"version"` // null when unknown (an imported Java-harness run)
	// CPUNs is the CPU time (user + system) the loader's own process used during the
	// load wall-clock: whether the loader, not the server, could be what is measured.
	// Null when unrecorded.
	CPUNs *int64 `json:"cpu_ns,omitempty"`
	// GOMAXPROCS and GOGC are the Go runtime settings the loader ran with (its own
	// defaults, or what the environment set): how many threads it could spin, how often
	// it collected. Null when unrecorded (runs before they were, other loaders).
	GOMAXPROCS *int `json:"gomaxprocs,omitempty"`
	GOGC       *int `json:"gogc,omitempty"` // -1: off
	// PeakRSSBytes is the loader process's peak resident memory over the run (its
	// maxrss as the run ends); nil = unrecorded.
	PeakRSSBytes *int64 `json:"peak_rss_bytes,omitempty"`
}

// Server is the target (writer) server.
type Server struct {
	Version      UnknownText `json:"version"` // as the server reports itself over gRPC; null when unknown
	Address      string      `json:"address,omitempty"`
	MaxHeapBytes *int64      `json:"max_heap_bytes"`
	// Build is how warmstat obtained the server it started (spawn mode); nil otherwise.
	Build *ServerBuild `json:"build,omitempty"`
	// JVM is the Java VM that ran it, when warmstat started it; nil = unknown.
	JVM *JVM `json:"jvm,omitempty"`
	// LoadCPUNs is the writer JVM's CPU time (user + system, every thread) during the
	// load window, when warmstat started it (from /proc); nil = unknown.
	LoadCPUNs *int64 `json:"load_cpu_ns,omitempty"`
	// PeakRSSBytes is the writer JVM's peak resident memory over its life (VmHWM, read
	// as the run ends, goLive included), when warmstat started it; nil = unknown. The
	// heap is what it was allowed; this is what the machine had to give it.
	PeakRSSBytes *int64 `json:"peak_rss_bytes,omitempty"`
}

// Reader is the process that reads the source: the Java harness's JVM, or the
// source server in warmstat's spawn mode.
type Reader struct {
	MaxHeapBytes *int64       `json:"max_heap_bytes"`
	Build        *ServerBuild `json:"build,omitempty"`
	JVM          *JVM         `json:"jvm,omitempty"`
}

// Server sources (ServerBuild.Source).
const (
	ServerFromRelease   = "release"    // a release fetched by make evita
	ServerFromClasspath = "classpath"  // an explicit classpath
	ServerFromJar       = "server-jar" // a runnable server jar (java -jar)
	ServerFromCheckout  = "checkout"   // an evitaDB checkout's built server jar
)

// ServerBuild says which server build ran and how warmstat obtained it. Version and
// BuildCommit are read from the server jar's own manifest, not from the user's label.
type ServerBuild struct {
	Source          string    `json:"source"`
	Ref             string    `json:"ref"` // what the user named: version, classpath, jar or checkout
	Version         string    `json:"version"`
	BuildCommit     string    `json:"build_commit"`
	Checkout        *Checkout `json:"checkout,omitempty"`
	Jars            []JarSum  `json:"jars"`
	ClasspathSHA256 string    `json:"classpath_sha256"`
}

// Checkout is the evitaDB checkout a server jar came from.
type Checkout struct {
	Root   string `json:"root"`
	Commit string `json:"commit"`
	Dirty  bool   `json:"dirty"`
}

// JarSum is one jar of a server and its SHA-256.
type JarSum struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
}

// JVM is the Java VM that ran a server: vendor, version and collector are
// comparability conditions; the options and final flags are recorded for the reader.
type JVM struct {
	Java    string   `json:"java"`
	Vendor  string   `json:"vendor"`
	Version string   `json:"version"`
	GC      string   `json:"gc"`
	Options []string `json:"options"`
	Flags   []string `json:"flags"`
	// EnvOptions are options the JVM took from its environment (JDK_JAVA_OPTIONS,
	// JAVA_TOOL_OPTIONS, _JAVA_OPTIONS), each "VARIABLE=value", as the JVM said it
	// picked them up; the writer's are part of the writer-jvm-options condition.
	EnvOptions []string `json:"env_options,omitempty"`
	// ClassArchive is the class-data archive (AppCDS) the JVM booted with, by file name
	// in warmstat's cache; empty when it booted without one.
	ClassArchive string `json:"class_archive,omitempty"`
}

// Conditions are the settings that change what a run measures.
type Conditions struct {
	StorageCompress  *bool    `json:"storage_compress"`
	CacheEnabled     *bool    `json:"cache_enabled"`
	TrafficRecording *bool    `json:"traffic_recording"`
	BatchSize        int      `json:"batch_size"`
	MaxPerCollection int      `json:"max_per_collection"` // 0 = no cap
	CollectionSubset []string `json:"collection_subset"`  // empty = all collections
	Prefetch         bool     `json:"prefetch"`
	// WriterJVMOptions are JVM options the user gave the writer (load
	// --writer-jvm-option), after warmstat's own; none when empty.
	WriterJVMOptions []string `json:"writer_jvm_options,omitempty"`
	// WarmUpLoads is how many loads of the same workload the writer JVM did, each into
	// a throwaway catalog published and then deleted, before the measured load (load
	// --writer-warm-up): the measured load then runs on compiled code, as a production
	// server's next publish does. 0: the measured load was the JVM's first.
	WarmUpLoads int `json:"warm_up_loads,omitempty"`
	// CatalogLine is the evitaDB release line the target's catalog was written for:
	// "" the catalog as the source holds it; "2026.1" the catalog that line accepts (what
	// it lacks left out, on both sides of a comparison across the lines). Absent in runs
	// from before it was recorded: those are "".
	CatalogLine string `json:"catalog_line,omitempty"`
}

// CatalogLines are the values Conditions.CatalogLine takes.
var CatalogLines = []string{"", "2026.1"}

// Dataset fingerprints the source catalog by its per-collection entity counts.
type Dataset struct {
	Fingerprint  string           `json:"fingerprint"` // "" when the source counts are unknown
	SourceCounts map[string]int64 `json:"source_counts"`
	// SnapshotSHA256 is the pristine snapshot's checksum (spawn mode), taken before the
	// run and proved equal after it; "" when the source was not a snapshot warmstat read.
	SnapshotSHA256 string `json:"snapshot_sha256,omitempty"`
}

// Machine is where the run was measured.
type Machine struct {
	Cores                  *int   `json:"cores"`
	MemoryBytes            *int64 `json:"memory_bytes"`
	CgroupMemoryLimitBytes *int64 `json:"cgroup_memory_limit_bytes"` // null = no limit or unknown
	CPUModel               string `json:"cpu_model,omitempty"`       // "" = unknown
	Kernel                 string `json:"kernel,omitempty"`          // "" = unknown
}

// Timings are the run's aggregate clocks.
type Timings struct {
	ResolutionNs        int64  `json:"resolution_ns"`
	LoadWallNs          int64  `json:"load_wall_ns"`
	UpsertNs            int64  `json:"upsert_ns"`
	SourceReadNs        int64  `json:"source_read_ns"`
	SchemaReplicationNs *int64 `json:"schema_replication_ns"`
	// LoopOverheadNs is the load wall-clock spent neither upserting nor reading the
	// source: the loader's own time (building mutations, writing the CSV, bookkeeping).
	// Null when unrecorded, and always with prefetch, where reads overlap upserts.
	LoopOverheadNs *int64 `json:"loop_overhead_ns,omitempty"`
}

// Collection is one collection's share of the load.
type Collection struct {
	Name     string `json:"name"`
	Entities int64  `json:"entities"`
	WallNs   int64  `json:"wall_ns"`
	ReadNs   int64  `json:"read_ns"`
	UpsertNs int64  `json:"upsert_ns"`
}

// GoLive is the WARM_UP -> ALIVE transition, measured apart from the load.
type GoLive struct {
	Status string `json:"status"`
	// Ns is the transition time when Status is ok, the time to failure when failed.
	Ns    *int64 `json:"ns"`
	Error string `json:"error,omitempty"`
	// ServerReachedAlive: after a client-side failure, did polling see ALIVE anyway?
	ServerReachedAlive *bool `json:"server_reached_alive,omitempty"`
}

// Verification compares per-collection entity counts of source and target.
type Verification struct {
	Status string       `json:"status"`
	Counts []CountCheck `json:"counts"`
	Error  string       `json:"error,omitempty"`
}

// CountCheck is one verified collection. Expected is min(source, cap).
type CountCheck struct {
	Collection string `json:"collection"`
	Source     int64  `json:"source"`
	Expected   int64  `json:"expected"`
	Target     int64  `json:"target"`
	Loaded     int64  `json:"loaded"`
}

// Outcome says whether the load loop ran to its end.
type Outcome struct {
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// GCStats are a JVM's collector figures over the run. Young and full pause counts
// are null when the source only gives a total (the harness's reader GC line).
// ShareOfWallPc is pause time over the window the source covers: the load for the
// harness's reader line, the JVM's uptime for a parsed GC log.
type GCStats struct {
	Collections   int64   `json:"collections"`
	YoungPauses   *int64  `json:"young_pauses"`
	FullPauses    *int64  `json:"full_pauses"`
	PauseNs       int64   `json:"pause_ns"`
	ShareOfWallPc float64 `json:"share_of_wall_pct"`
}

// Import records where an imported run came from and what the harness printed
// that the CSV cannot recompute or that the import checked against the CSV.
type Import struct {
	SourceDir        string `json:"source_dir"`
	HarnessExitCode  *int   `json:"harness_exit_code"` // what the harness itself exited with, if logged
	Locale           string `json:"locale"`            // number style seen: "dot-decimal" or "comma-decimal"
	ReaderUsedHeapGB string `json:"reader_used_heap_after_load,omitempty"`
}

// ExitCodeFor is the contract's mapping from outcome and verification to exit code.
func ExitCodeFor(outcome, verification string) int {
	if outcome != OutcomeComplete {
		return 1
	}
	switch verification {
	case Verified, VerifySkip:
		return 0
	case Unverified:
		return 2
	}
	return 1
}

// Fingerprint is a stable digest of per-collection source counts ("" when unknown).
func Fingerprint(counts map[string]int64) string {
	if len(counts) == 0 {
		return ""
	}
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s=%d\n", n, counts[n])
	}
	return "counts-sha256:" + hex.EncodeToString(h.Sum(nil))[:16]
}

// CollectionNames returns the manifest's collections in load order.
func (m *Manifest) CollectionNames() []string {
	out := make([]string, len(m.Collections))
	for i, c := range m.Collections {
		out[i] = c.Name
	}
	return out
}

// ReadManifest reads and validates a manifest file.
func ReadManifest(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseManifest(path, data)
}

// ParseManifest decodes and validates manifest bytes; path is used in errors only.
func ParseManifest(path string, data []byte) (*Manifest, error) {
	// The schema is checked first so that a future version fails with a clear message
	// rather than with whatever field it renamed.
	var head struct {
		Schema *string `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, parseError(strictjson.Locate(path, data, err))
	}
	if head.Schema == nil {
		return nil, perr(path, 1, "schema", "missing (not a warmstat manifest?)")
	}
	if *head.Schema != SchemaV1 {
		return nil, perr(path, lineOfKey(data, "schema"), "schema", "unknown schema version %q (this warmstat reads %q)", *head.Schema, SchemaV1)
	}
	var m Manifest
	if err := UnmarshalStrict(path, data, &m); err != nil {
		return nil, err
	}
	if err := m.validate(); err != nil {
		var fe *fieldErr
		if errors.As(err, &fe) {
			line := lineOfPath(data, fe.field)
			if line == 0 {
				line = lineOfKey(data, lastKey(fe.field))
			}
			return nil, perr(path, line, fe.field, "%s", fe.msg)
		}
		return nil, err
	}
	return &m, nil
}

// Validate checks the manifest's internal consistency (field names in errors are
// JSON paths).
func (m *Manifest) Validate() error { return m.validate() }

type fieldErr struct{ field, msg string }

func (e *fieldErr) Error() string { return "field " + e.field + ": " + e.msg }

func ferr(field, format string, args ...any) error {
	return &fieldErr{field: field, msg: fmt.Sprintf(format, args...)}
}

// validate checks every field and the rules between them, part by part.
func (m *Manifest) validate() error {
	// in the order a reader meets the fields: the first that is wrong is named
	for _, check := range []func() error{m.validateIdentity, m.validateConditions, m.validateCollections,
		m.validateGoLive, m.validateVerification, m.validateOutcome} {
		if err := check(); err != nil {
			return err
		}
	}
	return m.checkClocks()
}

// validateIdentity checks what the run is: its schema, id, build, loader, target mode,
// the heaps and machine, and the servers' builds.
func (m *Manifest) validateIdentity() error {
	if m.Schema != SchemaV1 {
		return ferr("schema", "unknown schema version %q", m.Schema)
	}
	if m.RunID == "" {
		return ferr("run_id", "empty")
	}
	if m.Build.Label == "" {
		return ferr("build.label", "empty")
	}
	if m.Loader.Name != LoaderWarmstat && m.Loader.Name != LoaderJavaHarness {
		return ferr("loader.name", "%q is neither %q nor %q", m.Loader.Name, LoaderWarmstat, LoaderJavaHarness)
	}
	if m.TargetMode != TargetRemote && m.TargetMode != TargetEmbedded {
		return ferr("target_mode", "%q is neither %q nor %q", m.TargetMode, TargetRemote, TargetEmbedded)
	}
	for name, p := range map[string]*int64{"server.max_heap_bytes": m.Server.MaxHeapBytes, "reader.max_heap_bytes": m.Reader.MaxHeapBytes,
		"machine.memory_bytes": m.Machine.MemoryBytes, "machine.cgroup_memory_limit_bytes": m.Machine.CgroupMemoryLimitBytes} {
		if p != nil && *p <= 0 {
			return ferr(name, "must be positive or null, got %d", *p)
		}
	}
	if m.Machine.Cores != nil && *m.Machine.Cores <= 0 {
		return ferr("machine.cores", "must be positive or null, got %d", *m.Machine.Cores)
	}
	for name, b := range map[string]*ServerBuild{"server.build": m.Server.Build, "reader.build": m.Reader.Build} {
		if b == nil {
			continue
		}
		switch b.Source {
		case ServerFromRelease, ServerFromClasspath, ServerFromJar, ServerFromCheckout:
		default:
			return ferr(name+".source", "%q is not one of release, classpath, server-jar, checkout", b.Source)
		}
		if (b.Source == ServerFromCheckout) != (b.Checkout != nil) {
			return ferr(name+".checkout", "required exactly when the source is checkout")
		}
	}
	return nil
}

// validateConditions checks the load's settings, the warm-up loads and the duet.
func (m *Manifest) validateConditions() error {
	if m.Conditions.BatchSize < 0 {
		return ferr("conditions.batch_size", "negative")
	}
	if m.Conditions.MaxPerCollection < 0 {
		return ferr("conditions.max_per_collection", "negative")
	}
	if m.Conditions.WarmUpLoads < 0 {
		return ferr("conditions.warm_up_loads", "negative")
	}
	if !slices.Contains(CatalogLines, m.Conditions.CatalogLine) {
		return ferr("conditions.catalog_line", "%q: known are \"2026.1\" or none", m.Conditions.CatalogLine)
	}
	// a run records every warm-up load it did, or it ended during them (then it has no
	// measured load, and fewer records than the condition says)
	if len(m.WarmUp) > m.Conditions.WarmUpLoads || m.Outcome.Status == OutcomeComplete && len(m.WarmUp) != m.Conditions.WarmUpLoads {
		return ferr("warm_up", "%d records for conditions.warm_up_loads %d", len(m.WarmUp), m.Conditions.WarmUpLoads)
	}
	if d := m.Duet; d != nil {
		switch {
		case d.Partner == "":
			return ferr("duet.partner", "required: a duet run names its partner run")
		case d.Slot != 1 && d.Slot != 2:
			return ferr("duet.slot", "%d: a duet has slots 1 and 2", d.Slot)
		case d.StartWaitNs < 0 || d.BatchWaitNs < 0 || d.BatchWaits < 0 || d.GoLiveWaitNs < 0:
			return ferr("duet", "negative wait")
		}
	}
	return nil
}

// validateCollections checks the dataset's fingerprint, the timings and the collections,
// whose entities add up to the run's.
func (m *Manifest) validateCollections() error {
	if m.Dataset.Fingerprint != Fingerprint(m.Dataset.SourceCounts) {
		return ferr("dataset.fingerprint", "%q does not match source_counts (expected %q)", m.Dataset.Fingerprint, Fingerprint(m.Dataset.SourceCounts))
	}
	if m.Entities < 0 {
		return ferr("entities", "negative")
	}
	t := m.Timings
	if t.ResolutionNs <= 0 {
		return ferr("timings.resolution_ns", "must be positive")
	}
	for name, v := range map[string]int64{"timings.load_wall_ns": t.LoadWallNs, "timings.upsert_ns": t.UpsertNs, "timings.source_read_ns": t.SourceReadNs} {
		if v < 0 {
			return ferr(name, "negative")
		}
	}
	seen := map[string]bool{}
	var sum int64
	for i, c := range m.Collections {
		f := fmt.Sprintf("collections[%d]", i)
		if c.Name == "" || strings.ContainsAny(c.Name, ",\"\r\n") {
			return ferr(f+".name", "%q is not a collection name", c.Name)
		}
		if seen[c.Name] {
			return ferr(f+".name", "collection %q listed twice", c.Name)
		}
		seen[c.Name] = true
		if c.Entities < 0 || c.WallNs < 0 || c.ReadNs < 0 || c.UpsertNs < 0 {
			return ferr(f, "negative count or duration in collection %q", c.Name)
		}
		sum += c.Entities
	}
	if sum != m.Entities {
		return ferr("entities", "%d, but the collections add up to %d", m.Entities, sum)
	}
	return nil
}

// validateGoLive checks goLive's record: a time when it ran, an error when it failed.
func (m *Manifest) validateGoLive() error {
	switch m.GoLive.Status {
	case GoLiveOK:
		if m.GoLive.Ns == nil || *m.GoLive.Ns < 0 {
			return ferr("golive.ns", "required (non-negative) when golive.status is ok")
		}
	case GoLiveFailed, GoLiveUnconfirmed:
		if m.GoLive.Ns == nil || *m.GoLive.Ns < 0 {
			return ferr("golive.ns", "required when golive.status is %s", m.GoLive.Status)
		}
		if m.GoLive.Error == "" {
			return ferr("golive.error", "required when golive.status is %s", m.GoLive.Status)
		}
	case GoLiveSkipped:
	default:
		return ferr("golive.status", "%q is not one of ok, failed, unconfirmed, skipped", m.GoLive.Status)
	}
	return nil
}

// validateVerification checks the verdict against its counts: every loaded collection
// counted, each expected count min(source, cap), and the status the counts imply.
func (m *Manifest) validateVerification() error {
	switch m.Verification.Status {
	case Verified, VerifySkip, Unverified, Mismatch:
	default:
		return ferr("verification.status", "%q is not one of verified, skipped, unverified, mismatch", m.Verification.Status)
	}
	if m.Verification.Status == Verified || m.Verification.Status == Mismatch {
		if len(m.Verification.Counts) == 0 {
			return ferr("verification.counts", "required when verification.status is %s", m.Verification.Status)
		}
		bad := 0
		counted := map[string]bool{}
		for i, c := range m.Verification.Counts {
			if want := expectedCount(c.Source, m.Conditions.MaxPerCollection); c.Expected != want {
				return ferr(fmt.Sprintf("verification.counts[%d].expected", i), "%d, but %s's source holds %d and the cap is %d: expected is min(source, cap) = %d",
					c.Expected, c.Collection, c.Source, m.Conditions.MaxPerCollection, want)
			}
			if c.Target != c.Expected {
				bad++
			}
			counted[c.Collection] = true
		}
		for _, c := range m.Collections { // a verdict covers every collection loaded
			if c.Entities > 0 && !counted[c.Name] {
				return ferr("verification.counts", "no count for %s, which the run loaded (%d entities), yet verification is %s", c.Name, c.Entities, m.Verification.Status)
			}
		}
		if m.Verification.Status == Verified && bad > 0 {
			return ferr("verification.status", "verified, but %d collection(s) have target != expected", bad)
		}
		if m.Verification.Status == Mismatch && bad == 0 {
			return ferr("verification.status", "mismatch, but every collection has target == expected")
		}
	}
	return nil
}

// validateOutcome checks the outcome, the source, the writer's profile and the exit
// code the outcome and verdict imply.
func (m *Manifest) validateOutcome() error {
	switch m.Outcome.Status {
	case OutcomeComplete, OutcomeAborted, OutcomeInterrupted, OutcomeFailed:
	default:
		return ferr("outcome.status", "%q is not one of complete, aborted, interrupted, failed", m.Outcome.Status)
	}
	if m.Source != nil {
		switch m.Source.Mode {
		case SourceLive:
		case SourceReplay:
			if len(m.Source.WorkloadSHA256) != 64 {
				return ferr("source.workload_sha256", "a replayed run names its workload's SHA-256 (64 hex digits), got %q", m.Source.WorkloadSHA256)
			}
		default:
			return ferr("source.mode", "%q is neither %q nor %q", m.Source.Mode, SourceLive, SourceReplay)
		}
	}
	if m.WriterProfile != nil {
		if err := m.WriterProfile.validate(); err != nil {
			return err
		}
	}
	if want := ExitCodeFor(m.Outcome.Status, m.Verification.Status); m.ExitCode != want {
		return ferr("exit_code", "%d, but outcome %s with verification %s means %d", m.ExitCode, m.Outcome.Status, m.Verification.Status, want)
	}
	return nil
}

// WriteManifest writes m (validated) as indented JSON.
func WriteManifest(path string, m *Manifest) error {
	if err := m.validate(); err != nil {
		return fmt.Errorf("%s: refusing to write an invalid manifest: %w", path, err)
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFileSync(path, append(data, '\n'))
}

// writeFileSync writes data to a temporary file beside path and renames it into place:
// a reader sees the old file or the whole new one, never half of it.
func writeFileSync(path string, data []byte) error {
	return WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFileAtomic writes a file through write into a temporary file in path's
// directory, syncs it and renames it over path. On any error path is untouched and
// no temporary file is left behind.
func WriteFileAtomic(path string, write func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = write(f); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// WriteJSONAtomic writes v to path as indented JSON, atomically (WriteFileAtomic):
// the state files of a series or a bisect, rewritten after every change.
func WriteJSONAtomic(path string, v any) error {
	return WriteFileAtomic(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	})
}

// ReadJSONStrict decodes the JSON file path into v by strictjson's rule (unknown
// fields, trailing data and truncation refused), with a *ParseError naming the file,
// line and field; false (and no error) when there is no file.
func ReadJSONStrict(path string, v any) (bool, error) {
	found, err := strictjson.ReadFile(path, v)
	return found, parseError(err)
}

// UnmarshalStrict is ReadJSONStrict of a file's bytes; path names them in errors.
func UnmarshalStrict(path string, data []byte, v any) error {
	return parseError(strictjson.Unmarshal(path, data, v))
}

// parseError gives strictjson's refusal this package's error type (and its text:
// "field F: ..."); other errors (the file could not be read) are left as they are.
func parseError(err error) error {
	var se *strictjson.Error
	if errors.As(err, &se) {
		return &ParseError{File: se.File, Line: se.Line, Field: se.Field, Msg: se.Msg}
	}
	return err
}

func lineAt(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

// lineOfKey finds the line of the first occurrence of "key": in data (0 if absent).
func lineOfKey(data []byte, key string) int {
	i := bytes.Index(data, []byte(`"`+key+`"`))
	if i < 0 {
		return 0
	}
	return lineAt(data, int64(i))
}

func lastKey(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		path = path[i+1:]
	}
	if i := strings.IndexByte(path, '['); i >= 0 {
		path = path[:i]
	}
	return path
}

// expectedCount is what a verified collection's target must hold: min(source, cap), cap 0 = none.
func expectedCount(source int64, maxPerCollection int) int64 {
	if maxPerCollection > 0 {
		return min(source, int64(maxPerCollection))
	}
	return source
}

// WarmUpLoad is one warm-up load: its load wall-clock and its goLive, outside the
// run's clocks, and the JIT's compile time over it (nil when unread): what the warm-up
// took off the measured load.
type WarmUpLoad struct {
	Entities     int64  `json:"entities"`
	LoadWallNs   int64  `json:"load_wall_ns"`
	GoLiveNs     int64  `json:"golive_ns"`
	JITCompileNs *int64 `json:"jit_compile_ns,omitempty"`
}

// VarianceFactors are what the JVMs and the machine did during the load window beside
// the measured work, read from /proc and the writer JVM's own counters at the window's
// two ends (outside every clock): where the writer's CPU went, its page faults and
// context switches, the CPU the hypervisor stole, the reader's CPU, the JIT's work.
// They explain a run that stands out; none of them is a clock of the load. A factor
// that could not be read is nil, and Error says why.
type VarianceFactors struct {
	// WriterCPUNs is the writer JVM's CPU by thread group: "request" (event loops and
	// request workers; the embedded writer's main thread), "jit" (compiler threads),
	// "gc" (GC workers and the VM thread), "other" (the rest, and threads that ended).
	WriterCPUNs map[string]int64 `json:"writer_cpu_ns,omitempty"`
	// page faults of the writer (major: read from disk) and its threads' context switches
	WriterMinorFaults         *int64 `json:"writer_minor_faults,omitempty"`
	WriterMajorFaults         *int64 `json:"writer_major_faults,omitempty"`
	WriterVoluntarySwitches   *int64 `json:"writer_voluntary_switches,omitempty"`
	WriterInvoluntarySwitches *int64 `json:"writer_involuntary_switches,omitempty"`
	// the JIT's compile time and compilations in the window (the writer JVM's counters)
	JITCompileNs *int64 `json:"jit_compile_ns,omitempty"`
	JITCompiles  *int64 `json:"jit_compiles,omitempty"`
	// the machine: CPU time stolen by the hypervisor, of all CPUs' time in the window
	StealNs      *int64 `json:"machine_steal_ns,omitempty"`
	MachineCPUNs *int64 `json:"machine_cpu_ns,omitempty"`
	// the reader JVM's CPU in the window (a live run; nil for a replay)
	ReaderCPUNs *int64 `json:"reader_cpu_ns,omitempty"`
	// WriterWaitNs is the run-queue delay of the writer's threads by group (the
	// kernel's schedstat): time they were ready to run and waited for a CPU
	WriterWaitNs map[string]int64 `json:"writer_wait_ns,omitempty"`
	// GCPauses and GCPauseNs are the writer's stop-the-world pauses that ended inside
	// the load window (its GC log)
	GCPauses  *int64 `json:"gc_pauses,omitempty"`
	GCPauseNs *int64 `json:"gc_pause_ns,omitempty"`
	// Canary is how fast the machine was during the window: the medians of a fixed
	// piece of work warmstat timed every 100 ms on a thread of its own (base/canary)
	Canary *Canary `json:"canary,omitempty"`
	// UpsertThread is the embedded writer's applying thread over the window: what its
	// upserts' cost columns add up to, read independently
	UpsertThread *ThreadTally `json:"upsert_thread,omitempty"`
	// CostNs is what reading them took, at both ends together
	CostNs int64  `json:"cost_ns"`
	Error  string `json:"error,omitempty"`
}

// Canary is the machine's speed over a load window: the medians, in ns of the canary
// thread's CPU, of three kinds of fixed work (base/canary), and how many samples.
type Canary struct {
	Samples int     `json:"samples"`
	ALUNs   float64 `json:"alu_ns"`
	L3Ns    float64 `json:"l3_ns"`
	DRAMNs  float64 `json:"dram_ns"`
}

// ThreadTally is one thread over the load window: the embedded writer's applying
// thread, whose upserts the cost columns of entities.csv measure one by one. Besides
// its upserts it parses requests and writes replies, so its figures are somewhat above
// the columns' sums.
type ThreadTally struct {
	TID        int   `json:"tid"`
	CPUNs      int64 `json:"cpu_ns"`      // its CPU clock, as the JVM reads it
	AllocBytes int64 `json:"alloc_bytes"` // its allocated bytes (the JVM's counter)
	// as the kernel's schedstat has it (nil: unknown): time on a CPU, and waiting for one
	SchedCPUNs *int64 `json:"sched_cpu_ns"`
	WaitNs     *int64 `json:"wait_ns"`
}

// UnknownText is a fact recorded as text that the producer may not know: JSON null when
// empty, never "" (the manifest's rule: what was not known is null, not a guess). A
// manifest written before this type existed, with "", reads the same.
type UnknownText string

// MarshalJSON writes null for an unknown (empty or blank) text.
func (t UnknownText) MarshalJSON() ([]byte, error) {
	if strings.TrimSpace(string(t)) == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(t))
}

// UnmarshalJSON reads a text or null (unknown).
func (t *UnknownText) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = ""
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*t = UnknownText(s)
	return nil
}
