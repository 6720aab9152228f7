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
// loads into a 23 GiB writer heap. A catalog of n entities is a share n / 386,369 of
// production's size, so it gets 23 GiB × that share, plus 1 GiB for the server's own
// baseline and the headroom a small heap needs. The share is counted in entities, the
// catalog's own size: a seed --scale is a fraction of production only for the built-in
// profile, and of the shape's own catalog for a measured shape.
const (
	ProductionWriterHeap int64 = 23 << 30
	ProductionEntities   int64 = 386_369
	heapBase             int64 = 1 << 30
	heapStep             int64 = 256 << 20 // heaps are proposed in whole steps
)

// ProductionShare is a catalog of the given entities as a share of production's.
func ProductionShare(entities int64) float64 {
	return float64(entities) / float64(ProductionEntities)
}

// HeapForShare is the heap warmstat proposes for a server holding a catalog of the
// given share of production's size: 23 GiB × share + 1 GiB, rounded up to a 256 MiB
// step. A snapshot or workload of a warmstat before catalogs recorded their own size
// passes its seed scale here, as it always did.
func HeapForShare(share float64) int64 {
	return roundUp(int64(float64(ProductionWriterHeap)*share) + heapBase)
}

// The built-in catalog costs about liveBase + livePerShare × x + liveQuad × x² of live
// heap at x = its share of production's entities, a fit (weighted by 1/live, every
// point within 0.9 %) of five measurements: the seeding server's used heap after a full
// collection, catalog ALIVE, on evitaDB 2026.2.3 at scales 0.01, 0.02, 0.05 and 0.1
// (283, 415, 834 and 1,562 MiB; docs/seed.md), and the writer's at scale 1.0 on
// 2026.2.2, 19.40 GB (18,501 MiB) after the full collection its goLive ran into
// (docs/measuring.md, 2026-12-03). The small scales alone extrapolated linearly to
// 14.3 GiB at scale 1, a quarter too little: a scale-1.0 replay into the 21g heap that
// estimate allowed loaded, then died in goLive. Between 0.1 and 1.0 the curve is an
// interpolation, not a measurement. Production's catalog costs 12.87 GB at scale 1; an
// empty server about 50 MB.
const (
	liveBase     int64 = 145 << 20
	livePerShare int64 = 13_590 << 20
	liveQuad     int64 = 4_775 << 20
)

// BuiltInLiveHeap is the live heap the built-in catalog of the given entities holds
// (the fit above): the measured cost per entity every estimate starts from.
func BuiltInLiveHeap(entities int64) int64 {
	x := ProductionShare(entities)
	return liveBase + int64(float64(livePerShare)*x+float64(liveQuad)*x*x)
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
