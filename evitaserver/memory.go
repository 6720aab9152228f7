package evitaserver

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/warmstat/warmstat/runfmt"
)

// Machine is what the manifest records about where a run happened.
type Machine struct {
	Cores       int
	MemoryBytes int64  // MemTotal
	CgroupLimit *int64 // nil when the cgroup sets no limit or none can be read
	LimitSource string // the file the limit came from
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
)

// ReadMachine reads cores, MemTotal and the cgroup memory limit.
func ReadMachine() (Machine, error) {
	m := Machine{Cores: runtime.NumCPU()}
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

// JVMOverhead is what a JVM needs beside its heap (metaspace, code cache, thread
// stacks, GC structures, direct buffers): 10 % of the heap, at least 512 MiB.
func JVMOverhead(heap int64) int64 { return max(heap/10, 512<<20) }

// CheckHeapsFit refuses heaps (named, e.g. "writer": 23g) whose sum plus per-JVM
// overhead exceeds the machine's effective memory: an undersized machine turns the
// load GC- or swap-bound and the run would measure that instead of the write path.
func CheckHeapsFit(m Machine, heaps map[string]int64) error {
	var total int64
	var parts []string
	for _, name := range []string{"writer", "reader"} {
		h, ok := heaps[name]
		if !ok {
			continue
		}
		total += h + JVMOverhead(h)
		parts = append(parts, fmt.Sprintf("%s %s + %s overhead", name, runfmt.FormatBytes(&h), fmtBytes(JVMOverhead(h))))
	}
	limit := m.Effective()
	if total > limit {
		src := "MemTotal"
		if m.CgroupLimit != nil && *m.CgroupLimit < m.MemoryBytes {
			src = "cgroup " + m.LimitSource
		}
		return fmt.Errorf("%w: %s = %s needed, but the memory limit is %s (%s); lower the heaps",
			ErrHeapsDoNotFit, strings.Join(parts, ", "), fmtBytes(total), fmtBytes(limit), src)
	}
	return nil
}

// ErrHeapsDoNotFit is what CheckHeapsFit's refusal wraps.
var ErrHeapsDoNotFit = errors.New("heaps do not fit")

func fmtBytes(v int64) string { return runfmt.FormatBytes(&v) }
