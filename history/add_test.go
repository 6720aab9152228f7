package history

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/runfmt"
)

// Runs are found wherever they lie (a run, a series' sides), runs of two builds placed
// by one order are refused before a history is made, and a run of other conditions
// than the history's lines is said to begin a line of its own, the history's first run
// is not.
func TestAddRuns(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	ser := filepath.Join(tmp, "series")
	two := synthLine(t, filepath.Join(ser, "A"), 2, 9, 1, nil) // two builds: c00, c01
	if dirs, err := RunDirs(ser); err != nil || !slices.Equal(dirs, two) {
		t.Fatalf("a series' runs: %v, %v; want %v", dirs, err, two)
	}
	if dirs, err := RunDirs(two[0]); err != nil || !slices.Equal(dirs, two[:1]) {
		t.Fatalf("a run: %v, %v", dirs, err)
	}
	if _, err := RunDirs(tmp + "/none"); err == nil {
		t.Fatal("a path without runs was read as runs")
	}

	hist := filepath.Join(tmp, "hist")
	o := 3
	_, err := AddRuns(ctx, hist, []string{ser}, Placement{Order: &o}, time.Now())
	var many *ManyBuildsError
	if !errors.As(err, &many) || !slices.Equal(many.Builds, []string{"c00", "c01"}) {
		t.Fatalf("two builds at one order: %v", err)
	}
	if _, err := os.Stat(hist); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused add made the history: %v", err)
	}

	added, err := AddRuns(ctx, hist, two[:1], Placement{Order: &o}, time.Now())
	if err != nil || len(added) != 1 || added[0].NewLine || added[0].File() == "" {
		t.Fatalf("the first run: %+v, %v", added, err)
	}
	other := synthLine(t, filepath.Join(tmp, "other"), 1, 9, 1, func(m *runfmt.Manifest) {
		h := int64(8 << 30)
		m.Server.MaxHeapBytes = &h
		later := m.StartedAt.Add(time.Hour)
		m.StartedAt = &later
	})
	o = 4
	added, err = AddRuns(ctx, hist, other, Placement{Order: &o}, time.Now())
	if err != nil || len(added) != 1 || !added[0].NewLine {
		t.Fatalf("a run of another heap: %+v, %v", added, err)
	}
	if _, err := AddRuns(ctx, hist, two[:1], Placement{Order: &o}, time.Now()); err == nil {
		t.Fatal("a run added twice")
	}

	st, lines, err := AnalyseAll(ctx, hist, "", analyze.ChangePointOptions{AlphaPct: 0.5})
	if err != nil || st == nil || len(lines) != 2 {
		t.Fatalf("analysed: %d lines, %v", len(lines), err)
	}
}
