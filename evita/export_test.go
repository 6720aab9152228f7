package evita

// BuildUpsertMessages is the message-level mapping the Transcoder replaced, for the
// benchmarks' before/after.
var BuildUpsertMessages = buildUpsert
