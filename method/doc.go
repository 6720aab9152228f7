// Package method is how warmstat asks whether build B publishes faster than build A:
// the one home of that choice for every command that runs series (ab, bisect, a
// history's confirmation and bisect).
//
// The faithful method is the same for every source — warmstat's default catalog, a
// user's pristine snapshot or a workload file. The catalog is read once (a snapshot
// is extracted into the series' workload by build A's reader when the series starts)
// and replayed in every run of both sides by the embedded writer: the engine's write
// path alone, no transport, no reader beside the writer. The series is gated on the
// dominant collection's mean upsert with the machine's speed set aside (analyze's
// mean_adj) and watches what an upsert of it allocates (shown, not waited for). The
// writer's heap holds the catalog at production's ratio of heap to live set. The
// older way (a remote writer, a reader per run unless the catalog is replayed, gated
// on the plain mean and the whole run's ingest) is one option away.
//
// A caller fills Options (cmd/warmstat from its flags), calls Prepare, and gets a
// Method that identifies the two builds, renders the series' plan and turns it into
// a series.Config whose runs are ordinary spawn-mode loads. Method decides; it never
// prints a flag's name (cmd does) and computes no statistic (analyze does).
package method
