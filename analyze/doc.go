// Package analyze turns run directories into numbers, and is the only place in
// warmstat that computes a statistic: per-run latency summaries, the group figures
// of tables and plots, the comparison of two builds with its intervals and verdicts,
// the comparability contract and the refusals. report presents what it returns;
// nothing here talks to a server, and nothing here knows a command-line flag.
//
// The package is opinionated. It gives a number only where the data can carry it,
// and otherwise a stated reason (a refusal, an insufficient verdict, a run left out
// and why) instead of a confident figure from nothing.
//
// # The run is the unit
//
// A run is one load of one catalog by one build in one server lifetime. Its
// upserts share that lifetime's JIT decisions, heap layout, GC timing and cache
// state, so 100,000 upserts of one run are not 100,000 independent observations of
// the build: they are one. Resampling or pooling upserts across runs shrinks an
// interval like 1/sqrt(upserts) while the real uncertainty shrinks like 1/sqrt(runs),
// and calls differences between identical builds a third of the time or more at
// realistic 1-3 % run-to-run variation. So every statistic of a run (mean, median,
// p95, p99 upsert latency of a collection or of all; load wall-clock, ingest,
// upsert sum, goLive, TOTAL) is computed once per run, and only those per-run figures
// enter an interval. A run copied under another name is the same run: a group that
// holds one run twice, or the same run on both sides, is refused.
//
// # Log-scale Welch intervals
//
// Times are positive and their run-to-run noise is multiplicative, so figures are
// compared on the log scale. For one metric, with y = log(figure) per run, the
// change of B against A is d = mean(y_B) - mean(y_A), and its 95 % interval is Welch's
// d ± t(0.975, ν) * sqrt(s²_A/n_A + s²_B/n_B) with the Welch-Satterthwaite ν (never
// below min(n_A, n_B) - 1), reported as exp(·) - 1 in percent. A group's own figure is
// the geometric mean exp(mean(y)) with the one-sample interval exp(mean(y) ± t(0.975,
// n-1) * s/sqrt(n)), so a table row and a comparison rest on the same numbers. With 2
// runs t is 12.7 for one group and at least 4.3 for a change: honest intervals at
// small run counts are wide, which is the right answer, not a defect. The two
// bootstrap methods are available for study; they are anti-conservative below about
// 10 runs per build and are labelled so.
//
// # Threshold and verdict
//
// A verdict needs the whole interval beyond a noise threshold (2 % unless asked
// otherwise): slower when its lower end is above +threshold, faster when its upper
// end is below -threshold, unresolved otherwise. A metric with fewer than 2 runs on a
// side has figures but no interval ("insufficient"); so has one whose runs show no
// variation at all on either side, because a standard error of zero is unknown
// noise, not absent noise.
//
// # Clock resolution
//
// A manifest states how finely its clocks were read (timings.resolution_ns: 1 ns for
// warmstat's loader, 0.1 s for an imported Java report). A figure read from a clock
// of step r lies anywhere within ±r/2 of the true value, and a sum or difference of
// k such figures within ±k*r/2. That enters twice: each run's log variance gains the
// rounding variance k*(r/2)²/3/x², so a quantised clock never yields a zero standard
// error; and because rounding is not random when runs agree closer than a step, the
// interval is widened by the rounding bound itself, so a change smaller than the
// clock's step can never be proven. A figure not larger than its rounding bound
// ("0.0 s" at 0.1 s resolution) has no log and leaves its run out of that metric,
// which the result says.
//
// # What a comparison needs
//
// Both groups must agree on every recorded condition that changes the measurement
// (ContractFields): heaps, loader, target mode, storage and cache settings, batch
// size, caps, collection subset, prefetch, dataset, cores, memory limit; within a
// group also the build and the server version. Unknown against known is a
// difference. Anything else is refused with each differing field, its values and
// the runs that carry them, unless the caller allows the field, and then the result
// says it is not comparable. A failed run (exit 1) is never used; an unverified one
// (exit 2) only when asked. Every run left out, of the group or of one metric, is
// listed with its reason.
package analyze
