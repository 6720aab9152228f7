// Package profile is warmstat's writer profiles, both sides of the seam.
//
// Measuring: a Recorder starts the writer JVM with async-profiler loaded as an agent
// (cpu, alloc, wall, lock) or relies on the JDK's Flight Recorder (jfr), and opens
// one window per timed phase — the load, then goLive, which is another code path —
// through the JVM's dynamic attach protocol, spoken here directly so that no jcmd JVM
// competes with the server for a small machine's cores. A window is opened just
// before its clock starts and closed just after it stops; the time that takes is the
// run's measured control cost, outside every clock. After the run, with the writer
// stopped, each window's JFR recording becomes a flame graph (async-profiler's
// converter), folded stacks, and a pprof profile built here. The engine that actually
// sampled is read from the recording itself: async-profiler asks for perf events and
// falls back to a CPU timer where they are not permitted, and samples of different
// engines do not measure the same thing.
//
// Analysing (no server needed): TopFrames lists a run's hottest frames by phase, by
// self value (the frame's own code) and total value (with its callees). DiffGroups
// compares two builds: a group's frame value is the sum over its runs divided by the
// upserts over its runs — a pooled ratio, so runs of different length and groups of
// different size compare — and each frame's change is given as a share of the phase's
// whole change. Self values partition a phase, so their shares add up to 100 %;
// totals overlap. A diff carries no interval: it explains a change that compare has
// established, it does not establish one. Profiles of different profilers, modes,
// engines or intervals are refused.
//
// Frame names are normalised so that two JVMs' profiles line up: one method is one
// function however it was compiled, and generated names lose their per-JVM numbers.
package profile
