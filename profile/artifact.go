package profile

import (
	"errors"
	"fmt"
	"github.com/warmstat/warmstat/base/cachedir"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// AsyncProfilerVersion is the async-profiler release make profiler fetches
// (tools.profiler:async-profiler and tools.profiler:jfr-converter on Maven Central).
const AsyncProfilerVersion = "4.2"

// Artifact is a fetched async-profiler: the agent library for this machine and the
// converter from JFR recordings to folded stacks and flame graphs.
type Artifact struct {
	Version   string
	Dir       string
	Lib       string // libasyncProfiler.so for this machine's architecture
	Converter string // jfr-converter.jar
}

// ErrNotFetched: the profiler is not in the cache; make profiler fetches it.
var ErrNotFetched = errors.New("async-profiler is not fetched")

// FetchDir is where make profiler puts async-profiler: async-profiler/ in warmstat's
// cache (internal/cachedir, the rule scripts/fetch-profiler.sh follows too).
func FetchDir() string {
	return filepath.Join(cachedir.Root(), "async-profiler")
}

// platform is async-profiler's name for this machine (its native libraries exist for
// linux-x64 and linux-arm64).
func platform() (string, error) {
	if runtime.GOOS != "linux" {
		return "", fmt.Errorf("async-profiler's agent is fetched for Linux only, this is %s", runtime.GOOS)
	}
	switch runtime.GOARCH {
	case "amd64":
		return "linux-x64", nil
	case "arm64":
		return "linux-arm64", nil
	}
	return "", fmt.Errorf("async-profiler ships no library for linux/%s", runtime.GOARCH)
}

// Fetched is the async-profiler release version in the cache, checked complete.
func Fetched(version string) (Artifact, error) {
	plat, err := platform()
	if err != nil {
		return Artifact{}, err
	}
	dir := filepath.Join(FetchDir(), version)
	a := Artifact{Version: version, Dir: dir, Lib: filepath.Join(dir, plat, "libasyncProfiler.so"),
		Converter: filepath.Join(dir, "jfr-converter.jar")}
	done, err := os.ReadFile(filepath.Join(dir, ".complete"))
	if err != nil {
		return a, fmt.Errorf("%w: %s has no async-profiler %s (make profiler fetches it)", ErrNotFetched, FetchDir(), version)
	}
	for _, f := range []string{a.Lib, a.Converter} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			return a, fmt.Errorf("%w: %s is missing from %s (%s); remove the directory and run make profiler again",
				ErrNotFetched, filepath.Base(f), dir, strings.TrimSpace(string(done)))
		}
	}
	return a, nil
}
