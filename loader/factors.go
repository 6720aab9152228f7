package loader

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/warmstat/warmstat/embedded"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/runfmt"
)

// factorSample is one end of the load window as /proc and the writer's counters saw it
// (see runfmt.VarianceFactors).
type factorSample struct {
	writer     evitaserver.ProcSample
	jit        evitaserver.JIT
	machine    evitaserver.MachineCPU
	reader     time.Duration
	werr, jerr error
	merr, rerr error
	hasReader  bool
	cost       time.Duration
	uptime     time.Duration // the writer's, when the sample began: the GC log's clock
	// the embedded writer's applying thread: its own counters and the kernel's account
	hasTally   bool
	tally      embedded.Tally
	sched      evitaserver.Sched
	terr, serr error
}

// sampleFactors reads the factors of the writer, the reader (nil for a replay), the
// embedded writer's applying thread (ew nil: a remote writer) and the machine.
func sampleFactors(writer, reader *evitaserver.Server, ew *embedded.Writer) factorSample {
	begin := time.Now()
	var f factorSample
	f.uptime = writer.Uptime()
	if ew != nil {
		f.hasTally = true
		f.tally, f.terr = ew.Tally()
		if f.terr == nil && f.tally.TID < 0 {
			f.terr = errors.New("the JVM did not say which thread applies the upserts")
		}
		if f.terr == nil {
			f.sched, f.serr = evitaserver.ThreadSched(writer.Pid(), f.tally.TID)
		}
	}
	f.writer, f.werr = evitaserver.SampleProc(writer.Pid())
	f.jit, f.jerr = evitaserver.ReadJIT(writer.Pid())
	f.machine, f.merr = evitaserver.ReadMachineCPU()
	if reader != nil {
		f.hasReader = true
		f.reader, f.rerr = reader.CPU()
	}
	f.cost = time.Since(begin)
	return f
}

// factorsBetween is what happened from b (the window's start) to e (its end).
func factorsBetween(b, e factorSample) *runfmt.VarianceFactors {
	v := &runfmt.VarianceFactors{CostNs: (b.cost + e.cost).Nanoseconds()}
	ptr := func(x int64) *int64 { return &x }
	var errs []string
	fail := func(what string, err error) { errs = append(errs, what+": "+err.Error()) }
	if err := errors.Join(b.werr, e.werr); err != nil {
		fail("writer /proc", err)
	} else {
		d := e.writer.Since(b.writer)
		v.WriterCPUNs = map[string]int64{}
		for g, ns := range d.CPU {
			v.WriterCPUNs[g] = ns.Nanoseconds()
		}
		v.WriterMinorFaults, v.WriterMajorFaults = ptr(d.MinorFaults), ptr(d.MajorFaults)
		v.WriterVoluntarySwitches, v.WriterInvoluntarySwitches = ptr(d.VoluntarySwitches), ptr(d.InvoluntarySwitches)
		if d.Wait != nil {
			v.WriterWaitNs = map[string]int64{}
			for g, ns := range d.Wait {
				v.WriterWaitNs[g] = ns.Nanoseconds()
			}
		}
	}
	if b.hasTally {
		if err := errors.Join(b.terr, e.terr); err != nil {
			fail("the embedded writer's tally", err)
		} else if b.tally.TID != e.tally.TID {
			fail("the embedded writer's tally", fmt.Errorf("thread %d at the start, %d at the end", b.tally.TID, e.tally.TID))
		} else {
			t := &runfmt.ThreadTally{TID: e.tally.TID, CPUNs: e.tally.CPUNs - b.tally.CPUNs, AllocBytes: e.tally.AllocBytes - b.tally.AllocBytes}
			if b.serr == nil && e.serr == nil {
				t.SchedCPUNs, t.WaitNs = ptr((e.sched.CPU - b.sched.CPU).Nanoseconds()), ptr((e.sched.Wait - b.sched.Wait).Nanoseconds())
			}
			v.UpsertThread = t
		}
	}
	if err := errors.Join(b.jerr, e.jerr); err != nil {
		fail("writer JIT counters", err)
	} else {
		v.JITCompileNs, v.JITCompiles = ptr((e.jit.CompileTime - b.jit.CompileTime).Nanoseconds()), ptr(e.jit.Compiles-b.jit.Compiles)
	}
	if err := errors.Join(b.merr, e.merr); err != nil {
		fail("/proc/stat", err)
	} else {
		v.StealNs, v.MachineCPUNs = ptr((e.machine.Steal - b.machine.Steal).Nanoseconds()), ptr((e.machine.Total - b.machine.Total).Nanoseconds())
	}
	if b.hasReader {
		if err := errors.Join(b.rerr, e.rerr); err != nil {
			fail("reader /proc", err)
		} else {
			v.ReaderCPUNs = ptr((e.reader - b.reader).Nanoseconds())
		}
	}
	if len(errs) > 0 {
		v.Error = fmt.Sprintf("not read: %s", strings.Join(errs, "; "))
	}
	return v
}
