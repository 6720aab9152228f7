package loader

import (
	"errors"
	"path/filepath"
	"testing"
)

// A run directory and a work directory one inside the other are refused: the work
// directory is emptied before every run, which would destroy the run.
func TestCheckNestingRefusesOneInsideTheOther(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	for _, c := range []struct {
		work   string
		nested bool
	}{
		{WorkDir(run, ""), false}, // the default, beside the run
		{filepath.Join(dir, "elsewhere"), false},
		{run, true},
		{filepath.Join(run, "work"), true},
		{dir, true},                         // the run inside the work directory
		{filepath.Join(dir, "run2"), false}, // a shared prefix is not nesting
	} {
		if err := CheckNesting(run, c.work); errors.Is(err, ErrNested) != c.nested {
			t.Errorf("CheckNesting(%s, %s) = %v, want nested %v", run, c.work, err, c.nested)
		}
	}
	if got := WorkDir("runs/x", ""); got != "runs/x.work" {
		t.Errorf("WorkDir default = %s, want runs/x.work", got)
	}
	if got := WorkDir("runs/x", "w"); got != "w" {
		t.Errorf("WorkDir given = %s, want w", got)
	}
}

// The writer takes JVM options, never a heap size: warmstat pins the heap itself and
// records it.
func TestCheckWriterJVMOptions(t *testing.T) {
	if err := CheckWriterJVMOptions([]string{"-XX:+UseParallelGC", "-Dfoo=bar"}); err != nil {
		t.Errorf("ordinary options refused: %v", err)
	}
	for _, o := range []string{"-Xmx4g", "-Xms1g", "-XX:MaxHeapSize=4g", "UseG1GC"} {
		var je *JVMOptionError
		if err := CheckWriterJVMOptions([]string{"-ea", o}); !errors.As(err, &je) || je.Option != o {
			t.Errorf("%s: got %v, want a JVMOptionError naming it", o, err)
		}
	}
}
