package series

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Machine is the machine's state around one run, so that a disturbed run can be
// explained: the load average, the CPU the rest of the machine used while the run
// was measured, and the memory available.
type Machine struct {
	LoadAvgBefore    float64 `json:"load_avg_1m_before"`
	LoadAvgAfter     float64 `json:"load_avg_1m_after"`
	OtherCPUPct      float64 `json:"other_processes_cpu_pct"` // of the machine's capacity, outside warmstat and its JVMs
	MemAvailableFrom int64   `json:"mem_available_before_bytes"`
	MemAvailableTo   int64   `json:"mem_available_after_bytes"`
}

// probe is one reading of the machine.
type probe struct {
	loadAvg  float64
	memAvail int64
	busy     float64 // all CPUs' busy time, s
	total    float64 // all CPUs' time, s
	ours     float64 // this process and its waited-for children (the JVMs), s
}

func readProbe() probe {
	var p probe
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			p.loadAvg, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
				p.memAvail = kb << 10
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
		for i, v := range f[1:] {
			x, _ := strconv.ParseFloat(v, 64)
			p.total += x / 100 // USER_HZ
			if i != 3 && i != 4 {
				p.busy += x / 100
			}
		}
	}
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			p.ours += float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
		}
	}
	return p
}

// machine is the state between two readings.
func machine(before, after probe) *Machine {
	m := &Machine{LoadAvgBefore: before.loadAvg, LoadAvgAfter: after.loadAvg, MemAvailableFrom: before.memAvail, MemAvailableTo: after.memAvail}
	if total := after.total - before.total; total > 0 {
		other := (after.busy - before.busy) - (after.ours - before.ours)
		m.OtherCPUPct = max(0, 100*other/total)
	}
	return m
}
