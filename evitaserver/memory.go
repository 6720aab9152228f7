package evitaserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/warmstat/warmstat/runfmt"
)

// Machine is what the manifest records about where a run happened.
type Machine struct {
	Cores       int
	MemoryBytes int64  // MemTotal
	CgroupLimit *int64 // nil when the cgroup sets no limit or none can be read
	LimitSource string // the file the limit came from
	CPUModel    string // /proc/cpuinfo's first "model name"; "" if unknown
	Kernel      string // the kernel release; "" if unknown
}

// Effective is the memory a set of JVMs may use: the cgroup limit if any, else MemTotal.
func (m Machine) Effective() int64 {
	if m.CgroupLimit != nil && *m.CgroupLimit < m.MemoryBytes {
		return *m.CgroupLimit
	}
	return m.MemoryBytes
}

// cgroup files, v2 first; variables so tests can point them elsewhere.
var (
	cgroupV2Max   = "/sys/fs/cgroup/memory.max"
	cgroupV1Limit = "/sys/fs/cgroup/memory/memory.limit_in_bytes"
	procMeminfo   = "/proc/meminfo"
	procCPUInfo   = "/proc/cpuinfo"
	procKernel    = "/proc/sys/kernel/osrelease"
)

// ReadMachine reads cores, MemTotal and the cgroup memory limit.
func ReadMachine() (Machine, error) {
	m := Machine{Cores: runtime.NumCPU(), CPUModel: cpuModel()}
	if b, err := os.ReadFile(procKernel); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	f, err := os.Open(procMeminfo)
	if err != nil {
		return m, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return m, fmt.Errorf("%s: MemTotal %q: %v", procMeminfo, rest, err)
			}
			m.MemoryBytes = kb << 10
		}
	}
	if m.MemoryBytes == 0 {
		return m, fmt.Errorf("%s: no MemTotal line", procMeminfo)
	}
	for _, p := range []string{cgroupV2Max, cgroupV1Limit} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b))
		if v == "max" { // v2: no limit
			m.LimitSource = p
			break
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return m, fmt.Errorf("%s: %q is not a byte count", p, v)
		}
		if n < 1<<60 { // v1 reports "no limit" as a huge page-aligned number
			m.CgroupLimit = &n
		}
		m.LimitSource = p
		break
	}
	return m, nil
}

func cpuModel() string {
	f, err := os.Open(procCPUInfo)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// JVMOverhead is what a JVM needs beside its heap (metaspace, code cache, thread
// stacks, GC structures, direct buffers): 10 % of the heap, at least 512 MiB.
func JVMOverhead(heap int64) int64 { return max(heap/10, 512<<20) }

// CheckHeapsFit refuses heaps (named, e.g. "writer": 23g) whose sum plus per-JVM
// overhead exceeds the machine's effective memory: an undersized machine turns the
// load GC- or swap-bound and the run would measure that instead of the write path.
func CheckHeapsFit(m Machine, heaps map[string]int64) error {
	var total int64
	var parts []string
	names := slices.Sorted(maps.Keys(heaps))
	slices.Reverse(names) // "writer" before "reader", "server" alone
	for _, name := range names {
		h := heaps[name]
		total += h + JVMOverhead(h)
		parts = append(parts, fmt.Sprintf("%s %s + %s overhead", name, fmtBytesExact(h), fmtBytes(JVMOverhead(h))))
	}
	limit := m.Effective()
	if total > limit {
		src := "MemTotal"
		if m.CgroupLimit != nil && *m.CgroupLimit < m.MemoryBytes {
			src = "cgroup " + m.LimitSource
		}
		largest := ""
		if len(names) == 1 { // one JVM: say how far to lower it
			if h := LargestHeapThatFits(limit); h > 0 {
				largest = fmt.Sprintf(" (the largest %s heap that fits is %s)", names[0], fmtBytesExact(h))
			}
		}
		return fmt.Errorf("%w: %s = %s needed, but the memory limit is %s (%s); lower the heaps%s",
			ErrHeapsDoNotFit, strings.Join(parts, ", "), fmtBytes(total), fmtBytes(limit), src, largest)
	}
	return nil
}

// LargestHeapThatFits is the largest heap, in whole 256 MiB steps, that one JVM can hold
// with its overhead within limit; 0 when none does.
func LargestHeapThatFits(limit int64) int64 {
	h := limit / heapStep * heapStep
	for h > 0 && h+JVMOverhead(h) > limit {
		h -= heapStep
	}
	return h
}

// LargestHeap is the largest heap one JVM can hold on m (LargestHeapThatFits of its
// effective memory).
func (m Machine) LargestHeap() int64 { return LargestHeapThatFits(m.Effective()) }

// ErrHeapsDoNotFit is what CheckHeapsFit's refusal wraps.
var ErrHeapsDoNotFit = errors.New("heaps do not fit")

func fmtBytes(v int64) string { return runfmt.FormatBytes(&v) }

// fmtBytesExact is a heap someone set, exactly as a flag takes it.
func fmtBytesExact(v int64) string { return runfmt.FormatBytesExact(&v) }

// The memory ledger: every JVM warmstat starts reserves its heap plus overhead in a file
// under ReservationDir, flock-ed for as long as the JVM lives, so that warmstat processes
// sharing a machine (two loads, parallel test packages) never start more JVMs at once
// than the machine's memory fits. A file whose lock can be taken belongs to a process
// that is gone and is removed.
var ReservationDir = filepath.Join(os.TempDir(), "warmstat-jvm-reservations")

// reserveMemory reserves heap + overhead, waiting up to wait for others to release
// theirs; the returned function gives it back (once, whatever the number of calls).
func reserveMemory(ctx context.Context, m Machine, heap int64, wait time.Duration) (func(), error) {
	need := heap + JVMOverhead(heap)
	if err := os.MkdirAll(ReservationDir, 0o777); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		release, others, err := tryReserve(need, m.Effective())
		if err != nil || release != nil {
			return release, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("not enough memory for another JVM: it needs %s, other warmstat JVMs on this machine hold %s of the %s limit (%s)",
				fmtBytes(need), fmtBytes(others), fmtBytes(m.Effective()), ReservationDir)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// tryReserve takes a reservation when it fits; otherwise it returns what others hold.
func tryReserve(need, limit int64) (func(), int64, error) {
	guard, err := os.OpenFile(filepath.Join(ReservationDir, ".guard"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, 0, err
	}
	defer guard.Close() // closing drops the guard lock
	if err := syscall.Flock(int(guard.Fd()), syscall.LOCK_EX); err != nil {
		return nil, 0, err
	}
	var held int64
	files, _ := filepath.Glob(filepath.Join(ReservationDir, "*.res"))
	for _, p := range files {
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil { // owner gone
			os.Remove(p)
			f.Close()
			continue
		}
		b, _ := os.ReadFile(p)
		n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		held += n
		f.Close()
	}
	if held > 0 && held+need > limit { // one JVM alone is judged by CheckHeapsFit
		return nil, held, nil
	}
	f, err := os.CreateTemp(ReservationDir, fmt.Sprintf("%d-*.res", os.Getpid()))
	if err != nil {
		return nil, 0, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, 0, err
	}
	if _, err := f.WriteString(strconv.FormatInt(need, 10)); err != nil {
		f.Close()
		return nil, 0, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			os.Remove(f.Name())
			f.Close()
		})
	}, held, nil
}

// Record is the manifest's view of the machine.
func (m Machine) Record() runfmt.Machine {
	cores, mem := m.Cores, m.MemoryBytes
	return runfmt.Machine{Cores: &cores, MemoryBytes: &mem, CgroupMemoryLimitBytes: m.CgroupLimit, CPUModel: m.CPUModel, Kernel: m.Kernel}
}
