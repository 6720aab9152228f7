package runfmt

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// HarnessReport is what the Java harness's stdout says about one run
// (IsolatedWarmupLoadBenchmark's report block, verification and exit status).
type HarnessReport struct {
	File          string
	SourceCatalog string
	TargetCatalog string
	TargetMode    string
	TargetAddress string
	Entities      int64
	BatchSize     int64
	ReaderMaxHeap *int64 // from "reader JVM heap : max 14.0 GiB"
	ReaderUsed    string
	ServerHeap    *int64 // from the wrapper's "heaps : writer 23g, ..." line, if present
	GitCommit     string // from the wrapper's "git : <sha> (<branch>)" line, if present
	RunName       string // from RUN_STATUS=MEASUREMENT-DONE-<run>, if present
	LoadWallNs    int64
	UpsertNs      int64
	SourceReadNs  int64
	GoLiveNs      int64
	GoLiveFailed  bool
	GoLiveError   string
	Overall       Printed // the latency table, µs in tenths
	Collections   []HarnessCollection
	Verification  Verification
	CapInferred   int  // max per collection proven by the verification table, 0 = none
	Capped        bool // the verdict line said "min(source, cap)"
	Subset        []string
	ReaderGC      *GCStats
	ExitStatus    *int
	CommaDecimal  bool
}

// Printed holds latency figures as the harness printed them, in tenths of a
// microsecond (exact: the harness prints one decimal). Absent figures are -1.
type Printed struct {
	Mean, Median, P95, P99, Min, Max int64
}

// HarnessCollection is one row of the harness's per-collection breakdown.
type HarnessCollection struct {
	Name     string
	Entities int64
	WallNs   int64
	ReadNs   int64
	UpsertNs int64
	Latency  Printed // Mean, Median, P99 printed; the others -1
}

const reportTitle = "SINGLE-THREADED WARM_UP BULK LOAD - RESULT"

var (
	ansiRe      = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)
	eqRuleRe    = regexp.MustCompile(`^=+$`)
	verifHdrRe  = regexp.MustCompile(`^collection\s+source\s+target\s+loaded\s*$`)
	verifRowRe  = regexp.MustCompile(`^(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$`)
	mismatchRe  = regexp.MustCompile(`^\s+(\S+): expected (\d+) \(source=(\d+)\), target=(\d+), loaded=(\d+)\s*$`)
	exitRe      = regexp.MustCompile(`^(?:\[[0-9:]+\] )?(?:exit status: |LOAD_EXIT=)(\d+)\s*$`)
	runStatusRe = regexp.MustCompile(`RUN_STATUS=MEASUREMENT-DONE-(\S+)`)
	heapsRe     = regexp.MustCompile(`^(?:\[[0-9:]+\] )?heaps\s+: writer (\S+), reader (\S+?)(?:/\S+)?\s*$`)
	gitRe       = regexp.MustCompile(`^(?:\[[0-9:]+\] )?git\s+: ([0-9a-f]{6,40})\b`)
	subsetRe    = regexp.MustCompile(`Restricted to \d+ collection\(s\): \[(.*)\]`)
	gcRe        = regexp.MustCompile(`^(.+) collections, (.+) s \((.+)% of load wall-clock\)$`)
)

// ParseHarnessLog reads the Java loader's stdout.
func ParseHarnessLog(path string) (*HarnessReport, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseHarness(path, data)
}

type logLines struct {
	file  string
	lines []string
}

func (l *logLines) err(i int, field, format string, args ...any) error {
	return perr(l.file, i+1, field, format, args...)
}

func parseHarness(path string, data []byte) (*HarnessReport, error) {
	L := &logLines{file: path}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		L.lines = append(L.lines, strings.TrimRight(ansiRe.ReplaceAllString(decodeLine(sc.Text()), ""), "\r"))
	}
	if err := sc.Err(); err != nil {
		return nil, perr(path, len(L.lines)+1, "", "%v", err)
	}
	r := &HarnessReport{File: path, CapInferred: 0}
	title := -1
	for i, s := range L.lines {
		if strings.Contains(s, reportTitle) {
			title = i
			break
		}
	}
	if title < 0 {
		return nil, perr(path, 0, "", "no report block (%q not found): the harness did not finish its load, or this is not its stdout", reportTitle)
	}
	// wrapper and loader lines anywhere in the log
	for _, s := range L.lines {
		if m := exitRe.FindStringSubmatch(s); m != nil {
			v, _ := strconv.Atoi(m[1])
			r.ExitStatus = &v
		}
		if m := runStatusRe.FindStringSubmatch(s); m != nil {
			r.RunName = m[1]
		}
		if m := heapsRe.FindStringSubmatch(s); m != nil {
			if b, err := ParseBytes(m[1]); err == nil {
				r.ServerHeap = &b
			}
		}
		if m := gitRe.FindStringSubmatch(s); m != nil {
			r.GitCommit = m[1]
		}
		if m := subsetRe.FindStringSubmatch(s); m != nil {
			for _, n := range strings.Split(m[1], ",") {
				if n = strings.TrimSpace(n); n != "" {
					r.Subset = append(r.Subset, n)
				}
			}
		}
	}
	end, err := r.parseBlock(L, title)
	if err != nil {
		return nil, err
	}
	if err := r.parseVerification(L, end+1); err != nil {
		return nil, err
	}
	return r, nil
}

// decodeLine reads a log line in the JVM's output encoding: UTF-8, or, where the bytes
// are not UTF-8, ISO-8859-1 (a JVM in a cs_CZ or de_DE locale on a Latin-1 terminal
// writes the NBSP it groups digits with as the single byte 0xA0).
func decodeLine(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	r := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		r[i] = rune(s[i])
	}
	return string(r)
}

func (r *HarnessReport) parseBlock(L *logLines, title int) (int, error) {
	if title+1 >= len(L.lines) || !eqRuleRe.MatchString(L.lines[title+1]) {
		return 0, L.err(title+1, "", "report block truncated after its title")
	}
	seen := map[string]int{}
	i := title + 2
	end := -1
	for ; i < len(L.lines); i++ {
		s := L.lines[i]
		if eqRuleRe.MatchString(s) {
			end = i
			break
		}
		if len(s) > 25 && s[24] == ':' && s[25] == ' ' {
			key, val := strings.TrimSpace(s[:24]), s[26:]
			seen[key] = i
			if err := r.labelled(L, i, key, val); err != nil {
				return 0, err
			}
			continue
		}
		switch {
		case strings.HasPrefix(s, "  !! goLive failed CLIENT-side: "):
			msg := []string{strings.TrimPrefix(s, "  !! goLive failed CLIENT-side: ")}
			for i+1 < len(L.lines) && !strings.HasPrefix(L.lines[i+1], "  !! the load figures") && !strings.HasPrefix(L.lines[i+1], "-----") && !eqRuleRe.MatchString(L.lines[i+1]) {
				i++
				msg = append(msg, strings.TrimSpace(L.lines[i]))
			}
			r.GoLiveError = strings.Join(msg, " ")
		case s == "per-upsert latency (microseconds)":
			if i+2 >= len(L.lines) {
				return 0, L.err(i, "latency", "table truncated")
			}
			f := strings.Fields(L.lines[i+2])
			if len(f) != 6 {
				return 0, L.err(i+2, "latency", "expected 6 values (mean median p95 p99 min max), got %d", len(f))
			}
			var v [6]int64
			for k := range f {
				t, err := parseTenths(f[k])
				if err != nil {
					return 0, L.err(i+2, []string{"mean", "median", "p95", "p99", "min", "max"}[k], "%v", err)
				}
				v[k] = t
			}
			r.Overall = Printed{v[0], v[1], v[2], v[3], v[4], v[5]}
			seen["latency"] = i
			i += 2
		case s == "per-collection breakdown (slowest first)":
			seen["per-collection"] = i
			i += 1 // header
			for i+1 < len(L.lines) && !eqRuleRe.MatchString(L.lines[i+1]) {
				i++
				c, err := parseCollRow(L, i)
				if err != nil {
					return 0, err
				}
				r.Collections = append(r.Collections, c)
			}
		}
	}
	if end < 0 {
		return 0, L.err(len(L.lines)-1, "", "report block truncated: no closing rule")
	}
	for _, k := range []string{"source catalog", "target catalog", "entities upserted", "read batch size", "load wall-clock",
		"upsert (pure)", "source read", "goLive -> ALIVE", "TOTAL (load + goLive)", "latency", "per-collection"} {
		if _, ok := seen[k]; !ok {
			return 0, L.err(end, k, "missing from the report block (lines %d-%d)", title+1, end+1)
		}
	}
	if r.GoLiveFailed && r.GoLiveError == "" {
		r.GoLiveError = "client-side failure (the harness printed no message)"
	}
	var sum int64
	for _, c := range r.Collections {
		sum += c.Entities
	}
	if sum != r.Entities {
		return 0, L.err(seen["per-collection"], "entities", "per-collection rows add up to %d, but entities upserted is %d", sum, r.Entities)
	}
	return end, nil
}

func (r *HarnessReport) labelled(L *logLines, i int, key, val string) error {
	var err error
	switch key {
	case "source catalog":
		r.SourceCatalog, _, _ = strings.Cut(val, " (")
	case "target catalog":
		name, mode, ok := strings.Cut(val, " (")
		if !ok {
			return L.err(i, key, "%q has no mode in parentheses", val)
		}
		r.TargetCatalog = name
		mode = strings.TrimSuffix(mode, ")")
		switch {
		case strings.HasPrefix(mode, "remote server "):
			r.TargetMode = TargetRemote
			r.TargetAddress = strings.TrimSuffix(strings.TrimPrefix(mode, "remote server "), " over gRPC")
		case strings.HasPrefix(mode, "embedded"):
			r.TargetMode = TargetEmbedded
		default:
			return L.err(i, key, "unknown target mode %q", mode)
		}
	case "entities upserted":
		r.Entities, err = parseGrouped(val)
	case "read batch size":
		r.BatchSize, err = parseGrouped(val)
	case "reader JVM heap":
		rest, ok := strings.CutPrefix(val, "max ")
		maxS, used, ok2 := strings.Cut(rest, ", used after load ")
		if !ok || !ok2 {
			return L.err(i, key, "unexpected format %q", val)
		}
		b, perr := ParseBytes(maxS)
		if perr != nil {
			return L.err(i, key, "%v", perr)
		}
		r.ReaderMaxHeap, r.ReaderUsed = &b, used
	case "load wall-clock":
		r.LoadWallNs, err = r.dws(val)
	case "upsert (pure)":
		r.UpsertNs, err = r.dws(val)
	case "source read":
		r.SourceReadNs, err = r.dws(val)
	case "goLive -> ALIVE":
		if strings.Contains(val, "*** CLIENT-SIDE FAILURE") {
			r.GoLiveFailed = true
		}
		r.GoLiveNs, err = r.dws(val)
	case "TOTAL (load + goLive)":
		_, err = r.dws(val)
	case "reader JVM GC":
		m := gcRe.FindStringSubmatch(val)
		if m == nil {
			return L.err(i, key, "unexpected format %q", val)
		}
		n, e1 := parseGrouped(m[1])
		t, e2 := parseTenths(m[2])
		if e1 != nil || e2 != nil {
			return L.err(i, key, "unexpected format %q", val)
		}
		share, _ := parseTenths(m[3])
		r.ReaderGC = &GCStats{Collections: n, PauseNs: t * 1e8, ShareOfWallPc: float64(share) / 10}
	}
	if err != nil {
		return L.err(i, key, "%v", err)
	}
	return nil
}

// dws parses "H:MM:SS  (1,209.4 s)" and returns the parenthesised seconds in ns.
func (r *HarnessReport) dws(val string) (int64, error) {
	open := strings.IndexByte(val, '(')
	close := strings.Index(val, " s)")
	if open < 0 || close < open {
		return 0, fmt.Errorf("%q is not H:MM:SS  (S s)", val)
	}
	num := val[open+1 : close]
	if strings.HasSuffix(strings.TrimRight(num, "0123456789"), ",") {
		r.CommaDecimal = true
	}
	t, err := parseTenths(num)
	return t * 1e8, err
}

func parseCollRow(L *logLines, i int) (HarnessCollection, error) {
	f := strings.FieldsFunc(L.lines[i], func(c rune) bool { return c == ' ' || c == '\t' })
	if len(f) < 9 {
		return HarnessCollection{}, L.err(i, "per-collection", "row has %d fields, expected 9", len(f))
	}
	// a locale grouping with a plain space splits the entity count; rejoin it
	ent := strings.Join(f[1:len(f)-7], "")
	tail := f[len(f)-7:]
	c := HarnessCollection{Name: f[0], Latency: Printed{-1, -1, -1, -1, -1, -1}}
	var err error
	if c.Entities, err = parseGrouped(ent); err != nil {
		return c, L.err(i, "entities", "%v", err)
	}
	names := []string{"wall s", "read s", "upsert s", "mean us", "med us", "p99 us"}
	var v [6]int64
	for k := 0; k < 6; k++ {
		if v[k], err = parseTenths(tail[k]); err != nil {
			return c, L.err(i, names[k], "%v", err)
		}
	}
	if !strings.HasSuffix(tail[6], "%") {
		return c, L.err(i, "%wall", "%q is not a percentage", tail[6])
	}
	c.WallNs, c.ReadNs, c.UpsertNs = v[0]*1e8, v[1]*1e8, v[2]*1e8
	c.Latency.Mean, c.Latency.Median, c.Latency.P99 = v[3], v[4], v[5]
	return c, nil
}

func (r *HarnessReport) parseVerification(L *logLines, from int) error {
	r.Verification.Status = ""
	bad := map[string]CountCheck{}
	for i := from; i < len(L.lines); i++ {
		s := L.lines[i]
		switch {
		case verifHdrRe.MatchString(s):
			r.Verification.Counts = nil
			for i+1 < len(L.lines) {
				m := verifRowRe.FindStringSubmatch(L.lines[i+1])
				if m == nil {
					break
				}
				i++
				src, _ := strconv.ParseInt(m[2], 10, 64)
				tgt, _ := strconv.ParseInt(m[3], 10, 64)
				ld, _ := strconv.ParseInt(m[4], 10, 64)
				r.Verification.Counts = append(r.Verification.Counts, CountCheck{Collection: m[1], Source: src, Target: tgt, Loaded: ld, Expected: tgt})
			}
		case strings.HasPrefix(s, "Load verified: target matches min(source, cap)"):
			r.Verification.Status, r.Capped = Verified, true
		case strings.HasPrefix(s, "Load verified:"):
			r.Verification.Status = Verified
		case strings.Contains(s, "Load verification FAILED - entity counts differ"):
			r.Verification.Status = Mismatch
			for i+1 < len(L.lines) {
				m := mismatchRe.FindStringSubmatch(L.lines[i+1])
				if m == nil {
					break
				}
				i++
				e, _ := strconv.ParseInt(m[2], 10, 64)
				bad[m[1]] = CountCheck{Expected: e}
			}
			r.Verification.Error = "entity counts differ"
		case strings.Contains(s, "Post-copy verification could not run"):
			r.Verification.Status = Unverified
			r.Verification.Error = strings.TrimSpace(s[strings.Index(s, "Post-copy"):])
		case strings.Contains(s, "Post-copy verification skipped by configuration"):
			r.Verification.Status = VerifySkip
		}
	}
	for k, c := range r.Verification.Counts {
		if b, ok := bad[c.Collection]; ok {
			r.Verification.Counts[k].Expected = b.Expected
		}
		if c.Loaded < c.Source && int(c.Loaded) > r.CapInferred {
			r.CapInferred = int(c.Loaded) // loaded = min(source, cap) < source proves cap = loaded
		}
	}
	for k, c := range r.Verification.Counts { // what the verdict promises: min(source, cap)
		if _, ok := bad[c.Collection]; !ok {
			r.Verification.Counts[k].Expected = expectedCount(c.Source, r.CapInferred)
		}
	}
	switch r.Verification.Status {
	case Verified:
		if len(r.Verification.Counts) == 0 {
			return perr(L.file, 0, "verification", "verdict says verified, but no count table was found")
		}
	case Mismatch:
		if len(r.Verification.Counts) == 0 {
			return perr(L.file, 0, "verification", "verdict says counts differ, but no count table was found")
		}
		if len(bad) == 0 { // no per-collection lines: fall back to target vs loaded
			for k, c := range r.Verification.Counts {
				if c.Target != c.Loaded {
					r.Verification.Counts[k].Expected = c.Loaded
				}
			}
		}
	case "":
		// Older harness builds logged neither verdict; with a table we can still judge
		// target against what was loaded, without one nothing is known.
		r.Verification.Status = Unverified
		r.Verification.Error = "the log has no verification verdict"
		for k, c := range r.Verification.Counts {
			if c.Target != c.Loaded {
				r.Verification.Counts[k].Expected = c.Loaded
				r.Verification.Status, r.Verification.Error = Mismatch, "target count differs from loaded count"
			}
		}
	}
	if r.Verification.Status == Unverified || r.Verification.Status == VerifySkip {
		r.Verification.Counts = nil
	}
	return nil
}

// parseGrouped reads an integer printed with %,d in any locale.
func parseGrouped(s string) (int64, error) {
	s = strings.TrimSpace(s)
	var b strings.Builder
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			b.WriteRune(c)
		case c == ',' || c == '.' || c == '\u00a0' || c == '\u202f' || c == ' ' || c == '\'' || c == '\u2019':
		default:
			return 0, fmt.Errorf("%q is not an integer", s)
		}
	}
	if b.Len() == 0 {
		return 0, fmt.Errorf("%q is not an integer", s)
	}
	return strconv.ParseInt(b.String(), 10, 64)
}

// parseTenths reads a number printed with %.1f or %,.1f in any locale and returns it
// in tenths, exactly. The decimal separator is the '.' or ',' before the last digit.
func parseTenths(s string) (int64, error) {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	n := len(s)
	if n < 3 || (s[n-2] != '.' && s[n-2] != ',') || s[n-1] < '0' || s[n-1] > '9' {
		return 0, fmt.Errorf("%q is not a number with one decimal", s)
	}
	whole, err := parseGrouped(s[:n-2])
	if err != nil {
		return 0, fmt.Errorf("%q is not a number with one decimal", s)
	}
	v := whole*10 + int64(s[n-1]-'0')
	if neg {
		v = -v
	}
	return v, nil
}

// HarnessImportOptions are the facts the harness log cannot know; flags win over
// what the log shows.
type HarnessImportOptions struct {
	Build           string
	ServerVersion   string
	ServerHeap      *int64
	ReaderHeap      *int64
	StorageCompress *bool
	CacheEnabled    *bool
	TrafficRecord   *bool
	LoaderVersion   string
}

// Manifest builds the run's manifest from the report (UpsertNs per collection are
// the report's 0.1 s figures until the CSV conversion replaces them with exact sums).
func (r *HarnessReport) Manifest(dir string, o HarnessImportOptions) *Manifest {
	m := &Manifest{Schema: SchemaV1, TargetMode: r.TargetMode, SourceCatalog: r.SourceCatalog, TargetCatalog: r.TargetCatalog}
	m.RunID = r.RunName
	if m.RunID == "" {
		m.RunID = filepath.Base(filepath.Clean(dir))
	}
	m.Build = Build{Label: o.Build, Commit: r.GitCommit}
	if m.Build.Label == "" && r.GitCommit != "" {
		m.Build.Label = r.GitCommit
	}
	if m.Build.Label == "" {
		m.Build.Label = filepath.Base(filepath.Clean(dir))
	}
	m.Loader = Loader{Name: LoaderJavaHarness, Version: UnknownText(o.LoaderVersion)}
	m.Server = Server{Version: UnknownText(strings.TrimSpace(o.ServerVersion)), Address: r.TargetAddress, MaxHeapBytes: firstNonNil(o.ServerHeap, r.ServerHeap)}
	m.Reader = Reader{MaxHeapBytes: firstNonNil(o.ReaderHeap, r.ReaderMaxHeap)}
	m.Conditions = Conditions{StorageCompress: o.StorageCompress, CacheEnabled: o.CacheEnabled, TrafficRecording: o.TrafficRecord,
		BatchSize: int(r.BatchSize), MaxPerCollection: r.CapInferred, CollectionSubset: r.Subset}
	if len(r.Verification.Counts) > 0 {
		m.Dataset.SourceCounts = map[string]int64{}
		for _, c := range r.Verification.Counts {
			m.Dataset.SourceCounts[c.Collection] = c.Source
		}
		m.Dataset.Fingerprint = Fingerprint(m.Dataset.SourceCounts)
	}
	m.Entities = r.Entities
	m.Timings = Timings{ResolutionNs: 1e8, LoadWallNs: r.LoadWallNs, UpsertNs: r.UpsertNs, SourceReadNs: r.SourceReadNs}
	// load order: the harness loads collections in ascending String order (a TreeSet)
	cs := make([]Collection, len(r.Collections))
	for i, c := range r.Collections {
		cs[i] = Collection{Name: c.Name, Entities: c.Entities, WallNs: c.WallNs, ReadNs: c.ReadNs, UpsertNs: c.UpsertNs}
	}
	sortByName(cs)
	m.Collections = cs
	ns := r.GoLiveNs
	m.GoLive = GoLive{Status: GoLiveOK, Ns: &ns}
	if r.GoLiveFailed {
		m.GoLive.Status, m.GoLive.Error = GoLiveFailed, r.GoLiveError
	}
	m.Verification = r.Verification
	m.Outcome = Outcome{Status: OutcomeComplete}
	m.ExitCode = ExitCodeFor(m.Outcome.Status, m.Verification.Status)
	m.ReaderGC = r.ReaderGC
	locale := "dot-decimal"
	if r.CommaDecimal {
		locale = "comma-decimal"
	}
	m.Import = &Import{SourceDir: dir, HarnessExitCode: r.ExitStatus, Locale: locale, ReaderUsedHeapGB: r.ReaderUsed}
	return m
}

func firstNonNil(a, b *int64) *int64 {
	if a != nil {
		return a
	}
	return b
}

func sortByName(cs []Collection) {
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].Name < cs[j-1].Name; j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}
