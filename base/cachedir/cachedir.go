// Package cachedir is where warmstat keeps what it fetches, builds and trains once per
// machine (releases, async-profiler, class archives, embedded writers, bisect builds):
// $WARMSTAT_CACHE, else $XDG_CACHE_HOME/warmstat, else ~/.cache/warmstat — the rule the
// fetch scripts (scripts/fetch-evita.sh, scripts/fetch-profiler.sh) follow too, so that
// warmstat looks where make evita and make profiler put things.
package cachedir

import (
	"os"
	"path/filepath"
)

// Root is warmstat's cache directory.
func Root() string {
	if c := os.Getenv("WARMSTAT_CACHE"); c != "" {
		return c
	}
	base, err := os.UserCacheDir() // $XDG_CACHE_HOME or ~/.cache
	if err != nil {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "warmstat")
}
