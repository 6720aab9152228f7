// Package runfmt is the run-directory contract: the one seam between the parts of
// warmstat that measure (the loader, the Java-harness import) and the parts that
// analyze (report, compare, table). Nothing here knows about evitaDB or statistics.
//
// # Layout
//
// A run directory holds
//
//	manifest.json   conditions and aggregate timings of one run (schema "warmstat.run/v1")
//	entities.csv    one row per completed upsert, in upsert order
//	harness-stdout.log  (imported runs only) the Java loader's stdout, kept for provenance
//
// # manifest.json
//
// The manifest is the single source of truth about the conditions under which a run
// was measured. Every field that can change a measurement is recorded (heaps, build,
// server version, storage.compress, cache, traffic recording, target mode, batch size,
// per-collection cap, collection subset, dataset fingerprint, machine). A fact the
// producer could not know is JSON null, never a guess: heaps known neither from flags
// nor from the log, the start time of an imported run, the machine of an imported run.
//
// Durations are integer nanoseconds (suffix _ns). timings.resolution_ns says how
// precise the aggregate timings are: 1 for warmstat's own loader, 100,000,000 for an
// imported Java report (it prints 0.1 s).
//
// Outcome and exit code follow one rule: verified or deliberately skipped = 0,
// unverified (counts unknown) = 2, failed (counts differ, or the run aborted, was
// interrupted — in any phase: the load, goLive or verification — or failed after the
// load: its pristine snapshot changed) = 1. Reading a manifest whose exit_code
// disagrees with its verification and outcome is an error.
//
// A manifest is written once, complete: the loader finishes everything it records
// (the writer's GC log, its profile, the snapshot's proof) in a hidden staging
// directory and only then moves the run into place, so a manifest at a run's path
// is never rewritten and never lacks what the run measured.
//
// # entities.csv
//
// Plain CSV, comma separated, LF line ends, no quoting (collection names are
// evitaDB identifiers and may contain neither ',' nor '"' nor a line break; the
// writer refuses them). The first line is the header; columns are found by name,
// so their order is free. Columns:
//
//	seq          1-based position of the upsert in the whole run (upsert order)      optional
//	collection   entity type                                                         required
//	primary_key  entity primary key (int32)                                          required
//	batch        1-based number of the source-read batch the entity came from,
//	             counted across the whole run; every batch has one timed read        optional
//	start_ns     when the upsert call started, ns since the load clock started;
//	             empty when unknown (imported runs)                                  optional
//	upsert_ns    duration of exactly one upsert call, ns                             required
//
// The Java harness's own header (collection,primaryKey,upsert_nanos) is accepted by
// the reader too, so the import reads the harness CSV with the same validating code.
//
// Rows are handed to the OS every 100 ms and at the end of each collection: a crash of
// the loader loses at most the last 100 ms of rows. Reader and writer are streaming and use constant memory.
//
// Every reading error is one line naming file, line and field, e.g.
//
//	run/entities.csv:1042: field upsert_ns: "12x" is not a non-negative integer
package runfmt
