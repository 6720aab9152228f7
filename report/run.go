package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/runfmt"
)

// RunSchema is the JSON contract of `warmstat report --format json`.
const RunSchema = "warmstat.report/v1"

// WireDominatedUs: in remote mode a collection whose mean upsert is below this many
// microseconds costs little more than a few loopback gRPC round trips (~50-200 µs
// each), so its latency describes the wire, not the write path.
const WireDominatedUs = 1000.0

// RunJSON is the stable JSON shape of one run's report.
type RunJSON struct {
	Schema       string           `json:"schema"`
	Run          *runfmt.Manifest `json:"run"`
	Quantiles    string           `json:"quantiles"`
	Entities     int64            `json:"entities"`
	LoadWallS    float64          `json:"load_wall_s"`
	UpsertS      float64          `json:"upsert_s"`
	SourceReadS  float64          `json:"source_read_s"`
	IngestS      *float64         `json:"ingest_s"`        // null with prefetch: no meaning
	LoopOverhead *float64         `json:"loop_overhead_s"` // null with prefetch
	GoLive       GoLiveJSON       `json:"golive"`
	TotalS       *float64         `json:"total_s"`
	Verification VerificationJSON `json:"verification"`
	// TransportFrom: the embedded run(s) the † marks were measured against (report --transport)
	TransportFrom string         `json:"transport_from,omitempty"`
	Throughput    ThroughputJSON `json:"throughput"`
	Overall       LatencyJSON    `json:"overall"`
	Collections   []LatencyJSON  `json:"collections"`
	Warnings      []string       `json:"warnings"`
}

// GoLiveJSON: seconds is the transition time, or the time to failure when failed.
type GoLiveJSON struct {
	Status  string   `json:"status"`
	Seconds *float64 `json:"seconds"`
	Error   string   `json:"error,omitempty"`
}

// VerificationJSON carries the completeness verdict.
type VerificationJSON struct {
	Status   string `json:"status"`
	ExitCode int    `json:"exit_code"`
	Outcome  string `json:"outcome"`
}

// ThroughputJSON are entities per second over three denominators.
type ThroughputJSON struct {
	PureUpsert float64  `json:"pure_upsert_per_s"`
	Wall       float64  `json:"wall_per_s"`
	Ingest     *float64 `json:"ingest_per_s"` // null with prefetch
}

// LatencyJSON is one row of latency statistics (µs) with its clocks (s).
type LatencyJSON struct {
	Name           string  `json:"name,omitempty"`
	Count          int64   `json:"count"`
	MeanUs         float64 `json:"mean_us"`
	MedianUs       float64 `json:"median_us"`
	P95Us          float64 `json:"p95_us"`
	P99Us          float64 `json:"p99_us"`
	MinUs          float64 `json:"min_us"`
	MaxUs          float64 `json:"max_us"`
	WallS          float64 `json:"wall_s"`
	ReadS          float64 `json:"read_s"`
	UpsertS        float64 `json:"upsert_s"`
	ShareOfWallPct float64 `json:"share_of_wall_pct"`
	WireDominated  bool    `json:"wire_dominated"`
	// TransportSharePct: remote − embedded as a share of this mean (report --transport)
	TransportSharePct *float64 `json:"transport_share_pct,omitempty"`
	// Cost: what the mean upsert was made of (a run with entities.csv's cost columns)
	Cost *CostJSON `json:"cost,omitempty"`
}

// CostJSON is what the mean upsert's wall time was made of on the writer's applying
// thread: its CPU, its wait for a CPU, the rest (stopped or blocked: safepoints and
// GC pauses, I/O, locks), and what it allocated. A figure not measured is null.
type CostJSON struct {
	CPUUs     *float64 `json:"cpu_us"`
	WaitUs    *float64 `json:"wait_us"`
	BlockedUs *float64 `json:"blocked_us"`
	AllocKB   *float64 `json:"alloc_kb"`
}

func costOf(st analyze.Stats, c *analyze.CostStats) *CostJSON {
	if c == nil || st.Count == 0 {
		return nil
	}
	v := func(x, unit float64) *float64 {
		if x < 0 {
			return nil
		}
		r := round3(x / unit)
		return &r
	}
	j := &CostJSON{CPUUs: v(c.CPUMeanNs, 1e3), WaitUs: v(c.WaitMeanNs, 1e3), AllocKB: v(c.AllocMeanBytes, 1e3)}
	if c.CPUMeanNs >= 0 && c.WaitMeanNs >= 0 {
		j.BlockedUs = v(max(0, st.MeanNs-c.CPUMeanNs-c.WaitMeanNs), 1e3)
	}
	return j
}

func secs(ns int64) float64 { return float64(ns) / 1e9 }

// round3 keeps three decimals in the JSON (presentation, not a statistic).
func round3(v float64) float64 {
	return math.Round(v*1000) / 1000
}

func latency(name string, st analyze.Stats, wall, read, upsert int64, share float64, remote bool, o RunOptions) LatencyJSON {
	l := LatencyJSON{Name: name, Count: st.Count, MeanUs: st.MeanNs / 1000, MedianUs: st.MedianNs / 1000, P95Us: st.P95Ns / 1000,
		P99Us: st.P99Ns / 1000, MinUs: float64(st.MinNs) / 1000, MaxUs: float64(st.MaxNs) / 1000,
		WallS: secs(wall), ReadS: secs(read), UpsertS: secs(upsert), ShareOfWallPct: round3(share)}
	l.WireDominated = remote && st.Count > 0 && l.MeanUs < WireDominatedUs
	if t, ok := o.TransportSharePct[name]; ok && remote && st.Count > 0 { // measured, not the rule of thumb
		v := round3(t)
		l.TransportSharePct = &v
		l.WireDominated = t >= TransportDominatesPct
	}
	return l
}

// RunOptions add to a run's report what other runs measured.
type RunOptions struct {
	// TransportSharePct is, per collection, the transport's share of this run's mean
	// upsert, measured against embedded runs of the same workload (TransportFrom):
	// † then marks the collections where it is at least TransportDominatesPct.
	TransportSharePct map[string]float64
	TransportFrom     string
}

// BuildRun turns a summary into the report's data (shared by every format).
func BuildRun(s *analyze.RunSummary) *RunJSON { return buildRun(s, RunOptions{}) }

func buildRun(s *analyze.RunSummary, o RunOptions) *RunJSON {
	m := s.Run.Manifest
	t := m.Timings
	remote := m.TargetMode == runfmt.TargetRemote
	r := &RunJSON{Schema: RunSchema, Run: m, Quantiles: string(s.Quantiles), Entities: m.Entities,
		LoadWallS: secs(t.LoadWallNs), UpsertS: secs(t.UpsertNs), SourceReadS: secs(t.SourceReadNs),
		Verification: VerificationJSON{Status: m.Verification.Status, ExitCode: m.ExitCode, Outcome: m.Outcome.Status},
		Throughput:   ThroughputJSON{PureUpsert: round3(s.PerSecondUpsert), Wall: round3(s.PerSecondWall)},
		Warnings:     Warnings(m),
	}
	if s.NoIngest == "" {
		v, ps := secs(s.IngestNs), round3(s.PerSecondIngest)
		r.IngestS, r.Throughput.Ingest = &v, &ps
	}
	if s.LoopOverheadNs != nil {
		v := secs(*s.LoopOverheadNs)
		r.LoopOverhead = &v
	}
	r.GoLive = GoLiveJSON{Status: m.GoLive.Status, Error: m.GoLive.Error}
	if m.GoLive.Ns != nil {
		v := secs(*m.GoLive.Ns)
		r.GoLive.Seconds = &v
	}
	if s.TotalNs != nil {
		v := secs(*s.TotalNs)
		r.TotalS = &v
	}
	all := 0.0
	if t.LoadWallNs > 0 {
		all = 100
	}
	r.Overall = latency("", s.Overall, t.LoadWallNs, t.SourceReadNs, t.UpsertNs, all, false, o)
	r.Overall.Cost = costOf(s.Overall, s.Cost)
	for _, c := range s.Collections {
		l := latency(c.Name, c.Stats, c.WallNs, c.ReadNs, c.UpsertNs, c.ShareOfWallPct, remote, o)
		l.Cost = costOf(c.Stats, c.Cost)
		r.Collections = append(r.Collections, l)
	}
	if o.TransportSharePct != nil && remote {
		r.TransportFrom = o.TransportFrom
	}
	return r
}

// Warnings are the facts a reader must see before any number: incompleteness first.
func Warnings(m *runfmt.Manifest) []string {
	var w []string
	switch m.Outcome.Status {
	case runfmt.OutcomeAborted:
		w = append(w, fmt.Sprintf("ABORTED RUN: the load did not finish (%s); figures cover only what completed (exit %d)", orNone(m.Outcome.Detail), m.ExitCode))
	case runfmt.OutcomeInterrupted:
		w = append(w, fmt.Sprintf("INTERRUPTED RUN: stopped by the user (%s); figures cover only what completed (exit %d)", orNone(m.Outcome.Detail), m.ExitCode))
	case runfmt.OutcomeFailed:
		w = append(w, fmt.Sprintf("FAILED RUN: %s; do not use these figures (exit %d)", orNone(m.Outcome.Detail), m.ExitCode))
	}
	switch m.Verification.Status {
	case runfmt.Mismatch:
		var bad []string
		for _, c := range m.Verification.Counts {
			if c.Target != c.Expected {
				bad = append(bad, fmt.Sprintf("%s expected %s, target %s", c.Collection, Int(c.Expected), Int(c.Target)))
			}
		}
		w = append(w, fmt.Sprintf("COUNT MISMATCH: %s - a short load is wrong and flatteringly fast; do not use these figures (exit %d)", strings.Join(bad, "; "), m.ExitCode))
	case runfmt.Unverified:
		w = append(w, fmt.Sprintf("UNVERIFIED RUN: target entity counts are unknown (%s) - completeness unproven (exit %d)", orNone(m.Verification.Error), m.ExitCode))
	}
	if m.GoLive.Status == runfmt.GoLiveFailed && m.Outcome.Status == runfmt.OutcomeInterrupted {
		w = append(w, fmt.Sprintf("goLive INTERRUPTED by the user: the goLive figure is time to the interrupt, not a transition time; no TOTAL (%s)", m.GoLive.Error))
		if m.GoLive.ServerReachedAlive != nil && *m.GoLive.ServerReachedAlive {
			w = append(w, "the server reached ALIVE anyway (polled after the interrupt)")
		}
	} else if m.GoLive.Status == runfmt.GoLiveFailed {
		w = append(w, fmt.Sprintf("goLive FAILED client-side: the goLive figure is time to failure, not a transition time; no TOTAL (%s)", m.GoLive.Error))
		if m.GoLive.ServerReachedAlive != nil && *m.GoLive.ServerReachedAlive {
			w = append(w, "the server reached ALIVE anyway (polled after the failure)")
		}
	}
	if m.GoLive.Status == runfmt.GoLiveUnconfirmed {
		w = append(w, fmt.Sprintf("goLive UNCONFIRMED: the call completed but ALIVE was not proven; no TOTAL (%s)", m.GoLive.Error))
	}
	if m.Server.MaxHeapBytes == nil {
		w = append(w, "server heap unknown: this run cannot be compared with confidence (heap changes evitaDB's code paths)")
	}
	if m.ReaderGC != nil && m.TargetMode == runfmt.TargetEmbedded && m.ReaderGC.ShareOfWallPc > 15 {
		w = append(w, fmt.Sprintf("GC took %.1f%% of the load: this run describes the collector more than the write path", m.ReaderGC.ShareOfWallPc))
	}
	return w
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "no detail recorded"
	}
	return s
}

// WriteRun renders one run's report.
func WriteRun(w io.Writer, s *analyze.RunSummary, f Format) error {
	return WriteRunWith(w, s, f, RunOptions{})
}

// WriteRunDir renders the report of the run directory at dir, summarised with the
// Java harness's quantiles (what load prints when its run is written).
func WriteRunDir(w io.Writer, dir string, f Format) error {
	run, err := runfmt.Open(dir)
	if err != nil {
		return err
	}
	s, err := analyze.Summarize(run, analyze.QuantilesJava)
	if err != nil {
		return err
	}
	return WriteRun(w, s, f)
}

// WriteRunWith is WriteRun with what other runs measured (RunOptions).
func WriteRunWith(w io.Writer, s *analyze.RunSummary, f Format, o RunOptions) error {
	r := buildRun(s, o)
	switch f {
	case JSON:
		return WriteJSON(w, r)
	case Markdown:
		return writeRunDoc(w, r, s, true)
	}
	return writeRunDoc(w, r, s, false)
}

// writeRunDoc writes a run's report for people (text or markdown), section by section.
func writeRunDoc(w io.Writer, r *RunJSON, s *analyze.RunSummary, md bool) error {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	writeRunHeading(p, r, md)
	writeRunIdentity(p, r.Run, md)
	if err := writeClockTable(w, p, s, r.Run, md); err != nil {
		return err
	}
	writeRunLines(p, r, s)
	return writeCollectionTable(w, p, r, s, md)
}

// printf is writeRunDoc's printer to its writer.
type printf func(format string, args ...any)

// writeRunHeading writes the run's warnings and its title (markdown: the title first).
func writeRunHeading(p printf, r *RunJSON, md bool) {
	m := r.Run
	if md {
		p("## warmstat run `%s` - build `%s`\n\n", m.RunID, m.Build.Label)
		for _, x := range r.Warnings {
			p("> **%s**\n", MDEscape(x))
		}
		if len(r.Warnings) > 0 {
			p("\n")
		}
		return
	}
	for _, x := range r.Warnings {
		p("!! %s\n", x)
	}
	if len(r.Warnings) > 0 {
		p("\n")
	}
	p("warmstat report - run %s, build %s\n", m.RunID, m.Build.Label)
}

// writeRunIdentity writes what was measured: the build, the loader, the catalogs, the
// servers and the conditions (and the workload, for a replay).
func writeRunIdentity(p printf, m *runfmt.Manifest, md bool) {
	target := m.TargetMode
	if m.Server.Address != "" {
		target += " " + m.Server.Address
	}
	commit := ""
	if m.Build.Commit != "" {
		commit = " @ " + m.Build.Commit
	}
	lines := [][2]string{
		{"build", m.Build.Label + commit},
		{"loader", strings.TrimSpace(m.Loader.Name + " " + string(m.Loader.Version))},
		{"catalogs", fmt.Sprintf("%s -> %s (%s)", m.SourceCatalog, m.TargetCatalog, target)},
		{"server", fmt.Sprintf("version %s, heap %s; reader heap %s", orUnknown(string(m.Server.Version)), runfmt.FormatBytesExact(m.Server.MaxHeapBytes), runfmt.FormatBytesExact(m.Reader.MaxHeapBytes))},
		{"conditions", Conditions(m)},
	}
	if m.SourceMode() == runfmt.SourceReplay { // no reader: the source was a file
		lines[3][1] = fmt.Sprintf("version %s, heap %s; no reader", orUnknown(string(m.Server.Version)), runfmt.FormatBytesExact(m.Server.MaxHeapBytes))
		lines = append(lines, [2]string{"source", fmt.Sprintf("REPLAYED from the workload %s (sha256 %.12s): source read is reading that file",
			m.Source.Workload, m.Source.WorkloadSHA256)})
	}
	if md {
		for _, l := range lines {
			p("- %s: %s\n", l[0], MDEscape(l[1]))
		}
		p("\n")
	} else {
		for _, l := range lines {
			p("  %-11s %s\n", l[0]+":", l[1])
		}
		p("\n")
	}
}

// writeClockTable writes where the load's wall-clock went (upsert, read, ingest, the
// loop's overhead, the CPUs and variance factors), goLive, the total and the warm-up
// loads.
func writeClockTable(w io.Writer, p printf, s *analyze.RunSummary, m *runfmt.Manifest, md bool) error {
	t := m.Timings
	clock := [][]string{
		{"load wall-clock", Seconds(t.LoadWallNs), ""},
		{"  upsert (pure)", Seconds(t.UpsertNs), Fixed(s.UpsertSharePct, 1) + " % of wall"},
		{"  source read", Seconds(t.SourceReadNs), Fixed(s.ReadSharePct, 1) + " % of wall"},
	}
	if s.NoIngest == "" {
		clock = append(clock, []string{"  ingest (load - read)", Seconds(s.IngestNs), Fixed(s.IngestSharePct, 1) + " % of wall"})
	} else {
		clock = append(clock, []string{"  ingest (load - read)", "-", "not defined: " + s.NoIngest})
	}
	if s.LoopOverheadNs != nil {
		what := "the loader's own time and key listing (neither upsert nor batch read)"
		if m.SourceMode() == runfmt.SourceReplay {
			what = "the loader's own time (neither upsert nor reading the workload)"
		}
		if m.TargetMode == runfmt.TargetEmbedded && m.Loader.Name == runfmt.LoaderWarmstat {
			what = "the loader's own time and handing each request to the embedded writer (pipe, protobuf parsing), outside its upsert clock"
		}
		clock = append(clock, []string{"  loop overhead", Seconds(*s.LoopOverheadNs), Fixed(s.LoopOverheadSharePct, 1) + " % of wall: " + what})
	}
	if c := m.Loader.CPUNs; c != nil {
		clock = append(clock, []string{"  loader CPU", Seconds(*c), Fixed(*s.LoaderCPUPct, 1) + " % of wall: the loader process's own CPU"})
	}
	if c := m.Server.LoadCPUNs; c != nil && t.LoadWallNs > 0 {
		clock = append(clock, []string{"  writer CPU", Seconds(*c), Fixed(float64(*c)/float64(t.LoadWallNs), 2) + " cores on average: the writer JVM's CPU during the load"})
	}
	clock = append(clock, factorRows(m, t.LoadWallNs)...)
	clock = append(clock, goLiveRows(s, m)...)
	if md {
		return Table(w, Markdown, 1, []string{"clock", "time", "note"}, clock)
	}
	for _, c := range clock {
		p("%s\n", strings.TrimRight(fmt.Sprintf("%-23s %18s   %s", c[0], c[1], c[2]), " "))
	}
	return nil
}

// goLiveRows are the clock table's goLive and total rows, then one row for each
// warm-up load (not measured).
func goLiveRows(s *analyze.RunSummary, m *runfmt.Manifest) [][]string {
	golive, goliveNote := "skipped", "not run"
	switch m.GoLive.Status {
	case runfmt.GoLiveOK:
		golive, goliveNote = Seconds(*m.GoLive.Ns), "measured apart, never in upsert statistics"
	case runfmt.GoLiveFailed:
		golive, goliveNote = "FAILED @ "+Seconds(*m.GoLive.Ns), "time to failure, not a transition time"
	case runfmt.GoLiveUnconfirmed:
		golive, goliveNote = "UNCONFIRMED "+Seconds(*m.GoLive.Ns), "the call completed; ALIVE not proven"
	}
	total, totalNote := "-", "not defined: goLive did not complete"
	if s.TotalNs != nil {
		total, totalNote = Seconds(*s.TotalNs), ""
	}
	rows := [][]string{
		{"goLive -> ALIVE", golive, goliveNote},
		{"TOTAL (load + goLive)", total, totalNote},
	}
	for i, wu := range m.WarmUp {
		jit := ""
		if wu.JITCompileNs != nil {
			jit = ", JIT compiling " + Seconds(*wu.JITCompileNs)
		}
		rows = append(rows, []string{fmt.Sprintf("warm-up load %d", i+1), Seconds(wu.LoadWallNs),
			fmt.Sprintf("not measured: %s entities into a throwaway catalog, goLive %s%s, then deleted; the figures above are the warm writer's",
				Int(wu.Entities), Seconds(wu.GoLiveNs), jit)})
	}
	return rows
}

// writeRunLines writes the lines under the clock table: throughput, the verdict, the
// clock's resolution, the writer's GC, the peaks of memory and the profile.
func writeRunLines(p printf, r *RunJSON, s *analyze.RunSummary) {
	m, t := r.Run, r.Run.Timings
	if s.NoIngest == "" {
		p("\nthroughput: %s upserts/s (pure), %s entities/s (wall), %s entities/s (ingest)\n",
			Fixed(r.Throughput.PureUpsert, 1), Fixed(r.Throughput.Wall, 1), Fixed(*r.Throughput.Ingest, 1))
	} else {
		p("\nthroughput: %s upserts/s (pure), %s entities/s (wall)\n", Fixed(r.Throughput.PureUpsert, 1), Fixed(r.Throughput.Wall, 1))
	}
	p("verification: %s, outcome %s, exit code %d\n", m.Verification.Status, m.Outcome.Status, m.ExitCode)
	if t.ResolutionNs > 1 {
		p("timing resolution: %s (clocks as the producer printed them)\n", Seconds(t.ResolutionNs))
	}
	if m.WriterGC != nil {
		g := m.WriterGC
		p("writer GC: %s young, %s full pauses, %s paused (%.2f %% of wall)\n", intPtr(g.YoungPauses), intPtr(g.FullPauses), Seconds(g.PauseNs), g.ShareOfWallPc)
	}
	if w, l := m.Server.PeakRSSBytes, m.Loader.PeakRSSBytes; w != nil || l != nil {
		p("peak memory: writer JVM %s resident (heap %s), warmstat %s resident\n", sizeOrUnknown(w), runfmt.FormatBytesExact(m.Server.MaxHeapBytes), sizeOrUnknown(l))
	}
	if wp := m.WriterProfile; wp != nil {
		p("%s\n", ProfiledLine(wp))
	}
	p("\n")
}

// writeCollectionTable writes the per-collection latency table, slowest first, with
// the notes it needs (the wire's share, what a collection's wall excludes), then the
// cost table when the writer measured one.
func writeCollectionTable(w io.Writer, p printf, r *RunJSON, s *analyze.RunSummary, md bool) error {
	t := r.Run.Timings
	if md {
		p("Per-upsert latency in µs (quantiles: %s)\n\n", r.Quantiles)
	} else {
		p("per-collection breakdown, slowest first; upsert latency in µs (quantiles: %s)\n", r.Quantiles)
	}
	header := []string{"collection", "entities", "wall s", "read s", "upsert s", "%wall", "mean", "median", "p95", "p99", "min", "max"}
	var rows [][]string
	order := SlowestFirst(s.Collections)
	anyWire := false
	for _, i := range order {
		c, l := s.Collections[i], r.Collections[i]
		name := c.Name
		if l.WireDominated {
			name += " †"
			anyWire = true
		}
		rows = append(rows, latencyRow(name, c.Stats, c.WallNs, c.ReadNs, c.UpsertNs, c.ShareOfWallPct))
	}
	all := 0.0
	if t.LoadWallNs > 0 {
		all = 100
	}
	rows = append(rows, latencyRow("ALL", s.Overall, t.LoadWallNs, t.SourceReadNs, t.UpsertNs, all))
	f := Text
	if md {
		f = Markdown
	}
	if err := Table(w, f, 1, header, rows); err != nil {
		return err
	}
	if md {
		p("\n")
	}
	if anyWire && r.TransportFrom != "" {
		var parts []string
		for _, i := range order {
			if l := r.Collections[i]; l.WireDominated && l.TransportSharePct != nil {
				parts = append(parts, fmt.Sprintf("%s %s %%", l.Name, Fixed(*l.TransportSharePct, 0)))
			}
		}
		p("† measured against the embedded run(s) %s: remote - embedded is at least %s %% of the remote mean (%s); the wire dominates, not a write-path cost.\n",
			r.TransportFrom, Fixed(TransportDominatesPct, 0), strings.Join(parts, ", "))
	} else if anyWire {
		p("† remote latency is end-to-end (protobuf, loopback round trip, server deframing): below %s µs the wire dominates; not a write-path cost.\n", Fixed(WireDominatedUs, 0))
	}
	p("wall s of a collection excludes its primary-key listing; ALL wall s is the load wall-clock.\n")
	if r.Overall.Cost != nil {
		p("\n")
		return writeCost(w, r, order, md)
	}
	return nil
}

// writeCost is what each collection's mean upsert was made of (the cost columns).
func writeCost(w io.Writer, r *RunJSON, order []int, md bool) error {
	if md {
		fmt.Fprintf(w, "What the mean upsert was made of, on the writer's applying thread (µs; allocated KB)\n\n")
	} else {
		fmt.Fprintf(w, "what the mean upsert was made of, on the writer's applying thread (µs; allocated KB)\n")
	}
	num := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return Fixed(*v, 1)
	}
	share := func(part *float64, whole float64) string {
		if part == nil || whole <= 0 {
			return "-"
		}
		return Fixed(100**part/whole, 1)
	}
	header := []string{"collection", "mean", "CPU", "%CPU", "waiting", "stopped/blocked", "allocated KB"}
	var rows [][]string
	add := func(name string, l LatencyJSON) {
		if c := l.Cost; c != nil {
			rows = append(rows, []string{name, Fixed(l.MeanUs, 1), num(c.CPUUs), share(c.CPUUs, l.MeanUs), num(c.WaitUs), num(c.BlockedUs), num(c.AllocKB)})
		}
	}
	for _, i := range order {
		add(r.Collections[i].Name, r.Collections[i])
	}
	add("ALL", r.Overall)
	f := Text
	if md {
		f = Markdown
	}
	if err := Table(w, f, 1, header, rows); err != nil {
		return err
	}
	if md {
		fmt.Fprintf(w, "\n")
	}
	fmt.Fprintf(w, "waiting: ready to run, waiting for a CPU (the kernel's run-queue delay); stopped/blocked: the rest of the wall time (safepoints and GC pauses, I/O, locks).\n")
	return nil
}

func latencyRow(name string, st analyze.Stats, wall, read, upsert int64, share float64) []string {
	if st.Count == 0 {
		return []string{name, "0", sec1(wall), sec1(read), sec1(upsert), Fixed(share, 1), "-", "-", "-", "-", "-", "-"}
	}
	return []string{name, Int(st.Count), sec1(wall), sec1(read), sec1(upsert), Fixed(share, 1),
		Micros(st.MeanNs), Micros(st.MedianNs), Micros(st.P95Ns), Micros(st.P99Ns), Micros(float64(st.MinNs)), Micros(float64(st.MaxNs))}
}

func sec1(ns int64) string { return strings.TrimSuffix(Seconds(ns), " s") }

// SlowestFirst orders collections by wall-clock, descending; ties keep load order.
func SlowestFirst(cs []analyze.CollectionSummary) []int {
	idx := make([]int, len(cs))
	for i := range idx {
		idx[i] = i
	}
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && cs[idx[j]].WallNs > cs[idx[j-1]].WallNs; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	return idx
}

// ProfiledLine says that, and how, a run's writer was profiled, what profiling costs
// and where the flame graphs are.
func ProfiledLine(wp *runfmt.WriterProfile) string {
	cost := "its load slowdown is not measurable within one run: compare profiled against unprofiled runs"
	if wp.Cost.LoadWallPct != nil { // an earlier warmstat's manifest
		cost = fmt.Sprintf("load slowdown %+.1f %% as recorded, measured on another run", *wp.Cost.LoadWallPct)
	}
	var graphs []string
	for _, ph := range wp.Phases {
		graphs = append(graphs, ph.FlameGraph)
	}
	s := fmt.Sprintf("writer PROFILED: %s (%s; profiler control %s outside the clocks)", wp.Describe(), cost, Seconds(wp.Cost.ControlNs))
	if len(graphs) > 0 {
		s += "; flame graphs " + strings.Join(graphs, ", ")
	}
	if wp.Error != "" {
		s += "; INCOMPLETE: " + wp.Error
	}
	return s
}

// Conditions is the one-line summary of a run's measurement conditions, rendered
// the way the comparability contract sees them.
func Conditions(m *runfmt.Manifest) string {
	var parts []string
	for _, f := range []string{"storage-compress", "cache", "traffic-recording", "batch-size", "cap", "collections", "prefetch"} {
		v := analyze.ConditionValue(m, f)
		if f == "cap" && v == "0" {
			v = "none"
		}
		parts = append(parts, conditionNames[f]+"="+v)
	}
	if n := m.Conditions.WarmUpLoads; n > 0 { // named only when set: most runs have none
		parts = append(parts, fmt.Sprintf("writer-warm-up=%d", n))
	}
	if l := m.Conditions.CatalogLine; l != "" { // named only when set: the catalog written for an older line
		parts = append(parts, "catalog-line="+l)
	}
	if v := analyze.ConditionValue(m, "writer-jvm-options"); v != "none" { // given, or taken from the environment
		parts = append(parts, "writer-jvm-options="+strconv.Quote(v))
	}
	return strings.Join(parts, " ")
}

func intPtr(v *int64) string {
	if v == nil {
		return "?"
	}
	return Int(*v)
}

// factorRows are the load window's variance factors as clock-table rows: where the
// writer's CPU went, the JIT's work, faults and switches, steal, the reader's CPU.
func factorRows(m *runfmt.Manifest, wallNs int64) [][]string {
	f := m.Factors
	if f == nil || wallNs <= 0 {
		return nil
	}
	var rows [][]string
	if c := f.WriterCPUNs; c != nil {
		var parts []string
		for _, g := range []string{"request", "jit", "gc", "other"} {
			parts = append(parts, fmt.Sprintf("%s %s", g, Seconds(c[g])))
		}
		rows = append(rows, []string{"    by thread group", "", strings.Join(parts, ", ")})
	}
	if w := f.WriterWaitNs; w != nil {
		var parts []string
		for _, g := range []string{"request", "jit", "gc", "other"} {
			parts = append(parts, fmt.Sprintf("%s %s", g, Seconds(w[g])))
		}
		rows = append(rows, []string{"  waiting for a CPU", "", strings.Join(parts, ", ") + " (the writer's threads, ready to run: the kernel's run-queue delay)"})
	}
	if t := f.UpsertThread; t != nil {
		wait := "?"
		if t.WaitNs != nil {
			wait = Seconds(*t.WaitNs)
		}
		rows = append(rows, []string{"  applying thread", Seconds(t.CPUNs), fmt.Sprintf("CPU of the embedded writer's thread %d (%s allocated; %s waiting for a CPU); its upserts' own share is in the cost columns",
			t.TID, runfmt.FormatSize(t.AllocBytes), wait)})
	}
	if f.GCPauseNs != nil && f.GCPauses != nil {
		rows = append(rows, []string{"  GC pauses", Seconds(*f.GCPauseNs), fmt.Sprintf("%s pauses ended inside the load (%s %% of it)", Int(*f.GCPauses), Fixed(100*float64(*f.GCPauseNs)/float64(wallNs), 1))})
	}
	if c := f.Canary; c != nil && c.Samples > 0 {
		speed := "?" // analyze's verdict: figures that are not positive make no speed
		if x, ok := analyze.MachineSpeed(m); ok {
			speed = Fixed(x/1e3, 1)
		}
		rows = append(rows, []string{"  machine speed", "", fmt.Sprintf("canary %s µs (arithmetic %s, cache %s, memory %s; median of %s samples): the same work takes longer on a slower machine",
			speed, Fixed(c.ALUNs/1e3, 1), Fixed(c.L3Ns/1e3, 1), Fixed(c.DRAMNs/1e3, 1), Int(int64(c.Samples)))})
	}
	if f.JITCompileNs != nil && f.JITCompiles != nil {
		rows = append(rows, []string{"  JIT compiling", Seconds(*f.JITCompileNs), fmt.Sprintf("%s compilations during the load (the writer JVM's own counters; their time summed over the compiler threads, so it can exceed the wall-clock)", Int(int64(*f.JITCompiles)))})
	}
	if f.WriterMinorFaults != nil && f.WriterMajorFaults != nil && f.WriterVoluntarySwitches != nil && f.WriterInvoluntarySwitches != nil {
		rows = append(rows, []string{"  writer faults", "", fmt.Sprintf("%s minor, %s major page faults; %s voluntary, %s involuntary context switches",
			Int(int64(*f.WriterMinorFaults)), Int(int64(*f.WriterMajorFaults)), Int(int64(*f.WriterVoluntarySwitches)), Int(int64(*f.WriterInvoluntarySwitches)))})
	}
	if f.StealNs != nil && f.MachineCPUNs != nil && *f.MachineCPUNs > 0 {
		rows = append(rows, []string{"  CPU steal", Seconds(*f.StealNs), Fixed(100*float64(*f.StealNs)/float64(*f.MachineCPUNs), 2) + " % of the machine's CPU time, taken by the hypervisor"})
	}
	if c := f.ReaderCPUNs; c != nil {
		rows = append(rows, []string{"  reader CPU", Seconds(*c), Fixed(float64(*c)/float64(wallNs), 2) + " cores on average: the reader JVM, competing with the writer"})
	}
	if f.Error != "" {
		rows = append(rows, []string{"  factors", "", f.Error})
	}
	return rows
}

func sizeOrUnknown(v *int64) string {
	if v == nil {
		return "unknown"
	}
	return runfmt.FormatSize(*v)
}
