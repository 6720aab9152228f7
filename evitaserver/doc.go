// Package evitaserver runs real evitaDB servers as child JVMs and reads what they leave
// behind.
//
//   - Source: the server build and how to launch it — a release fetched by make evita,
//     an explicit classpath, a runnable server jar (java -jar), or an evitaDB checkout's
//     built jar — and Identify, which reads the version and build commit from the
//     server's own jar manifest, checksums its jars and refuses a classpath a server
//     cannot start from (a thin evita_server jar).
//   - Start / Stop / Kill / KillAll: a JVM with a pinned heap (-Xms = -Xmx), a GC log,
//     gRPC on a free loopback port in plaintext, readiness by a real call, its own
//     process group and death with warmstat; the heap is checked against the machine's
//     memory limit and reserved in a machine-wide ledger (ReservationDir) so that
//     warmstat processes never start more JVMs than the machine fits.
//   - Watch: a running server's faults while they happen — exit, OutOfMemoryError (with
//     its heap dump), GC-bound (from the growing GC log), not answering — as a *Fault
//     naming the server, its heap and what to change.
//   - ParseGCLog / ParseGCFiles: pause counts and times from -Xlog:gc*, each pause once.
//   - PrepareDataDir: the ownership rule — a directory is wiped only when it is absent,
//     empty, or carries warmstat's marker.
package evitaserver
