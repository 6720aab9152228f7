package seed

import (
	"context"
	"fmt"
	"io"
	"time"

	baseprogress "github.com/warmstat/warmstat/base/progress"
	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evita/pb"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/workload"
)

// WriteWorkload writes the catalog a profile generates at a scale straight into a
// workload file, as extract would read it from a seeded server: the profile's schema,
// then every entity's upsert request, collection by collection in the profile's order.
// No server is involved, so what a workload is measured for (a shape, a replay) can be
// had of a generated catalog in seconds, and a catalog too large for a seeding server
// beside its writer (production size on one machine) needs only the writer. A stopped
// ctx removes what was written. Progress, if set, gets a line (\r-updated) every 2,000
// entities and at each collection's end.
func WriteWorkload(ctx context.Context, path, catalog string, p *Profile, scale float64, seed uint64, progress io.Writer) (workload.Info, error) {
	if err := p.Validate(); err != nil {
		return workload.Info{}, err
	}
	g := NewGenerator(p, scale, seed)
	cat, schemas := Schema(p)
	cat.Name = catalog
	counts := map[string]int64{}
	var order []string
	for _, c := range p.Collections {
		counts[c.Name] = int64(g.Count(c.Name))
		order = append(order, c.Name)
	}
	h := workload.Header{CreatedAt: time.Now().UTC(), Catalog: catalog, SourceMode: "generated", SourceCounts: counts,
		Fingerprint: runfmt.Fingerprint(counts), Collections: order, BatchSize: workload.DefaultBatchSize, SnapshotScale: &scale}
	est := LiveHeapAt(p, scale)
	share := evitaserver.ProductionShare(est.Entities)
	h.ProductionShare = &share
	if est.Measured { // an estimate no measurement backs proposes a heap (by the share), never refuses one
		h.LiveHeapEstimateBytes, h.LiveHeapEstimateSource = &est.Bytes, est.Source
	}
	w, err := workload.Create(path, h, cat, schemas)
	if err != nil {
		return workload.Info{}, err
	}
	byName := map[string]*pb.GrpcEntitySchema{}
	for _, s := range schemas {
		byName[s.GetName()] = s
	}
	var total, done int64
	for _, n := range counts {
		total += n
	}
	start := time.Now()
	for _, c := range p.Collections {
		begin := time.Now()
		if err := w.Begin(c.Name, counts[c.Name]); err != nil {
			w.Abort()
			return workload.Info{}, err
		}
		plan := evita.CopyPlan{Reflected: evita.ReflectedNames(byName[c.Name]), WithPrices: c.Prices != nil}
		for i := range g.Count(c.Name) {
			if err := ctx.Err(); err != nil {
				w.Abort()
				return workload.Info{}, err
			}
			e := g.Entity(c, i)
			req, err := evita.UpsertRequest(e, plan)
			if err != nil {
				w.Abort()
				return workload.Info{}, fmt.Errorf("%s #%d: %w", c.Name, i, err)
			}
			if err := w.Entity(e.GetPrimaryKey(), req); err != nil {
				w.Abort()
				return workload.Info{}, err
			}
			if done++; progress != nil && (done%2000 == 0 || i+1 == g.Count(c.Name)) {
				el := time.Since(start)
				fmt.Fprintf(progress, "\rgenerate %-20s %9d/%-9d  all %9d/%-9d  %8.0f entities/s  ETA %-8s", c.Name, i+1, g.Count(c.Name), done, total,
					float64(done)/el.Seconds(), baseprogress.ETA(done, total, el))
			}
		}
		if err := w.End(0, time.Since(begin).Nanoseconds()); err != nil {
			w.Abort()
			return workload.Info{}, err
		}
		if progress != nil { // a collection's line ends with it, as a load's does
			fmt.Fprintln(progress)
		}
	}
	if err := w.Close(); err != nil {
		return workload.Info{}, err
	}
	return workload.Verify(path)
}
