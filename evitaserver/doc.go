// Package evitaserver runs a real evitaDB server as a child JVM and reads what it
// leaves behind.
//
// Present now (usable and tested without an evitaDB artifact):
//   - ParseGCLog / ParseGCFiles: pause counts and pause time from a JDK -Xlog:gc* log,
//     counting each pause once (JDK 17 writes a [gc,start] and a [gc] line per pause);
//     a file that is not such a log is refused, never read as "0 pauses".
//   - Memory: the machine's memory and cgroup limit, and CheckHeapsFit, which refuses
//     heaps that do not fit the limit before any JVM starts.
//   - PrepareDataDir: the ownership rule — a data directory is wiped only when it is
//     absent, empty, or carries warmstat's marker file; anything else is refused and
//     left untouched.
//
// Pending (issue 3, blocked): fetching io.evitadb:evita_server through Maven, start
// with pinned heap and gRPC on a free loopback port, readiness by ServerStatus, and
// graceful-then-forced stop. The Maven registry reachable here serves no io.evitadb
// artifact, so none of that can run against a real server yet.
package evitaserver
