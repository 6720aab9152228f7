// Package evita is warmstat's evitaDB gRPC client subset: our own .proto subset
// (evita/proto, generated code in evita/pb, `make proto`), connections and sessions,
// the EvitaQL queries the loader sends, schema replication (PlanReplication,
// CreateCatalog), the copy of a source entity as the upsert that recreates it (the
// Transcoder, which reads the fetched entity's bytes and writes the request's bytes,
// never decoding either), and goLive.
//
// Every call but goLive has a deadline (Options.CallTimeout); goLive is followed by its
// progress stream and given up only when it stalls, and its outcome (GoLiveOutcome) is
// ok only when the catalog is then read back ALIVE. UpsertUncancelled is the measured
// load's path: never cut in flight (WARM_UP has no rollback), sent over the session's
// own lean HTTP/2 connection (lean.go) by the calling goroutine, without allocation. A
// failed call is an *Error with the method, the gRPC code and the server's message;
// one ended by its context unwraps to the context's error. Everything here is tested
// against real evitaDB servers (internal/evitatest).
package evita
