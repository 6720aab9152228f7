package series

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/base/staging"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/runfmt"
)

// Config is one invocation of a series.
type Config struct {
	Dir  string
	Plan Plan
	// Run performs one load of side ("A" or "B") into dir (absent), with run id id.
	// The series owns the servers' work directory work. A non-nil error, or a run whose
	// manifest does not say exit 0, is a failed run.
	Run func(ctx context.Context, side, dir, id, work string) error
	// RunDuet performs one duet (a duet series: Plan.Duet): runs[0] in slot 1 and
	// runs[1] in slot 2, at once; it returns each run's error, as Run would.
	RunDuet func(ctx context.Context, runs [2]DuetRun) [2]error
	// Checksum digests the series' source — the pristine snapshot, or the workload
	// file a replay series reads — at the start and end of every invocation; Source
	// names it in errors (default: the pristine snapshot).
	Checksum func() (string, error)
	Source   string
	// Prepare, if set, readies the source before its first checksum: a replay series
	// extracts its workload once, when it starts (and finds it there when resumed).
	Prepare func(ctx context.Context) error
	Compare analyze.CompareOptions // quantiles; the plan sets the method, threshold and gates
	// OnRun is told about every finished run with the health of all runs so far;
	// OnLook about every look. Either may be nil.
	OnRun  func(s *State, e Entry)
	OnLook func(s *State, l LookRecord)
	Now    func() time.Time
	// StopAfter, if positive, ends this invocation once it has run that many measured
	// pairs (or duets) with the series unfinished: ErrPaused. The same command
	// continues it (a series run in sittings, or interleaved with another).
	StopAfter int
}

// ErrPaused: the invocation ran the pairs Config.StopAfter allowed; the series is not
// finished, and the same command continues it.
var ErrPaused = errors.New("the series paused after the pairs asked for")

// DuetRun is one run of a duet: its side, run directory (absent), run id and the work
// directory of its slot.
type DuetRun struct {
	Side, Dir, ID, Work string
}

// ErrRunFailedTwice stops a series: the same slot failed twice in a row, which is not
// the machine's bad luck.
var ErrRunFailedTwice = errors.New("a run failed twice in a row")

// Execute runs the series in c.Dir: a new one, or the continuation of the one whose
// series.json is there (same plan, same builds, same pristine snapshot).
func Execute(ctx context.Context, c Config) (*State, error) {
	if c.Now == nil {
		c.Now = time.Now
	}
	plan := analyze.SequentialPlan{MinRuns: c.Plan.MinRuns, MaxRuns: c.Plan.MaxRuns, AlphaPct: c.Plan.AlphaPct, Paired: !c.Plan.Unpaired, Duet: c.Plan.Duet,
		Watch: c.Plan.Watch}
	if c.Plan.Duet && (c.Plan.Unpaired || c.RunDuet == nil) {
		return nil, errors.New("a duet series is paired and needs Config.RunDuet")
	}
	if err := plan.Check(); err != nil {
		return nil, err
	}
	c.Plan.AlphaPct = plan.AlphaPct
	release, err := LockDir(c.Dir)
	if err != nil {
		return nil, err
	}
	defer release()
	s, err := open(c)
	if err != nil {
		return nil, err
	}
	if c.Source == "" {
		c.Source = "the pristine snapshot " + c.Plan.Pristine
	}
	if c.Prepare != nil {
		if err := c.Prepare(ctx); err != nil {
			return s, err
		}
	}
	sum, err := c.Checksum()
	if err != nil {
		return s, err
	}
	if len(s.Checksums) > 0 && s.Checksums[0].SHA256 != sum {
		return s, fmt.Errorf("%s changed since the series started (checksum %.12s, now %.12s): its runs would not measure the same data",
			c.Source, s.Checksums[0].SHA256, sum)
	}
	s.Checksums = append(s.Checksums, Checksum{At: c.Now().UTC(), When: "start", SHA256: sum})
	for _, side := range []string{"A", "B"} {
		if err := os.MkdirAll(filepath.Join(c.Dir, side), 0o755); err != nil {
			return s, err
		}
	}
	if err := s.recover(c.Dir); err != nil {
		return s, err
	}
	if err := s.save(c.Dir); err != nil {
		return s, err
	}
	if c.Plan.Duet {
		err = s.loopDuets(ctx, c, plan)
	} else {
		err = s.loop(ctx, c, plan)
	}
	if sum2, cerr := c.Checksum(); cerr == nil {
		s.Checksums = append(s.Checksums, Checksum{At: c.Now().UTC(), When: "end", SHA256: sum2})
		if sum2 != sum {
			err = errors.Join(err, fmt.Errorf("%s changed during the series", c.Source))
		}
	}
	return s, errors.Join(err, s.save(c.Dir))
}

// ErrInUse is a series (or bisect) directory another warmstat is running in.
var ErrInUse = errors.New("the directory is in use by another warmstat")

// LockDir takes the series (or bisect) directory's lock (flock on the directory itself, so no file
// is written and a wipe of its contents keeps it), held for the whole invocation: a
// second invocation on the same directory would start runs into the first one's work
// directory. The kernel drops the lock when the process dies, however it dies. An
// absent directory is created as warmstat's own first.
func LockDir(dir string) (func(), error) {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		if err := evitaserver.PrepareDataDir(dir); err != nil {
			return nil, err
		}
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is in use by another warmstat process; wait for it, or stop it (Ctrl-C) and run the command again to continue", ErrInUse, dir)
		}
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}

// open starts a new series or takes up the one in c.Dir.
func open(c Config) (*State, error) {
	s, err := load(c.Dir)
	if err != nil {
		return nil, err
	}
	if s != nil {
		if d := s.Plan.differs(c.Plan); d != "" {
			return nil, planDiffers(fmt.Sprintf("%s holds a series started with other arguments (%s): run it with the same arguments to continue it, or choose another directory", c.Dir, d))
		}
		return s, nil
	}
	if c.Plan.Pristine != "" { // a series of a given workload has no snapshot
		if err := evitaserver.Overlap("the series directory", c.Dir, c.Plan.Pristine, "the pristine snapshot"); err != nil {
			return nil, err
		}
	}
	if err := evitaserver.PrepareDataDir(c.Dir); err != nil { // ours, or new
		return nil, err
	}
	return &State{Schema: Schema, Plan: c.Plan, Started: c.Now().UTC()}, nil
}

// recover excludes the runs an earlier invocation left unfinished (stopped, killed, a
// machine that died): they are moved out of the analysed directories and run again.
func (s *State) recover(dir string) error {
	for i := range s.Entries {
		e := &s.Entries[i]
		if e.Status != Running {
			continue
		}
		e.Status, e.Reason = Interrupted, "did not finish: the series was stopped or the machine went down while it ran"
		if e.Kind == Measured && !s.Plan.Duet { // a duet is run again whole: nothing is owed
			s.owe(e.Side)
		}
		if err := s.exclude(dir, e, "excluded"); err != nil {
			return err
		}
	}
	return nil
}

// owe records that side must run a measured run again (it failed, or was replaced).
func (s *State) owe(side string) {
	if s.Owed == nil {
		s.Owed = map[string]int{}
	}
	s.Owed[side]++
}

// exclude moves a run's directory (and a staging directory it left) out of the
// analysed directories, into dir/<to>/.
func (s *State) exclude(dir string, e *Entry, to string) error {
	dst := filepath.Join(dir, to)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	src := filepath.Join(dir, e.Dir)
	staged := staging.Leftovers(src)
	for _, p := range append([]string{src}, staged...) {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		name := fmt.Sprintf("%03d-%s-%s", e.Seq, e.Side, filepath.Base(p))
		if err := os.Rename(p, filepath.Join(dst, name)); err != nil {
			return err
		}
		e.Excluded = filepath.Join(to, name)
	}
	return nil
}

// next is the run to do now: warm-ups first, then measured runs in ABBA order (a
// side that is behind — after a failed or replaced run — catches up first). ok is
// false when the series has its runs.
func (s *State) next(look *analyze.Look) (side, kind string, ok bool) {
	for _, side := range []string{"A", "B"} {
		if s.Done(side, Warmup) < s.Plan.Warmup {
			return side, Warmup, true
		}
	}
	na, nb := s.Done("A", Measured), s.Done("B", Measured)
	switch {
	case na < nb:
		return "A", Measured, true
	case nb < na:
		return "B", Measured, true
	case na >= s.Plan.MaxRuns || (look != nil && look.Done && na >= s.Plan.MinRuns):
		return "", "", false
	case na%2 == 0:
		return "A", Measured, true
	}
	return "B", Measured, true
}

// lookDue looks when both sides have the same number of measured runs, first or
// more; otherwise look stands.
func (s *State) lookDue(c Config, plan analyze.SequentialPlan, first int, look *analyze.Look) (*analyze.Look, error) {
	if n := s.Done("A", Measured); n == s.Done("B", Measured) && n >= first {
		return s.look(c, plan)
	}
	return look, nil
}

func (s *State) loop(ctx context.Context, c Config, plan analyze.SequentialPlan) error {
	look, err := s.lookDue(c, plan, c.Plan.MinRuns, nil)
	if err != nil {
		return err
	}
	lastFailed := ""
	startPairs := s.Done("A", Measured)
	for {
		side, kind, ok := s.next(look)
		if !ok {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if na := s.Done("A", Measured); c.StopAfter > 0 && kind == Measured && na == s.Done("B", Measured) && na-startPairs >= c.StopAfter {
			return ErrPaused
		}
		e := Entry{Seq: len(s.Entries) + 1, Side: side, Kind: kind, Status: Running}
		// a run that failed or was replaced is run again: the next run of its side
		if e.Rerun = lastFailed == side+kind || s.Owed[side] > 0; s.Owed[side] > 0 {
			s.Owed[side]--
		}
		// numbered by the runs of its side done so far: a run run again takes the number
		// of the one it replaces (that one moved to excluded/ or replaced/ under its seq)
		if kind == Warmup {
			e.Dir = filepath.Join("warmup", side+"-"+strconv.Itoa(s.Done(side, Warmup)+1))
		} else {
			e.Dir = filepath.Join(side, "run-"+strconv.Itoa(s.Done(side, Measured)+1))
		}
		now := c.Now().UTC()
		e.Started = &now
		s.Entries = append(s.Entries, e)
		if err := s.save(c.Dir); err != nil {
			return err
		}
		before := readProbe()
		runErr := c.Run(ctx, side, filepath.Join(c.Dir, e.Dir), fmt.Sprintf("%s-%03d", side, e.Seq), filepath.Join(c.Dir, "work"))
		ent := &s.Entries[len(s.Entries)-1]
		end := c.Now().UTC()
		ent.Ended, ent.Machine = &end, machine(before, readProbe())
		if runErr == nil {
			runErr = exitedZero(filepath.Join(c.Dir, ent.Dir))
		}
		if runErr != nil {
			ent.Status, ent.Reason = Failed, runErr.Error()
			if ctx.Err() != nil { // the user stopped it: not the run's failure
				ent.Status, ent.Reason = Interrupted, "interrupted before it finished: run again when the series resumes"
			}
			if kind == Measured {
				s.owe(side)
			}
			if err := s.exclude(c.Dir, ent, "excluded"); err != nil {
				return err
			}
			if c.OnRun != nil {
				c.OnRun(s, *ent)
			}
			if err := s.afterFailure(ctx, c.Dir, lastFailed == side+kind, fmt.Sprintf("%s run %s", side, ent.Dir), runErr); err != nil {
				return err
			}
			lastFailed = side + kind
			continue
		}
		lastFailed = ""
		ent.Status = Done
		if kind == Measured {
			if err := s.checkHealth(c); err != nil {
				return err
			}
		}
		if c.OnRun != nil {
			c.OnRun(s, *ent)
		}
		if err := s.save(c.Dir); err != nil {
			return err
		}
		if kind == Measured {
			if look, err = s.lookDue(c, plan, c.Plan.MinRuns, look); err != nil {
				return err
			}
		}
	}
	s.finish(look)
	return nil
}

// afterFailure saves the state after a failed run (or duet), what: and stops the series
// when the user stopped it, or when the same run failed twice in a row (twice).
func (s *State) afterFailure(ctx context.Context, dir string, twice bool, what string, cause error) error {
	if err := s.save(dir); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if twice {
		s.Outcome = &Outcome{Reason: "failed", Detail: cause.Error()}
		return fmt.Errorf("%w (%s): %v", ErrRunFailedTwice, what, cause)
	}
	return nil
}

// exitedZero reads a finished run's manifest: only a verified, complete run counts.
func exitedZero(dir string) error {
	m, err := runfmt.ReadManifest(filepath.Join(dir, runfmt.ManifestFile))
	if err != nil {
		return err
	}
	if m.ExitCode != 0 {
		return fmt.Errorf("run %s: exit code %d (verification %s, outcome %s %s)", m.RunID, m.ExitCode, m.Verification.Status, m.Outcome.Status, m.Outcome.Detail)
	}
	return nil
}

// groups loads the analysed runs of both sides.
func groups(dir string) (*analyze.Group, *analyze.Group, error) {
	a, err := analyze.LoadGroup("A", filepath.Join(dir, "A"), analyze.LoadOptions{})
	if err != nil {
		return nil, nil, err
	}
	b, err := analyze.LoadGroup("B", filepath.Join(dir, "B"), analyze.LoadOptions{})
	return a, b, err
}

// look analyses the gates with the plan's interval and records it.
func (s *State) look(c Config, plan analyze.SequentialPlan) (*analyze.Look, error) {
	a, b, err := groups(c.Dir)
	if err != nil {
		return nil, err
	}
	o := c.Compare
	o.Gates = append(slices.Clone(c.Plan.Gates), c.Plan.Watch...)
	o.ThresholdPct = c.Plan.ThresholdPct
	o.Method = c.Plan.Method()
	if !c.Plan.Unpaired {
		o.Pairs = s.Pairs(c.Dir)
	}
	l, err := analyze.LookAt(a, b, plan, o)
	rec := LookRecord{At: c.Now().UTC(), Runs: min(len(a.Runs), len(b.Runs)), Look: l}
	if err != nil {
		rec.Error = err.Error()
		s.Looks = append(s.Looks, rec)
		s.Outcome = &Outcome{Reason: "refused", Detail: err.Error()}
		return nil, err
	}
	if n := len(s.Looks); n > 0 && s.Looks[n-1].Runs == rec.Runs {
		s.Looks[n-1] = rec // a continued series looks again at the same runs
	} else {
		s.Looks = append(s.Looks, rec)
	}
	if c.OnLook != nil {
		c.OnLook(s, rec)
	}
	return l, s.save(c.Dir)
}

// checkHealth gives every measured run its headline figures and flags the runs that
// stand out from their side; with RerunOutliers a newly flagged run is replaced.
func (s *State) checkHealth(c Config) error {
	for _, side := range []string{"A", "B"} {
		if s.Done(side, Measured) == 0 {
			continue
		}
		g, err := analyze.LoadGroup(side, filepath.Join(c.Dir, side), analyze.LoadOptions{})
		if err != nil {
			return err
		}
		hs, err := analyze.Health(g, c.Compare.Quantiles)
		if err != nil {
			return err
		}
		for _, h := range hs {
			rel, _ := filepath.Rel(c.Dir, h.Dir)
			for i := range s.Entries {
				e := &s.Entries[i]
				if e.Dir != rel || e.Status != Done {
					continue
				}
				h := h
				e.Health = &h
				if h.Outlier != "" && c.Plan.RerunOutliers && !e.Rerun {
					e.Status, e.Reason = Replaced, "outlier: "+h.Outlier
					if !s.Plan.Duet { // a duet is run again whole, by its number
						s.owe(e.Side)
					}
					if err := s.exclude(c.Dir, e, "replaced"); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// finish records how the series ended.
func (s *State) finish(l *analyze.Look) {
	n := s.Done("A", Measured)
	o := &Outcome{Reason: "max-runs", Runs: n, Saved: s.Plan.MaxRuns - n, Verdicts: map[string]string{}}
	if l != nil {
		o.Gates = l.Gates
		resolved := true
		for _, g := range l.Gates {
			o.Verdicts[g.Gate] = string(g.Verdict)
			resolved = resolved && (g.Resolved() || g.Watched)
		}
		if resolved {
			o.Reason = "resolved"
		}
	}
	if s.Plan.Pairs > 0 { // its pairs were planned, not stopped for: its verdicts are one machine's
		o.Reason = "fixed-size"
	}
	s.Outcome = o
}

// loopDuets is loop for a duet series: every step is one duet, both sides' runs at
// once (warm-up duets first, then measured ones). Pair k puts A in slot 1 when k is
// odd and B when it is even, so the slots alternate and the analysis can set their
// difference aside; a duet run again (it failed, was stopped, or one of its runs
// stood out) keeps its number and so its placement. A duet counts only whole: when
// either run fails, both are moved to excluded/ and the duet runs again.
func (s *State) loopDuets(ctx context.Context, c Config, plan analyze.SequentialPlan) error {
	first := plan.FirstLook()
	look, err := s.lookDue(c, plan, first, nil)
	if err != nil {
		return err
	}
	failedLast := false
	startPairs := s.Done("A", Measured)
	for {
		kind := Measured
		if s.Done("A", Warmup) < s.Plan.Warmup {
			kind = Warmup
		}
		k := s.Done("A", kind) + 1 // the duet's number among its kind
		if kind == Measured && (k > s.Plan.MaxRuns || (look != nil && look.Done && k-1 >= first)) {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if c.StopAfter > 0 && kind == Measured && k-1-startPairs >= c.StopAfter {
			return ErrPaused
		}
		runs, idx := s.planDuet(c, kind, k, failedLast)
		if err := s.save(c.Dir); err != nil {
			return err
		}
		before := readProbe()
		errs := c.RunDuet(ctx, runs)
		end := c.Now().UTC()
		if failure := s.endDuet(c, idx, &errs, end, machine(before, readProbe())); failure != nil {
			if err := s.excludeDuet(ctx, c, idx, errs, failure); err != nil {
				return err
			}
			if err := s.afterFailure(ctx, c.Dir, failedLast, fmt.Sprintf("duet %d", k), failure); err != nil {
				return err
			}
			failedLast = true
			continue
		}
		failedLast = false
		for i := range runs {
			s.Entries[idx[i]].Status = Done
		}
		if kind == Measured {
			if err := s.checkHealth(c); err != nil {
				return err
			}
			s.replaceDuetPartners(c.Dir)
		}
		for i := range runs {
			if c.OnRun != nil {
				c.OnRun(s, s.Entries[idx[i]])
			}
		}
		if err := s.save(c.Dir); err != nil {
			return err
		}
		if kind == Measured {
			if look, err = s.lookDue(c, plan, first, look); err != nil {
				return err
			}
		}
	}
	s.finish(look)
	return nil
}

// planDuet adds the k-th duet of its kind to the series as two running entries, one
// per slot (A first in an odd duet, B first in an even one), each naming the other as
// its partner; idx is where they are in s.Entries.
func (s *State) planDuet(c Config, kind string, k int, failedLast bool) (runs [2]DuetRun, idx [2]int) {
	order := [2]string{"A", "B"}
	if k%2 == 0 {
		order = [2]string{"B", "A"}
	}
	now := c.Now().UTC()
	for i, side := range order {
		e := Entry{Seq: len(s.Entries) + 1, Side: side, Kind: kind, Status: Running, Started: &now, Slot: i + 1, Rerun: failedLast}
		e.Partner = e.Seq + 1 - 2*i
		if kind == Warmup {
			e.Dir = filepath.Join("warmup", side+"-"+strconv.Itoa(k))
		} else {
			e.Dir = filepath.Join(side, "run-"+strconv.Itoa(k))
		}
		// a duet whose number ran before (it failed, was stopped or replaced) runs again
		e.Rerun = e.Rerun || slices.ContainsFunc(s.Entries, func(x Entry) bool { return x.Dir == e.Dir })
		idx[i] = len(s.Entries)
		s.Entries = append(s.Entries, e)
		runs[i] = DuetRun{Side: side, Dir: filepath.Join(c.Dir, e.Dir), ID: fmt.Sprintf("%s-%03d", side, e.Seq),
			Work: filepath.Join(c.Dir, "work", "slot-"+strconv.Itoa(i+1))}
	}
	return runs, idx
}

// endDuet records the duet's end and the machine's state on both entries; failure is
// the first side that failed (a run that returned but did not exit 0 failed too, and
// its error is set in errs).
func (s *State) endDuet(c Config, idx [2]int, errs *[2]error, end time.Time, mach *Machine) (failure error) {
	for i := range idx {
		e := &s.Entries[idx[i]]
		e.Ended, e.Machine = &end, mach
		if errs[i] == nil {
			errs[i] = exitedZero(filepath.Join(c.Dir, e.Dir))
		}
		if errs[i] != nil && failure == nil {
			failure = fmt.Errorf("%s run %s: %w", e.Side, e.Dir, errs[i])
		}
	}
	return failure
}

// excludeDuet excludes both runs of a failed duet: the partner of a failed run fails
// with it (they ran together), and an interrupted duet runs again on resume.
func (s *State) excludeDuet(ctx context.Context, c Config, idx [2]int, errs [2]error, failure error) error {
	for i := range idx {
		e := &s.Entries[idx[i]]
		e.Status, e.Reason = Failed, failure.Error()
		if errs[i] == nil {
			e.Reason = "its duet partner failed: " + failure.Error()
		}
		if ctx.Err() != nil {
			e.Status, e.Reason = Interrupted, "interrupted before it finished: the duet runs again when the series resumes"
		}
		if err := s.exclude(c.Dir, e, "excluded"); err != nil {
			return err
		}
		if c.OnRun != nil {
			c.OnRun(s, *e)
		}
	}
	return nil
}

// replaceDuetPartners replaces the partner of every duet run replaced as an outlier
// (checkHealth, --rerun-outliers): a duet is run again whole, its slots unchanged.
func (s *State) replaceDuetPartners(dir string) {
	for i := range s.Entries {
		e := &s.Entries[i]
		if e.Status != Replaced || e.Partner == 0 {
			continue
		}
		p := &s.Entries[e.Partner-1]
		if p.Status == Done {
			p.Status, p.Reason = Replaced, "its duet partner "+e.Dir+" stood out ("+e.Reason+"): the duet runs again"
			_ = s.exclude(dir, p, "replaced")
		}
	}
}
