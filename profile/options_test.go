package profile

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// Options that cannot be used are named (Option is the field; cmd/warmstat maps it to
// its flag); defaults are the documented ones; a recorder profiles one run.
func TestOptions(t *testing.T) {
	a := Artifact{Version: "4.2", Lib: "/x/libasyncProfiler.so", Converter: "/x/jfr-converter.jar"}
	dir := t.TempDir()
	for _, c := range []struct {
		o      Options
		option string
	}{
		{Options{Mode: "heap", Artifact: a, WorkDir: dir}, "Mode"},
		{Options{Mode: "cpu", Interval: -1, Artifact: a, WorkDir: dir}, "Interval"},
		{Options{Mode: "jfr", Interval: 100000, Artifact: a, WorkDir: dir}, "Interval"},
		{Options{Mode: "cpu", WorkDir: dir}, "Artifact"},
		{Options{Mode: "cpu", Artifact: a}, "WorkDir"},
	} {
		var oe *OptionError
		if _, err := New(c.o); !errors.As(err, &oe) || oe.Option != c.option {
			t.Errorf("%+v: %v", c.o, err)
		}
	}
	for mode, want := range map[string]string{"cpu": "every 10ms", "wall": "every 50ms", "alloc": "every 512KiB", "lock": "every 10us", "jfr": "every 20ms"} {
		r, err := New(Options{Mode: mode, Artifact: a, WorkDir: "rel"})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Record().Describe(); !strings.HasSuffix(got, want) || !filepath.IsAbs(r.o.WorkDir) {
			t.Errorf("%s: %s, work %s", mode, got, r.o.WorkDir)
		}
		if opts := r.JVMOptions(); (mode == "jfr") != (len(opts) == 0) {
			t.Errorf("%s: JVM options %v", mode, opts)
		}
	}
	r, _ := New(Options{Mode: "cpu", Artifact: a, WorkDir: filepath.Join(dir, "w")})
	if err := r.Attach(1); err != nil {
		t.Fatal(err)
	}
	if err := r.Attach(2); err == nil || !strings.Contains(err.Error(), "one recorder per run") {
		t.Fatalf("second attach: %v", err)
	}
	if err := r.Window("golive", false); err == nil {
		t.Fatal("a window closed that was never opened")
	}
}
