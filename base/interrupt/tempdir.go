package interrupt

import "os"

// WithTempDir runs work in a new directory of its own (os.MkdirTemp(parent, pattern)),
// removed whole afterwards. A stop at once removes it too: work's deferred removal never
// runs after os.Exit, so the directory is held in RemoveOnStop while work runs, and once
// it is gone this goroutine waits for the stop's exit rather than go on as if finished.
func WithTempDir(parent, pattern string, work func(dir string) error) error {
	dir, err := os.MkdirTemp(parent, pattern)
	if err != nil {
		return err
	}
	removed := make(chan struct{})
	RemoveOnStop.Store(dir, removed)
	defer func() {
		os.RemoveAll(dir)
		if Stopping.Load() { // the stop's goroutine exits with its code once this is gone
			close(removed)
			select {}
		}
		RemoveOnStop.Delete(dir)
	}()
	return work(dir)
}
