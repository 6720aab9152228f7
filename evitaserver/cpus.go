package evitaserver

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The CPU placement of a JVM (a duet's writers, each on a CPU set of its own). The JVM
// is started with its CPU set already in force — its first thread inherits it — so
// that it sizes its GC and compiler threads for the CPUs it has, and every thread it
// ever makes stays on them; -XX:ActiveProcessorCount says the same to the JVM in words
// (recorded with its options).

// AvailableCPUs are the CPUs this process may run on, ascending.
func AvailableCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("reading this process's CPU affinity: %w", err)
	}
	var out []int
	for i := range len(set) * 64 {
		if set.IsSet(i) {
			out = append(out, i)
		}
	}
	return out, nil
}

// SplitCPUs divides cpus into two disjoint sets of equal size for two JVMs that run at
// once; with an odd count the last CPU is in neither (the loader and the machine keep
// it). Fewer than two CPUs cannot be split.
func SplitCPUs(cpus []int) ([2][]int, error) {
	if len(cpus) < 2 {
		return [2][]int{}, fmt.Errorf("two writers pinned to CPU sets of their own need at least 2 CPUs; this process may use %d (%s)", len(cpus), FormatCPUs(cpus))
	}
	h := len(cpus) / 2
	return [2][]int{slices.Clone(cpus[:h]), slices.Clone(cpus[h : 2*h])}, nil
}

// FormatCPUs renders a CPU set as Linux lists it: "0", "0-3", "0,2,4-5".
func FormatCPUs(cpus []int) string {
	s := slices.Clone(cpus)
	slices.Sort(s)
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(s[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", s[i], s[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// startPinned starts cmd with its CPU affinity set to cpus: the fork happens on an OS
// thread of ours that carries that affinity, and the child inherits it. That thread
// is never given back to the Go scheduler (no other goroutine runs on the narrowed
// CPUs): its goroutine stays locked to it until exited is closed, and then ends, so
// the runtime retires the thread. It must outlive the child: the kernel sends the
// child its parent-death signal (SysProcAttr.Pdeathsig) when the forking *thread*
// exits, not only when warmstat does.
func startPinned(cmd *exec.Cmd, cpus []int, exited <-chan struct{}) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		var set unix.CPUSet
		for _, c := range cpus {
			set.Set(c)
		}
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			done <- fmt.Errorf("pinning the JVM to CPUs %s: %w", FormatCPUs(cpus), err)
			return
		}
		err := cmd.Start()
		done <- err
		if err == nil {
			<-exited
		}
	}()
	return <-done
}

// CPUsAllowedThreads is the CPU lists of every thread of a process, each list with how
// many threads have it ("0: 41 threads"): a JVM pinned whole has one.
func CPUsAllowedThreads(pid int) (map[string]int, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, t.Name()))
		if err != nil {
			continue // the thread ended
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				out[strings.TrimSpace(v)]++
			}
		}
	}
	return out, nil
}
