package evitaserver

import (
	"path/filepath"
	"testing"
)

// warmstat looks for fetched releases where make evita puts them (scripts/fetch-evita.sh):
// $WARMSTAT_CACHE, else $XDG_CACHE_HOME/warmstat, else ~/.cache/warmstat.
func TestFetchDirFollowsTheFetchScripts(t *testing.T) {
	t.Setenv("WARMSTAT_CACHE", "")
	t.Setenv("XDG_CACHE_HOME", "/x/cache")
	if got := FetchDir(); got != "/x/cache/warmstat/evita" {
		t.Errorf("with XDG_CACHE_HOME: %s", got)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/home/u")
	if got := FetchDir(); got != "/home/u/.cache/warmstat/evita" {
		t.Errorf("by default: %s", got)
	}
	t.Setenv("WARMSTAT_CACHE", "/w")
	if got := FetchDir(); got != "/w/evita" || ClassArchiveDir() != filepath.Join("/w", "class-archives") {
		t.Errorf("with WARMSTAT_CACHE: %s", got)
	}
}
