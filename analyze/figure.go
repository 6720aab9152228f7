package analyze

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/warmstat/warmstat/runfmt"
	"gonum.org/v1/gonum/stat/distuv"
)

// Metric names one figure of a run; every metric is a cost, higher is slower. The
// names are those of the JSON outputs and of gates ("Product/mean", "*/ingest"):
//
//	mean median p95 p99   upsert latency of a collection, or of all ("*"), in µs
//	cpu                   the mean upsert's CPU time on the writer's applying thread, in
//	                      µs (the embedded writer measures it; entities.csv's cost
//	                      columns)
//	alloc                 the mean upsert's bytes allocated by that thread, in KB
//	wall                  a collection's wall-clock, in s
//	load_wall ingest upsert source_read golive total
//	                      the run's clocks (collection "*" only), in s; ingest is
//	                      load_wall - source_read, upsert the sum of the upserts,
//	                      total load_wall + golive (only when goLive completed)
//	machine               the machine's speed during the load (collection "*" only):
//	                      the canary's fixed work, in µs (runfmt.Canary); higher is
//	                      a slower machine
//	mean_adj cpu_adj load_wall_adj ingest_adj
//	                      the figure with the machine's speed set aside: a regression
//	                      adjustment on the canary (see adjust.go)
type Metric string

const (
	metricMean       Metric = "mean"
	metricMedian     Metric = "median"
	metricP95        Metric = "p95"
	metricP99        Metric = "p99"
	metricWall       Metric = "wall"
	metricLoadWall   Metric = "load_wall"
	metricIngest     Metric = "ingest"
	metricUpsert     Metric = "upsert"
	metricSourceRead Metric = "source_read"
	metricGoLive     Metric = "golive"
	metricTotal      Metric = "total"
	metricCPU        Metric = "cpu"
	metricAlloc      Metric = "alloc"
	metricMachine    Metric = "machine"
	metricMeanAdj    Metric = "mean_adj"
	metricCPUAdj     Metric = "cpu_adj"
	metricLoadAdj    Metric = "load_wall_adj"
	metricIngestAdj  Metric = "ingest_adj"
)

// Overall is the collection name of whole-run figures.
const Overall = "*"

var (
	latencyMetrics = []Metric{metricMean, metricMedian, metricP95, metricP99}
	// what an upsert's wall time was made of (the cost columns), per collection; its
	// wait for a CPU is in the report and the noise decomposition, not compared: a
	// collection's mean wait is often exactly 0, which has no place on a log scale
	costMetrics = []Metric{metricCPU, metricAlloc}
	// compared run clocks, in the order a comparison shows them
	clockMetrics = []Metric{metricLoadWall, metricIngest, metricUpsert, metricGoLive, metricTotal}
	runMetrics   = []Metric{metricLoadWall, metricIngest, metricUpsert, metricSourceRead, metricGoLive, metricTotal}
	// the adjusted figures, and what each adjusts
	adjusted = map[Metric]Metric{metricMeanAdj: metricMean, metricCPUAdj: metricCPU, metricLoadAdj: metricLoadWall, metricIngestAdj: metricIngest}
)

// collectionMetrics are the metrics a comparison has for each collection (and for the
// whole run), in the order it shows them.
func collectionMetrics() []Metric {
	return append(append(slices.Clone(latencyMetrics), costMetrics...), metricMeanAdj, metricCPUAdj)
}

// wholeRunMetrics are the metrics a comparison has for the whole run alone, in order.
func wholeRunMetrics() []Metric {
	return append(slices.Clone(clockMetrics), metricLoadAdj, metricIngestAdj, metricMachine)
}

// unit is what a metric's figures are shown in, and its scale from ns (bytes for alloc).
func (m Metric) unit() (string, float64) {
	if b, ok := adjusted[m]; ok {
		return b.unit()
	}
	switch {
	case m == metricAlloc:
		return "KB", 1e3
	case slices.Contains(latencyMetrics, m), slices.Contains(costMetrics, m), m == metricMachine:
		return "us", 1e3
	}
	return "s", 1e9
}

func (m Metric) valid(coll string) bool {
	if coll == Overall {
		return slices.Contains(collectionMetrics(), m) || slices.Contains(runMetrics, m) || slices.Contains(wholeRunMetrics(), m)
	}
	return slices.Contains(collectionMetrics(), m) || m == metricWall
}

// allMetricNames are every metric's name: those of each collection, then those of the
// whole run alone ("*"), for help and errors.
func allMetricNames() (collection, wholeRun []string) {
	for _, m := range collectionMetrics() {
		collection = append(collection, string(m))
	}
	for _, m := range wholeRunMetrics() {
		wholeRun = append(wholeRun, string(m))
	}
	return collection, wholeRun
}

// figure is one run's value of one metric, or why it has none.
type figure struct {
	ns     float64
	half   float64 // half the clock's step: each clock read lies within ±half of the truth
	clocks int     // how many rounded clock reads the figure adds up
	why    string  // non-empty: the run has no figure for this metric
}

// bound is how far the figure may lie from the truth by rounding alone.
func (f figure) bound() float64 { return float64(f.clocks) * f.half }

// figureOf extracts one metric of one run. A figure that is not larger than its
// rounding bound has no logarithm and no place in an interval: the run is left out of
// that metric, with the reason.
func figureOf(s *RunSummary, coll string, m Metric) figure {
	man := s.Run.Manifest
	t := man.Timings
	f := figure{}
	if t.ResolutionNs > 1 {
		f.half = float64(t.ResolutionNs) / 2
	}
	clock := func(ns int64, clocks int, what string) figure {
		f.ns, f.clocks = float64(ns), clocks
		if f.ns <= f.bound() {
			if f.half == 0 {
				f.why = what + " is 0 ns"
			} else {
				f.why = fmt.Sprintf("%s %s is within the clock's rounding (resolution %s)", what, runfmt.Duration(ns), runfmt.Duration(t.ResolutionNs))
			}
		}
		return f
	}
	if _, ok := adjusted[m]; ok {
		return figure{why: "an adjusted figure is a comparison's (its runs' machine speeds set aside together), not one run's"}
	}
	if slices.Contains(costMetrics, m) {
		return costFigure(s, coll, m)
	}
	if coll == Overall {
		switch m {
		case metricMachine:
			x, why := machineOf(man)
			return figure{ns: x, why: why}
		case metricLoadWall:
			return clock(t.LoadWallNs, 1, "the load wall-clock")
		case metricIngest:
			if s.NoIngest != "" {
				return figure{why: s.NoIngest}
			}
			return clock(s.IngestNs, 2, "ingest (load - source read)")
		case metricSourceRead:
			return clock(t.SourceReadNs, 1, "the source read")
		case metricUpsert: // the exact sum of the CSV's upserts
			f.half = 0
			return clock(s.Overall.SumNs, 0, "the upsert sum")
		case metricGoLive, metricTotal:
			g := man.GoLive
			switch {
			case g.Status == runfmt.GoLiveFailed:
				return figure{why: "goLive failed (its figure is time to failure, not a transition)"}
			case g.Status != runfmt.GoLiveOK || g.Ns == nil:
				return figure{why: "goLive was " + g.Status}
			case m == metricGoLive:
				return clock(*g.Ns, 1, "goLive")
			}
			return clock(*s.TotalNs, 2, "TOTAL")
		}
		return latency(s.Overall, "the run", m)
	}
	for _, c := range s.Collections {
		if c.Name != coll {
			continue
		}
		if m == metricWall {
			return clock(c.WallNs, 1, "the wall-clock of "+strconv.Quote(coll))
		}
		return latency(c.Stats, strconv.Quote(coll), m)
	}
	return figure{why: "no collection " + strconv.Quote(coll)}
}

// costFigure is a collection's (or the run's) mean upsert cost: its CPU, its wait for
// a CPU or its allocated bytes, which only a run with entities.csv's cost columns has.
func costFigure(s *RunSummary, coll string, m Metric) figure {
	c := s.Cost
	of := "the run"
	if coll != Overall {
		c, of = nil, strconv.Quote(coll)
		for _, cs := range s.Collections {
			if cs.Name == coll {
				c = cs.Cost
			}
		}
	}
	if c == nil {
		return figure{why: "no per-upsert cost: the run's entities.csv has no " + costColumn[m] + " column (a remote writer, or a run from before warmstat measured it)"}
	}
	v := map[Metric]float64{metricCPU: c.CPUMeanNs, metricAlloc: c.AllocMeanBytes}[m]
	switch {
	case v < 0:
		return figure{why: fmt.Sprintf("some upserts of %s have an empty %s field (not measured)", of, costColumn[m])}
	case v == 0:
		return figure{why: fmt.Sprintf("the mean upsert's %s of %s is 0", m, of)}
	}
	return figure{ns: v}
}

var costColumn = map[Metric]string{metricCPU: runfmt.ColCPUNs, metricAlloc: runfmt.ColAllocBytes}

// latency is one latency statistic; per-upsert times are whole nanoseconds.
func latency(st Stats, of string, m Metric) figure {
	if st.Count == 0 {
		return figure{why: "no upserts of " + of}
	}
	v := map[Metric]float64{metricMean: st.MeanNs, metricMedian: st.MedianNs, metricP95: st.P95Ns, metricP99: st.P99Ns}[m]
	if v <= 0 {
		return figure{why: fmt.Sprintf("the %s upsert of %s is 0 ns", m, of)}
	}
	return figure{ns: v}
}

// side is one group's figures of one metric, on the log scale.
type side struct {
	y    []float64 // log figure of every run that has one
	at   []int     // those runs' positions in the group
	u2   float64   // mean rounding variance of the log figures
	bias float64   // mean rounding bound of the log figures
	out  []RunNote // runs without a figure, and why
}

func gather(group string, runs []*RunSummary, coll string, m Metric) side {
	var s side
	for i, r := range runs {
		f := figureOf(r, coll, m)
		if f.why != "" {
			s.out = append(s.out, RunNote{Group: group, Run: r.Run.Dir, Rows: []string{coll + "/" + string(m)}, Reason: f.why})
			continue
		}
		s.y = append(s.y, math.Log(f.ns))
		s.at = append(s.at, i)
		if b := f.bound(); b > 0 {
			s.bias += -math.Log1p(-b / f.ns)
			s.u2 += float64(f.clocks) * f.half * f.half / 3 / (f.ns * f.ns)
		}
	}
	if n := float64(len(s.y)); n > 0 {
		s.bias /= n
		s.u2 /= n
	}
	return s
}

func (s side) n() int { return len(s.y) }

func (s side) mean() float64 { return mean(s.y) }

// same reports whether every run has exactly the same figure. (Their variance is not
// the test: the mean of three equal logarithms need not equal them to the last bit.)
func (s side) same() bool {
	for _, y := range s.y[1:] {
		if y != s.y[0] {
			return false
		}
	}
	return true
}

// se2 is the squared standard error of the mean log figure: the runs' own variance
// plus what rounding hides.
func (s side) se2() float64 { return (variance(s.y) + s.u2) / float64(s.n()) }

// GeoMean is the geometric mean of positive figures (times: the mean of their logs, as
// every interval here is taken), 0 for none.
func GeoMean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range v {
		sum += math.Log(x)
	}
	return math.Exp(sum / float64(len(v)))
}

func mean(v []float64) float64 {
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	return sum / float64(len(v))
}

func variance(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	m := mean(v)
	s := 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return s / float64(len(v)-1)
}

func t975(df float64) float64 { return tq(df, 0.95) }

// tq is the two-sided Student t critical value of a confidence level.
func tq(df, level float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - (1-level)/2)
}

// noSpread is why a metric whose runs all agree exactly gets no interval.
const noSpread = "every run has the same figure: the run-to-run noise is unknown, not zero, so there is no interval"

// Estimate is a group's figure of one metric: the geometric mean across its runs
// with a 95 % interval on the log scale (see the package doc), in Unit.
type Estimate struct {
	Collection string
	Metric     Metric
	Unit       string   // "us" or "s"
	Value      *float64 // nil when no run has the figure
	Low, High  *float64 // nil without an interval; Reason says why
	Runs, Of   int      // runs the figure rests on, of the group's
	Excluded   []RunNote
	Reason     string
}

// EstimateOf is one metric of a group (collection Overall for whole-run figures).
func EstimateOf(runs []*RunSummary, coll string, m Metric) Estimate {
	unit, scale := m.unit()
	e := Estimate{Collection: coll, Metric: m, Unit: unit, Of: len(runs)}
	if !m.valid(coll) {
		e.Reason = fmt.Sprintf("%s is not a metric of %s", m, coll)
		return e
	}
	s := gather("", runs, coll, m)
	e.Runs, e.Excluded = s.n(), s.out
	if s.n() == 0 {
		e.Reason = "no run has this figure"
		return e
	}
	c := s.mean()
	v := math.Exp(c) / scale
	e.Value = &v
	switch {
	case s.n() < 2:
		e.Reason = "1 run: an interval needs at least 2"
		return e
	case s.same():
		e.Reason = noSpread
		return e
	}
	h := t975(float64(s.n()-1))*math.Sqrt(s.se2()) + s.bias
	lo, hi := math.Exp(c-h)/scale, math.Exp(c+h)/scale
	e.Low, e.High = &lo, &hi
	return e
}
