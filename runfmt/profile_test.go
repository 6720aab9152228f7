package runfmt

import (
	"encoding/json"
	"strings"
	"testing"
)

// A manifest's writer profile is validated like every other field: one line naming the
// file, the line and the field.
func TestWriterProfileErrors(t *testing.T) {
	_, m := validManifestJSON(t)
	m.WriterProfile = &WriterProfile{Profiler: ProfilerAsync, Version: "4.2", Mode: "cpu", Event: "cpu", Engine: "ctimer",
		Interval: 10e6, IntervalUnit: UnitNanoseconds, Phases: []ProfilePhase{{Name: PhaseLoad, Samples: 5, Value: 50e6,
			ValueUnit: "nanoseconds", Recording: "profile/load.jfr", FlameGraph: "profile/load.html", Pprof: "profile/load.pb.gz",
			Collapsed: "profile/load.collapsed"}}}
	b, _ := json.MarshalIndent(m, "", "  ")
	data := string(b)
	if _, err := ParseManifest("m.json", b); err != nil {
		t.Fatal(err)
	}
	if got := m.WriterProfile.Describe(); got != "async-profiler cpu (ctimer) every 10ms" {
		t.Fatalf("describe: %q", got)
	}
	for _, c := range []struct{ old, new, want string }{
		{`"mode": "cpu"`, `"mode": "jfr"`, `field writer_profile.mode: "jfr" is not a mode of async-profiler`},
		{`"profiler": "async-profiler"`, `"profiler": "yourkit"`, `field writer_profile.profiler: "yourkit"`},
		{`"interval": 10000000`, `"interval": 0`, "field writer_profile.interval: must be positive"},
		{`"interval_unit": "ns"`, `"interval_unit": "s"`, `field writer_profile.interval_unit: "s"`},
		{`"name": "load"`, `"name": "verify"`, `field writer_profile.phases[0].name: "verify"`},
		{`"pprof": "profile/load.pb.gz"`, `"pprof": "../../etc/x"`, `field writer_profile.phases[0].pprof: "../../etc/x" is not a clean path`},
		{`"samples": 5`, `"samples": -5`, "field writer_profile.phases[0]: negative samples"},
		{`"flamegraph": "profile/load.html"`, `"flame_graph": "profile/load.html"`, "field flame_graph: unknown field"},
	} {
		if !strings.Contains(data, c.old) {
			t.Fatalf("fixture lacks %q", c.old)
		}
		_, err := ParseManifest("m.json", []byte(strings.Replace(data, c.old, c.new, 1)))
		if err == nil || !strings.HasPrefix(err.Error(), "m.json:") || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", c.new, err)
		}
	}
}
