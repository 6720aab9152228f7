// HarnessFixture writes a synthetic Java-harness run (per-entity.csv + stdout.log)
// using the harness's own format strings and statistics definitions as recorded in
// shared/research/java-harness.md (CopyResult.format, LatencySamples, verification).
// It runs on a real JVM so that locale grouping and HALF_UP rounding are the JVM's,
// not a Go re-implementation's: the Go importer is tested against what Java prints.
//
// Usage: java HarnessFixture.java OUTDIR SCENARIO LOCALE SEED [SAMPLES.csv]
//   SCENARIO: ok | golive-failed | unverified | mismatch | capped-embedded
//   LOCALE:   a BCP 47 tag, e.g. en-US or cs-CZ
//   SAMPLES:  a per-entity CSV in the harness's own format (collection,primaryKey,
//             upsert_nanos) whose collections, keys and upsert times are reported
//             instead of generated ones: a harness run of a catalog that exists
// Everything here is SYNTHETIC test data (with SAMPLES, the clocks around them are).
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;

public class HarnessFixture {
    static final String EQ = "=".repeat(72), DASH = "-".repeat(72);

    record Coll(String name, int n, long meanNanos, double spread) {}

    public static void main(String[] a) throws Exception {
        Path out = Paths.get(a[0]);
        String scenario = a[1];
        Locale.setDefault(Locale.forLanguageTag(a[2]));
        Random rnd = new Random(Long.parseLong(a[3]));
        Files.createDirectories(out);
        boolean embedded = scenario.equals("capped-embedded");
        boolean big = a[2].startsWith("cs");
        Map<String, List<long[]>> given = a.length > 4 ? readSamples(Paths.get(a[4])) : null; // name -> {pk, nanos}
        List<Coll> colls = given != null
            ? given.entrySet().stream().map(e -> new Coll(e.getKey(), e.getValue().size(),
                    (long) e.getValue().stream().mapToLong(x -> x[1]).average().orElse(0), 0)).toList()
            : big
            ? List.of(new Coll("Brand", 40, 900_000L, 0.4), new Coll("Category", 180, 40_000_000L, 0.6),
                      new Coll("Product", 1_500, 800_000_000L, 0.5), new Coll("Tag", 60, 700_000L, 1.2))
            : List.of(new Coll("Category", 200, 37_000_000L, 0.6), new Coll("Product", 1_000, 52_000_000L, 0.5),
                      new Coll("Tag", 34, 650_000L, 1.5), new Coll("parameterValue", 15, 2_000_000L, 0.3));
        int cap = embedded ? 150 : 0;
        int batch = embedded ? 100 : 1000;
        StringBuilder csv = new StringBuilder("collection,primaryKey,upsert_nanos\n");
        StringBuilder log = new StringBuilder();
        List<Long> all = new ArrayList<>();
        Map<String, long[]> stats = new LinkedHashMap<>(); // name -> {n, wall, read, upsert}
        Map<String, List<Long>> per = new LinkedHashMap<>();
        long loadWall = 0, readSum = 0;
        TreeSet<String> order = new TreeSet<>();
        for (Coll c : colls) order.add(c.name());
        log.append("10:00:00.001 INFO  i.e.p.w.IsolatedWarmupLoadBenchmark - Source catalog `catalog` has ")
           .append(colls.size()).append(" collections: ").append(order).append("\n");
        for (String name : order) {
            Coll c = colls.stream().filter(x -> x.name().equals(name)).findFirst().orElseThrow();
            int n = cap > 0 ? Math.min(cap, c.n()) : c.n();
            List<Long> s = new ArrayList<>();
            long upsert = 0, read = 0;
            int pk = 1;
            for (int i = 0; i < n; i++) {
                if (i % batch == 0) read += (long) (c.meanNanos() * 0.08 * Math.min(batch, n - i) * (0.8 + 0.4 * rnd.nextDouble()));
                long v;
                if (given != null) {
                    long[] g = given.get(name).get(i);
                    pk = (int) g[0];
                    v = g[1];
                } else {
                    v = Math.max(1000L, (long) (c.meanNanos() * Math.exp(c.spread() * rnd.nextGaussian() - c.spread() * c.spread() / 2)));
                    pk += 1 + rnd.nextInt(3);
                }
                s.add(v); all.add(v); upsert += v;
                csv.append(name).append(',').append(pk).append(',').append(v).append('\n');
            }
            long wall = upsert + read + n * 15_000L;
            loadWall += wall + 2_000_000L;
            readSum += read;
            stats.put(name, new long[]{n, wall, read, upsert});
            per.put(name, s);
            long[] ls = summarize(s);
            log.append(String.format("10:%02d:00.000 INFO  i.e.p.w.IsolatedWarmupLoadBenchmark -   loaded %,10d %-20s in %s - upsert mean %,.1f us, median %,.1f us | cumulative %,d entities, %s%n",
                    (int) (loadWall / 60_000_000_000L) % 60, n, name, formatDuration(wall), ls[1] / 1000.0, ls[2] / 1000.0, all.size(), formatDuration(loadWall)));
        }
        long upsertSum = all.stream().mapToLong(Long::longValue).sum();
        boolean goLiveFailed = scenario.equals("golive-failed");
        long goLive = goLiveFailed ? 15_007_000_000L : 30_100_000_000L + rnd.nextInt(1_000_000_000);
        long[] o = summarize(all);
        int total = all.size();

        StringBuilder r = new StringBuilder();
        r.append(EQ).append('\n').append("     SINGLE-THREADED WARM_UP BULK LOAD - RESULT\n").append(EQ).append('\n');
        r.append(String.format("%-24s: %s (embedded, this JVM)%n", "source catalog", "catalog"));
        r.append(String.format("%-24s: %s (%s)%n", "target catalog", embedded ? "catalog_warmup" : "catalog",
                embedded ? "embedded, this JVM" : "remote server localhost:5555 over gRPC"));
        r.append(String.format("%-24s: %,d%n", "entities upserted", total));
        r.append(String.format("%-24s: %,d%n", "read batch size", batch));
        r.append(String.format("%-24s: max %.1f GiB, used after load %.1f GiB%n", "reader JVM heap", 14.0, 5.25));
        r.append(DASH).append('\n');
        r.append(String.format("%-24s: %s%n", "load wall-clock", dws(loadWall)));
        r.append(String.format("%-24s: %s  %.1f%% of wall%n", "  upsert (pure)", dws(upsertSum), pct(upsertSum, loadWall)));
        r.append(String.format("%-24s: %s  %.1f%% of wall%n", "  source read", dws(readSum), pct(readSum, loadWall)));
        r.append(String.format("%-24s: %s%s%n", "goLive -> ALIVE", dws(goLive), goLiveFailed ? "   *** CLIENT-SIDE FAILURE (see below) ***" : ""));
        r.append(String.format("%-24s: %s%n", "TOTAL (load + goLive)", dws(loadWall + goLive)));
        if (goLiveFailed) {
            r.append("  !! goLive failed CLIENT-side: StatusRuntimeException: DEADLINE_EXCEEDED: deadline exceeded after 14.999s.\n")
             .append("[closed=[], open=[[remote_addr=localhost/127.0.0.1:5555]]]\n");
            r.append("  !! the load figures above are unaffected; check the SERVER log for\n");
            r.append("  !! `is now alive!` - the transition may have completed regardless.\n");
        }
        r.append(DASH).append('\n');
        r.append(String.format("%-24s: %,10.1f upserts/s%n", "throughput (pure upsert)", ratio(total, upsertSum)));
        r.append(String.format("%-24s: %,10.1f entities/s%n", "throughput (wall-clock)", ratio(total, loadWall)));
        r.append(DASH).append('\n');
        r.append("per-upsert latency (microseconds)\n");
        r.append(String.format("  %10s %10s %10s %10s %10s %10s%n", "mean", "median", "p95", "p99", "min", "max"));
        r.append(String.format("  %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f%n", o[1] / 1000.0, o[2] / 1000.0, o[3] / 1000.0, o[4] / 1000.0, o[5] / 1000.0, o[6] / 1000.0));
        if (!embedded) {
            r.append("  NOTE: remote mode - these include protobuf serialization, the loopback round trip and\n");
            r.append("  server-side deframing. This is end-to-end ingestion latency, NOT write-path latency.\n");
            r.append("  Run the same load with -Devita.warmup.targetMode=embedded to quantify the difference.\n");
        }
        r.append(DASH).append('\n');
        double gcShare = embedded ? 17.34 : 1.7;
        r.append(String.format("%-24s: %,d collections, %,.1f s (%.1f%% of load wall-clock)%n", "reader JVM GC", 1056, gcShare * loadWall / 1e11, gcShare));
        if (!embedded) {
            r.append("  (the WRITER's GC is what matters - read it from the server's own GC log)\n");
        } else {
            r.append(String.format("  !! WARNING: GC consumed %.1f%% of the measured window. This run describes the%n", gcShare));
            r.append("  !! collector more than it describes the write path - raise -Xmx and re-measure\n");
            r.append("  !! before drawing any conclusion from the numbers above.\n");
        }
        r.append(DASH).append('\n');
        r.append("per-collection breakdown (slowest first)\n");
        r.append(String.format("%-22s %12s %9s %9s %9s %10s %10s %10s %7s%n", "collection", "entities", "wall s", "read s", "upsert s", "mean us", "med us", "p99 us", "%wall"));
        List<String> byWall = new ArrayList<>(order);
        byWall.sort((x, y) -> Long.compare(stats.get(y)[1], stats.get(x)[1])); // stable
        for (String name : byWall) {
            long[] st = stats.get(name);
            long[] ls = summarize(per.get(name));
            r.append(String.format("%-22s %,12d %9.1f %9.1f %9.1f %10.1f %10.1f %10.1f %6.1f%%%n", name, st[0], st[1] / 1e9, st[2] / 1e9, st[3] / 1e9,
                    ls[1] / 1000.0, ls[2] / 1000.0, ls[4] / 1000.0, pct(st[1], loadWall)));
        }
        r.append(EQ).append('\n');
        log.append(r).append('\n');
        log.append("10:30:00.000 INFO  i.e.p.w.IsolatedWarmupLoadBenchmark - Per-entity upsert CSV written to `/var/tmp/evita-warmup-bench/runs/x/per-entity.csv`.\n");
        if (goLiveFailed) {
            log.append("10:30:00.001 ERROR i.e.p.w.IsolatedWarmupLoadBenchmark - goLiveAndClose() failed - load completed, so results are still reported.\n");
        }
        int exit = 0;
        switch (scenario) {
            case "unverified" -> {
                log.append("10:30:01.000 ERROR i.e.p.w.IsolatedWarmupLoadBenchmark - Post-copy verification could not run - the load figures above stand, but the target entity counts are UNVERIFIED for this run (exit code 2). This is not a count mismatch: a mismatch fails the run instead.\n");
                log.append("io.grpc.StatusRuntimeException: UNAVAILABLE: io exception\n\tat io.grpc.stub.ClientCalls.toStatusRuntimeException(ClientCalls.java:268)\n");
                exit = 2;
            }
            default -> {
                log.append(String.format("%-22s %12s %12s %12s%n", "collection", "source", "target", "loaded"));
                List<String> bad = new ArrayList<>();
                for (String name : order) {
                    Coll c = colls.stream().filter(x -> x.name().equals(name)).findFirst().orElseThrow();
                    long loaded = stats.get(name)[0];
                    long target = loaded;
                    if (scenario.equals("mismatch") && name.equals("Product")) target = loaded - 7;
                    long expected = cap > 0 ? Math.min(c.n(), cap) : c.n();
                    log.append(String.format("%-22s %12d %12d %12d%n", name, c.n(), target, loaded));
                    if (target != expected) bad.add(String.format("  %s: expected %d (source=%d), target=%d, loaded=%d", name, expected, c.n(), target, loaded));
                }
                if (!bad.isEmpty()) {
                    log.append("Exception in thread \"main\" io.evitadb.performance.warmupload.LoadVerificationFailedException: Load verification FAILED - entity counts differ:\n");
                    for (String b : bad) log.append(b).append('\n');
                    log.append("\tat io.evitadb.performance.warmupload.IsolatedWarmupLoadBenchmark.verify(IsolatedWarmupLoadBenchmark.java:912)\n");
                    exit = 1;
                } else if (cap > 0) {
                    log.append("Load verified: target matches min(source, cap) for every loaded collection.\n");
                } else {
                    log.append("Load verified: target entity counts match the source exactly for every loaded collection.\n");
                }
            }
        }
        log.append("exit status: ").append(exit).append('\n');
        log.append("artifacts in /var/tmp/evita-warmup-bench/runs/x:\n");
        Files.writeString(out.resolve("per-entity.csv"), csv, StandardCharsets.UTF_8);
        Files.writeString(out.resolve("stdout.log"), log, StandardCharsets.UTF_8);
    }

    static Map<String, List<long[]>> readSamples(Path p) throws IOException {
        Map<String, List<long[]>> m = new LinkedHashMap<>();
        List<String> lines = Files.readAllLines(p, StandardCharsets.UTF_8);
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",");
            m.computeIfAbsent(f[0], k -> new ArrayList<>()).add(new long[]{Long.parseLong(f[1]), Long.parseLong(f[2])});
        }
        return m;
    }

    // LatencySamples.summarize: {n, mean(trunc), p50, p95, p99, min, max}
    static long[] summarize(List<Long> s) {
        long[] v = s.stream().mapToLong(Long::longValue).sorted().toArray();
        int n = v.length;
        if (n == 0) return new long[7];
        long sum = 0;
        for (long x : v) sum += x;
        return new long[]{n, sum / n, pick(v, 50), pick(v, 95), pick(v, 99), v[0], v[n - 1]};
    }

    static long pick(long[] v, int p) { return v[Math.min(v.length - 1, (int) Math.floor(p * (double) v.length / 100))]; }

    static double pct(long part, long whole) { return whole == 0 ? 0.0 : 100.0 * part / whole; }

    static double ratio(long n, long nanos) { return nanos == 0 ? 0.0 : n * 1e9 / nanos; }

    static String dws(long nanos) {
        long secs = Math.round(nanos / 1e9);
        return String.format("%d:%02d:%02d  (%,.1f s)", secs / 3600, (secs / 60) % 60, secs % 60, nanos / 1e9);
    }

    static String formatDuration(long nanos) {
        double s = nanos / 1e9;
        if (s < 60) return String.format("%,.1f s", s);
        long secs = Math.round(s);
        return String.format("%d:%02d:%02d", secs / 3600, (secs / 60) % 60, secs % 60);
    }
}
