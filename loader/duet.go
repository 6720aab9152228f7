package loader

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/runfmt"
)

// A duet is two spawn-mode replays of the same workload, one per build, at the same
// time, so that what the machine does to one (steal, a neighbour, the page cache, a
// thermal step) it does to the other in the same moment. They meet at barriers: both
// writers booted and warmed before either measured load starts; the measured loads in
// lock-step by batch (neither begins batch k+1 before both ended batch k); goLive once
// both loads ended. Each writer runs on a CPU set of its own; the loader is not
// pinned, and disturbs both alike. A side that fails breaks the barriers: its partner
// stops at the next one, and neither run is a duet's run any more.

// ErrPartnerEnded: a duet's other run ended (failed, or was stopped) before the
// barrier this run waited at.
var ErrPartnerEnded = errors.New("the duet's partner run ended")

// DuetPart is one side of a duet: its writer and its load. Load.Replay must be set
// (a duet replays a workload: two readers would add two more JVMs to the machine).
type DuetPart struct {
	Spawn SpawnConfig
	Load  Config
}

// Duet runs parts[0] in slot 1 and parts[1] in slot 2 at once, their writers on
// cpus[0] and cpus[1] (nil: not pinned, every CPU this process may use), in lock-step. It returns both results and both errors, as two
// Spawn calls would: a side the other's failure stopped fails with ErrPartnerEnded.
func Duet(ctx context.Context, parts [2]DuetPart, cpus [2][]int) ([2]*Result, [2]error) {
	var res [2]*Result
	var errs [2]error
	for i := range parts {
		if parts[i].Load.Replay == nil {
			errs[i] = errors.New("a duet replays a workload file: both sides need one")
		}
	}
	if errs[0] != nil || errs[1] != nil {
		return res, errs
	}
	b := &barrier{}
	var wg sync.WaitGroup
	for i := range parts {
		p, other := parts[i], parts[1-i]
		p.Spawn.CPUs = cpus[i]
		p.Load.Duet = &duetSide{b: b, rec: &runfmt.Duet{Partner: other.Load.Manifest.RunID, PartnerBuild: other.Load.Manifest.Build.Label,
			Slot: i + 1, CPUs: evitaserver.FormatCPUs(cpus[i])}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i], errs[i] = Spawn(ctx, p.Spawn, p.Load)
			cause := errs[i]
			if cause == nil && res[i] != nil && res[i].Manifest.ExitCode != 0 {
				cause = fmt.Errorf("exit code %d (%s)", res[i].Manifest.ExitCode, res[i].Manifest.Outcome.Status)
			}
			b.leave(fmt.Sprintf("slot %d (%s)", i+1, p.Load.Manifest.RunID), cause)
		}()
	}
	wg.Wait()
	return res, errs
}

// duetSide is one run's place in a duet: the barrier both runs meet at, and its
// record, which the waits fill as the run goes (the manifest holds the same record).
type duetSide struct {
	b   *barrier
	rec *runfmt.Duet
}

// meet waits at the barrier called name until the partner reaches it too, adding the
// wait to *waited.
func (d *duetSide) meet(ctx context.Context, name string, waited *int64) error {
	t0 := time.Now()
	err := d.b.meet(ctx, name)
	*waited += time.Since(t0).Nanoseconds()
	return err
}

// pinned records what the kernel has for every writer thread's CPUs once it is warm.
func (d *duetSide) pinned(pid int) {
	lists, err := evitaserver.CPUsAllowedThreads(pid)
	if err != nil || len(lists) == 0 {
		return
	}
	if len(lists) == 1 {
		d.rec.CPUsAllowed = slices.Collect(maps.Keys(lists))[0]
		return
	}
	var parts []string
	for _, l := range slices.Sorted(maps.Keys(lists)) {
		parts = append(parts, fmt.Sprintf("%s (%d threads)", l, lists[l]))
	}
	d.rec.CPUsAllowed = strings.Join(parts, "; ")
}

// barrier is the meeting point of a duet's two runs: the first to arrive at a named
// barrier waits for the second; both must name the same barrier (the same workload
// has the same batches). Once a side has left (its run ended), every wait fails.
type barrier struct {
	mu     sync.Mutex
	cur    *round
	broken error
}

type round struct {
	name string
	done chan struct{}
	err  error
}

func (b *barrier) meet(ctx context.Context, name string) error {
	b.mu.Lock()
	if b.broken != nil {
		b.mu.Unlock()
		return b.broken
	}
	if r := b.cur; r != nil { // the partner is waiting: release it
		b.cur = nil
		if r.name != name {
			b.broken = fmt.Errorf("the duet's runs parted: one at %s, the other at %s (do both replay the same workload?)", r.name, name)
			r.err = b.broken
		}
		close(r.done)
		b.mu.Unlock()
		return r.err
	}
	r := &round{name: name, done: make(chan struct{})}
	b.cur = r
	b.mu.Unlock()
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		b.mu.Lock()
		if b.cur == r {
			b.cur = nil
		}
		b.mu.Unlock()
		return ctx.Err()
	}
}

// leave records that a side's run ended (err its failure, nil when it finished): a
// partner waiting now, or later, is released with ErrPartnerEnded.
func (b *barrier) leave(who string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.broken == nil {
		why := "finished"
		if err != nil {
			why = "failed: " + err.Error()
		}
		b.broken = fmt.Errorf("%w: %s %s", ErrPartnerEnded, who, why)
	}
	if r := b.cur; r != nil {
		b.cur = nil
		r.err = b.broken
		close(r.done)
	}
}
