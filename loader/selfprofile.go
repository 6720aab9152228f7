package loader

import (
	"os"
	"runtime/pprof"
)

// ProfileSelf writes warmstat's own CPU profile into path while a load runs (is the
// loader the bottleneck?); stop ends the profile, then closes the file.
func ProfileSelf(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
