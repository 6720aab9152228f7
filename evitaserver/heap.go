package evitaserver

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/warmstat/warmstat/runfmt"
)

// jcmd runs the JDK's jcmd against the server's JVM: the one beside its java binary,
// else jcmd on PATH.
func (s *Server) jcmd(ctx context.Context, args ...string) (string, error) {
	bin := "jcmd"
	if p, err := exec.LookPath(s.Java); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			if c := filepath.Join(filepath.Dir(r), "jcmd"); fileExists(c) {
				bin = c
			}
		}
	}
	out, err := exec.CommandContext(ctx, bin, append([]string{strconv.Itoa(s.Pid())}, args...)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("evitaserver: jcmd %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// LiveHeap forces a full collection in the server's JVM (jcmd GC.run: System.gc(), a
// full collection under the collectors a server runs with) and returns the heap still
// in use: what the data the server holds costs.
func (s *Server) LiveHeap(ctx context.Context) (int64, error) {
	if _, err := s.jcmd(ctx, "GC.run"); err != nil {
		return 0, err
	}
	out, err := s.jcmd(ctx, "GC.heap_info")
	if err != nil {
		return 0, err
	}
	return parseHeapInfo(out)
}

// parseHeapInfo sums the "used" figures of the heap lines of jcmd GC.heap_info (G1
// prints one, generational collectors one per generation), up to Metaspace.
func parseHeapInfo(out string) (int64, error) {
	var used int64
	found := false
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "Metaspace") {
			break
		}
		if !strings.Contains(line, " total ") {
			continue
		}
		_, rest, ok := strings.Cut(line, "used ")
		if !ok {
			continue
		}
		f := strings.FieldsFunc(rest, func(r rune) bool { return r == ' ' || r == ',' || r == '[' })
		if len(f) == 0 || !strings.HasSuffix(f[0], "K") {
			continue
		}
		k, err := strconv.ParseInt(strings.TrimSuffix(f[0], "K"), 10, 64)
		if err != nil {
			continue
		}
		used += k << 10
		found = true
	}
	if !found {
		return 0, fmt.Errorf("evitaserver: no heap figure in jcmd GC.heap_info output: %q", strings.TrimSpace(out))
	}
	return used, nil
}

// Heap sizing from production: its full catalog (386,369 entities, 12.87 GB live heap)
// loads into a 23 GiB writer heap. A catalog seeded at scale s is built to cost s of
// that, so it gets 23 GiB × s, plus 1 GiB for the server's own baseline and the
// headroom a small heap needs.
const (
	ProductionWriterHeap int64 = 23 << 30
	heapBase             int64 = 1 << 30
	heapStep             int64 = 256 << 20 // heaps are proposed in whole steps
)

// HeapForScale is the heap warmstat proposes for a server holding a catalog seeded at
// scale s: 23 GiB × s + 1 GiB, rounded up to a 256 MiB step.
func HeapForScale(s float64) int64 {
	return roundUp(int64(float64(ProductionWriterHeap)*s) + heapBase)
}

func roundUp(b int64) int64 { return (b + heapStep - 1) / heapStep * heapStep }

// ProductionLiveHeap is production's live set in that 23 GiB heap (8.1 GiB, from
// evitaDB's published WARM_UP profile): its heap is 2.84 times its live set.
const ProductionLiveHeap int64 = 8_697_308_774

// HeapAtProductionRatio is the heap that holds a catalog of the given live heap as
// production's holds its own (2.84 × live, in 256 MiB steps): the writer's GC then runs
// about as often, relative to the work, as production's. Measured on the default
// catalog at 0.1 (docs/measuring.md, "heaps"): against today's rule (3.5 GiB) it cut the
// writer's GC CPU by a fifth and the noise left once the machine's speed is set aside
// from 4.2 % to 1.7 % per run.
func HeapAtProductionRatio(live int64) int64 {
	return roundUp(int64(float64(live) * float64(ProductionWriterHeap) / float64(ProductionLiveHeap)))
}

// NeedHeap is the least heap warmstat lets a server hold a catalog of the given live
// heap with (1.5 × live + 256 MB, in 256 MiB steps). Measured on the seeded catalog at
// scale 0.05 (834 MB live when seeded, ~900 MB in the writer after the load): at this
// need, 1,536 MB, the load spent 6.0 % of its window in GC; at 1,152 MB 6.1 % with
// one full collection; at 1,024 MB it spiralled (41.6 %, 120 full collections).
func NeedHeap(live int64) int64 { return roundUp(live*3/2 + 256<<20) }

// HeapError is a heap below what a catalog needs.
type HeapError struct {
	Server string // which server: "writer", "reader", "seeding server"
	Heap   int64
	Need   int64
	Why    string // where the need comes from
}

func (e *HeapError) Error() string {
	return fmt.Sprintf("%s heap %s is below the %s this catalog needs (%s)", e.Server, fmtBytesExact(e.Heap), runfmt.FormatBytesAtLeast(e.Need), e.Why)
}
