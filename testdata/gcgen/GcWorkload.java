// GcWorkload makes a JDK produce every kind of G1 pause a writer's GC log holds:
// young pauses (churn), a concurrent cycle with Remark and Cleanup pauses (a live set
// above the initiating occupancy), and exactly FULL full pauses (System.gc()).
// Used by evitaserver's tests to check GC-log parsing against a real JVM's log.
// Usage: java -Xms64m -Xmx64m -XX:+UseG1GC -Xlog:gc*:file=gc.log:time,uptime,level,tags GcWorkload.java FULL
//
// With "spiral SECONDS" it is instead a GC-bound JVM: it keeps a live set of ~70 % of
// its heap and allocates on for SECONDS, so that collections follow each other back to
// back (what an undersized evitaDB writer does), then exits.
//
// With "oom SECONDS" it runs out of memory once, survives the error (as a server whose
// request thread died does) and lives on idle for SECONDS.
import java.util.ArrayList;
import java.util.List;

public class GcWorkload {
    public static void main(String[] args) {
        if (args[0].equals("oom")) {
            oom(Long.parseLong(args[1]));
            return;
        }
        if (args[0].equals("spiral")) {
            spiral(Long.parseLong(args[1]));
            return;
        }
        int full = Integer.parseInt(args[0]);
        List<byte[]> live = new ArrayList<>();
        long sum = 0;
        for (int i = 0; i < 400_000; i++) {
            byte[] b = new byte[2048];
            b[i % b.length] = (byte) i;
            sum += b[0];
            if (i % 8 == 0 && live.size() < 18_000) live.add(b); // ~37 MB live: crosses the IHOP
        }
        for (int i = 0; i < full; i++) System.gc();
        System.out.println("done " + (sum + live.size()));
    }

    static void spiral(long seconds) {
        long max = Runtime.getRuntime().maxMemory();
        List<byte[]> live = new ArrayList<>();
        for (long held = 0; held < max * 7 / 10; held += 64 * 1024) live.add(new byte[64 * 1024]);
        long end = System.nanoTime() + seconds * 1_000_000_000L, sum = 0;
        int i = 0;
        while (System.nanoTime() < end) {
            byte[] b = new byte[32 * 1024]; // churn that finds almost no free heap
            sum += b[0];
            live.set(i++ % live.size(), new byte[64 * 1024]); // and the live set keeps moving
        }
        System.out.println("done " + (sum + live.size()));
    }

    static void oom(long seconds) {
        List<byte[]> live = new ArrayList<>();
        try {
            while (true) live.add(new byte[1024 * 1024]);
        } catch (OutOfMemoryError e) {
            int held = live.size();
            live = null; // the heap is free again: the JVM lives on
            System.out.println("survived after " + held + " MiB");
        }
        try {
            Thread.sleep(seconds * 1000);
        } catch (InterruptedException e) {
            return;
        }
    }
}
