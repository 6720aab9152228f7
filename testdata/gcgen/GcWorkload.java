// GcWorkload makes a JDK produce every kind of G1 pause a writer's GC log holds:
// young pauses (churn), a concurrent cycle with Remark and Cleanup pauses (a live set
// above the initiating occupancy), and exactly FULL full pauses (System.gc()).
// Used by evitaserver's tests to check GC-log parsing against a real JVM's log.
// Usage: java -Xms64m -Xmx64m -XX:+UseG1GC -Xlog:gc*:file=gc.log:time,uptime,level,tags GcWorkload.java FULL
import java.util.ArrayList;
import java.util.List;

public class GcWorkload {
    public static void main(String[] args) {
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
}
