package evitaserver

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Thread groups of a JVM, by the names HotSpot, Armeria, gRPC and evitaDB give their
// threads: what the writer's CPU went to.
const (
	ThreadsRequest = "request" // event loops, request and transaction workers (Armeria, gRPC, evitaDB's Evita-*; the embedded writer's main and applying threads)
	ThreadsJIT     = "jit"     // C1 and C2 compiler threads
	ThreadsGC      = "gc"      // GC workers, concurrent and refinement threads, the VM thread (safepoint operations)
	ThreadsOther   = "other"
)

// threadGroup names the group of a thread by its name (15 characters at most in
// /proc/.../comm).
func threadGroup(name string) string {
	switch {
	case strings.HasPrefix(name, "C1 Compiler"), strings.HasPrefix(name, "C2 Compiler"), strings.HasPrefix(name, "Compiler"):
		return ThreadsJIT
	case strings.HasPrefix(name, "GC Thread"), strings.HasPrefix(name, "G1 "), strings.HasPrefix(name, "VM Thread"),
		strings.HasPrefix(name, "GC "), strings.HasPrefix(name, "ZWorker"), strings.HasPrefix(name, "Shenandoah"):
		return ThreadsGC
	case strings.HasPrefix(name, "armeria"), strings.HasPrefix(name, "grpc"), strings.HasPrefix(strings.ToLower(name), "evita"),
		strings.HasPrefix(name, "ForkJoinPool"), strings.HasPrefix(name, "pool-"), name == "main", name == "java",
		strings.HasPrefix(name, "warmstat-"):
		// "java": the launcher's threads keep the binary's name; the embedded writer's
		// main thread, which reads and parses its requests, is one of them, and its
		// warmstat-apply thread applies them
		return ThreadsRequest
	}
	return ThreadsOther
}

// ProcSample is what /proc says about a process at one moment: the CPU of each of its
// threads (with the thread's group), its page faults and context switches.
type ProcSample struct {
	threads             map[int]threadCPU
	total               time.Duration // the process's CPU (its ended threads included)
	MinorFaults         int64
	MajorFaults         int64
	VoluntarySwitches   int64 // summed over the threads alive at the sample
	InvoluntarySwitches int64
	ReadCost            time.Duration // how long reading it took
}

type threadCPU struct {
	group string
	cpu   time.Duration
	wait  time.Duration // schedstat's run_delay: ready to run, waiting for a CPU (-1: unknown)
}

// Total is the process's CPU time (user and system, its ended threads included), as
// Server.CPU reads it.
func (s ProcSample) Total() time.Duration { return s.total }

// SampleProc reads pid and its threads from /proc. A thread that ends while it is read
// is skipped (its CPU stays in the process's total).
func SampleProc(pid int) (ProcSample, error) {
	begin := time.Now()
	s := ProcSample{threads: map[int]threadCPU{}}
	stat, err := readStat(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	s.total = ticks(stat[11] + stat[12])
	s.MinorFaults, s.MajorFaults = stat[7], stat[9]
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	if err != nil {
		return s, err
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(filepath.Base(task))
		if err != nil {
			continue
		}
		ts, err := readStat(filepath.Join(task, "stat"))
		if err != nil {
			continue // gone
		}
		comm, _ := os.ReadFile(filepath.Join(task, "comm"))
		wait := time.Duration(-1)
		if st, err := ReadSchedstat(filepath.Join(task, "schedstat")); err == nil {
			wait = st.Wait
		}
		s.threads[tid] = threadCPU{threadGroup(strings.TrimSpace(string(comm))), ticks(ts[11] + ts[12]), wait}
		if v, n, err := switches(filepath.Join(task, "status")); err == nil {
			s.VoluntarySwitches += v
			s.InvoluntarySwitches += n
		}
	}
	s.ReadCost = time.Since(begin)
	return s, nil
}

// ProcDelta is what a process did between two samples.
type ProcDelta struct {
	CPU map[string]time.Duration // by thread group; threads that ended between the samples count as other
	// Wait is the run-queue delay by thread group: time its threads were ready to run
	// and waited for a CPU (of the threads alive at the end; nil when the kernel keeps
	// no schedstat)
	Wait                map[string]time.Duration
	MinorFaults         int64
	MajorFaults         int64
	VoluntarySwitches   int64 // of the threads alive at the end (a thread's switches end with it)
	InvoluntarySwitches int64
}

// Since is what the process did from earlier to s.
func (s ProcSample) Since(earlier ProcSample) ProcDelta {
	d := ProcDelta{CPU: map[string]time.Duration{ThreadsRequest: 0, ThreadsJIT: 0, ThreadsGC: 0, ThreadsOther: 0},
		MinorFaults: s.MinorFaults - earlier.MinorFaults, MajorFaults: s.MajorFaults - earlier.MajorFaults,
		VoluntarySwitches: s.VoluntarySwitches - earlier.VoluntarySwitches, InvoluntarySwitches: s.InvoluntarySwitches - earlier.InvoluntarySwitches}
	var threads time.Duration
	d.Wait = map[string]time.Duration{ThreadsRequest: 0, ThreadsJIT: 0, ThreadsGC: 0, ThreadsOther: 0}
	for tid, t := range s.threads {
		v := t.cpu - earlier.threads[tid].cpu // a thread born in between started at 0
		d.CPU[t.group] += v
		threads += v
		was, seen := earlier.threads[tid]
		switch {
		case t.wait < 0 || seen && was.wait < 0:
			d.Wait = nil
		case d.Wait != nil && seen:
			d.Wait[t.group] += t.wait - was.wait
		case d.Wait != nil:
			d.Wait[t.group] += t.wait
		}
	}
	if rest := (s.total - earlier.total) - threads; rest > 0 { // threads that ended in between
		d.CPU[ThreadsOther] += rest
	}
	d.VoluntarySwitches, d.InvoluntarySwitches = max(0, d.VoluntarySwitches), max(0, d.InvoluntarySwitches)
	return d
}

// Sched is one thread's scheduler account (/proc/PID/task/TID/schedstat): time on a
// CPU, time waiting on the run queue for one, both exact to the ns (the kernel's clock).
type Sched struct {
	CPU, Wait time.Duration
}

// ReadSchedstat reads a schedstat file ("cpu_ns run_delay_ns timeslices").
func ReadSchedstat(path string) (Sched, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Sched{}, err
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return Sched{}, fmt.Errorf("unreadable %s: %q", path, b)
	}
	cpu, err1 := strconv.ParseInt(f[0], 10, 64)
	wait, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil || cpu < 0 || wait < 0 {
		return Sched{}, fmt.Errorf("unreadable %s: %q", path, b)
	}
	return Sched{time.Duration(cpu), time.Duration(wait)}, nil
}

// ThreadSched reads the scheduler account of thread tid of process pid.
func ThreadSched(pid, tid int) (Sched, error) {
	return ReadSchedstat(fmt.Sprintf("/proc/%d/task/%d/schedstat", pid, tid))
}

// readStat parses a /proc stat line into its numeric fields after the command name
// (field 3 onwards, so field n is at index n-3; non-numeric fields are 0).
func readStat(path string) ([]int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, ')') // the name may hold spaces and parentheses
	if i < 0 {
		return nil, fmt.Errorf("unreadable %s", path)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return nil, fmt.Errorf("short %s", path)
	}
	out := make([]int64, len(f))
	for k, x := range f {
		out[k], _ = strconv.ParseInt(x, 10, 64)
	}
	return out, nil
}

func ticks(n int64) time.Duration { return time.Duration(n) * time.Second / clockTicks }

func switches(path string) (vol, invol int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch k {
		case "voluntary_ctxt_switches":
			vol = n
		case "nonvoluntary_ctxt_switches":
			invol = n
		}
	}
	return vol, invol, sc.Err()
}

// MachineCPU is the machine's CPU time so far from /proc/stat's cpu line: all of it,
// and what the hypervisor took (steal).
type MachineCPU struct {
	Total, Steal time.Duration
}

// ReadMachineCPU reads /proc/stat.
func ReadMachineCPU() (MachineCPU, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return MachineCPU{}, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 9 || fields[0] != "cpu" {
			continue
		}
		var m MachineCPU
		for k, x := range fields[1:] {
			n, _ := strconv.ParseInt(x, 10, 64)
			if k < 8 { // user nice system idle iowait irq softirq steal (guest is inside user)
				m.Total += ticks(n)
			}
			if k == 7 {
				m.Steal = ticks(n)
			}
		}
		return m, nil
	}
	return MachineCPU{}, fmt.Errorf("/proc/stat has no cpu line")
}

// PeakRSS is a process's peak resident memory so far (VmHWM in /proc/PID/status).
func PeakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(v)
			if len(f) != 2 || f[1] != "kB" {
				return 0, fmt.Errorf("/proc/%d/status: VmHWM %q is not a size in kB", pid, strings.TrimSpace(v))
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/%d/status: VmHWM %q: %w", pid, f[0], err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no VmHWM", pid)
}

// OwnPeakRSS is this process's peak resident memory so far (getrusage's maxrss, in kB
// on Linux).
func OwnPeakRSS() (int64, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return ru.Maxrss << 10, nil
}
