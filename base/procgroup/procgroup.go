// Package procgroup keeps the process groups warmstat started for work of its own (a
// bisect's build command), so that a stop at once can end them as a whole: killing only
// the direct child would leave its children (mvn's forked JVMs) running on, reparented,
// after warmstat has gone.
package procgroup

import (
	"sync"
	"syscall"
)

var (
	mu     sync.Mutex
	groups = map[int]struct{}{}
)

// Track records a started process that leads its own group (Setpgid); the returned
// function forgets it again once it has ended.
func Track(pid int) (forget func()) {
	mu.Lock()
	groups[pid] = struct{}{}
	mu.Unlock()
	return func() {
		mu.Lock()
		delete(groups, pid)
		mu.Unlock()
	}
}

// KillAll sends SIGKILL to every tracked group still running and returns how many it
// reached.
func KillAll() int {
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for pid := range groups {
		if syscall.Kill(-pid, syscall.SIGKILL) == nil {
			n++
		}
	}
	return n
}
