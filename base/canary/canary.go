// Package canary measures how fast the machine is while a load runs: a fixed piece of
// work, done every Period on a thread of its own and timed by that thread's CPU clock,
// takes longer when the machine is slower. On the virtual machines warmstat runs on,
// the host's other tenants make the same vCPU faster or slower by ±10 % within a
// minute (measured: the same loop of fixed work took from 600 to 750 µs as minutes
// passed, and drifted so between loads too), and every thread of a JVM slows with it — its request,
// JIT and GC threads alike. A load cannot tell that from a slower build; the canary,
// which never changes, can: a build does not make it slower (its CPU clock excludes
// the time it waits for a CPU), the machine does.
//
// The work is three kinds, each a few hundred µs: an arithmetic loop (the core's
// speed), a pointer chase through 8 MiB (the shared cache) and one through 32 MiB
// (memory). Their medians over a window are its figures; analyze relates a load's
// figures to them (a regression adjustment, CUPED).
package canary

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Period is how often the canary works: about 1 % of one CPU.
const Period = 100 * time.Millisecond

// The work of one sample of each kind: a few hundred µs each on this project's
// machines (2.1 GHz Xeon, KVM).
const (
	aluSteps  = 150_000
	l3Steps   = 3_000
	dramSteps = 1_500
	l3Words   = 2 << 20 // 8 MiB of uint32
	dramWords = 8 << 20 // 32 MiB
)

// Figures are the medians of a window's samples, in ns of the canary thread's CPU: the
// time the same work took.
type Figures struct {
	Samples int
	ALUNs   float64
	L3Ns    float64
	DRAMNs  float64
}

// Canary is a running canary.
type Canary struct {
	stop  chan struct{}
	done  chan struct{}
	start time.Time
	mu    sync.Mutex
	at    []int64 // each sample's start, in ns since Start
	alu   []int64
	l3    []int64
	dram  []int64
}

// Sample is one sample: when it began (ns since Start) and what each kind of work took.
type Sample struct {
	AtNs, ALUNs, L3Ns, DRAMNs int64
}

var (
	cyclesOnce sync.Once
	l3Cycle    []uint32
	dramCycle  []uint32
)

// Prepare makes the chases' random cycles (40 MiB, ~0.3 s of CPU) if they are not made
// yet: a caller does it before the window it measures, so that Start costs nothing.
func Prepare() { cycles() }

// cycles are the chases' random cycles, made once per process: a series' runs share them.
func cycles() ([]uint32, []uint32) {
	cyclesOnce.Do(func() {
		r := rand.New(rand.NewPCG(1, 2))
		l3Cycle, dramCycle = cycle(r, l3Words), cycle(r, dramWords)
	})
	return l3Cycle, dramCycle
}

// cycle is a random cyclic permutation: following next from any index visits all.
func cycle(r *rand.Rand, n int) []uint32 {
	p := r.Perm(n)
	next := make([]uint32, n)
	for i := range n {
		next[p[i]] = uint32(p[(i+1)%n])
	}
	return next
}

// Start starts the canary; Stop ends it and returns its figures.
func Start() *Canary {
	l3, dram := cycles()
	c := &Canary{stop: make(chan struct{}), done: make(chan struct{}), start: time.Now()}
	go c.run(l3, dram)
	return c
}

func (c *Canary) run(l3, dram []uint32) {
	defer close(c.done)
	runtime.LockOSThread() // the thread's CPU clock must be this goroutine's alone
	defer runtime.UnlockOSThread()
	t := time.NewTicker(Period)
	defer t.Stop()
	for {
		at := time.Since(c.start).Nanoseconds()
		a, b, d := timed(func() { alu(aluSteps) }), timed(func() { chase(l3, l3Steps) }), timed(func() { chase(dram, dramSteps) })
		c.mu.Lock()
		c.at, c.alu, c.l3, c.dram = append(c.at, at), append(c.alu, a), append(c.l3, b), append(c.dram, d)
		c.mu.Unlock()
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
	}
}

// Stop ends the canary and returns the medians of its samples (Samples 0: none, or a
// thread clock this system does not have).
func (c *Canary) Stop() Figures {
	close(c.stop)
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.alu) == 0 || slices.Contains(c.alu, -1) {
		return Figures{}
	}
	return Figures{Samples: len(c.alu), ALUNs: median(c.alu), L3Ns: median(c.l3), DRAMNs: median(c.dram)}
}

// Samples are every sample so far, in order: the machine's speed through the window,
// where the figures are its medians (a load's stretches are set against it).
func (c *Canary) Samples() []Sample {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Sample, len(c.at))
	for i := range c.at {
		out[i] = Sample{AtNs: c.at[i], ALUNs: c.alu[i], L3Ns: c.l3[i], DRAMNs: c.dram[i]}
	}
	return out
}

func median(v []int64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return float64(s[n/2])
	}
	return float64(s[n/2-1]+s[n/2]) / 2
}

// timed is f's CPU time on this thread, in ns (-1 when the clock cannot be read).
func timed(f func()) int64 {
	c0 := threadCPU()
	f()
	c1 := threadCPU()
	if c0 < 0 || c1 < 0 {
		return -1
	}
	return c1 - c0
}

func threadCPU() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return -1
	}
	return ts.Nano()
}

// sink keeps the work's results, so that the compiler keeps the work.
var sink atomic.Uint64

// alu is a xorshift loop: each step depends on the last, no memory.
func alu(n int) {
	x := uint64(88172645463325252)
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	sink.Add(x)
}

// chase follows a random cycle: each step a dependent load from a random place.
func chase(next []uint32, n int) {
	j := uint32(0)
	for range n {
		j = next[j]
	}
	sink.Add(uint64(j))
}
