package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/internal/evitatest"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/runfmt"
)

// Each metric catches the regression it should, on the real server: an agent makes
// every Product upsert of the embedded writer spin on the CPU, or park its thread,
// for 20 ms first. Spinning shows in the Product mean and in its CPU; parking shows in
// the mean and not in the CPU (it is time the thread is blocked, which a CPU clock
// cannot see, and the report's stopped/blocked column can). One run each: the
// slowdowns are far beyond a run's noise (a Product upsert takes a few ms here).
func TestSlowdownsSeenByTheirMetrics(t *testing.T) {
	// its verdicts rest on speed: a base run beside another test's JVMs waited 8 ms of its
	// 21 ms Product mean for a CPU (a CI run, 2026-12-07), hiding a fifth of the slowdown
	evitatest.Exclusive(t)
	src := evitatest.Server(t)
	tmp := t.TempDir()
	wl := filepath.Join(tmp, "shop.wsw")
	if _, stderr, code := runCLI(t, "seed", "--workload", wl, "--catalog", "shop", "--scale", "0.002"); code != 0 {
		t.Fatalf("seed --workload: %d %s", code, stderr)
	}
	server := []string{"--evita-version", src.Ref}
	if src.Kind == runfmt.ServerFromClasspath {
		server = []string{"--classpath", src.Ref}
	}
	const slowMs = 20.0
	product := func(name string, opts ...string) report.LatencyJSON {
		t.Helper()
		out := filepath.Join(tmp, name)
		args := append([]string{"load", "--replay", wl, "--target-mode", "embedded", "--server-heap", "1g",
			"--out", out, "--build", name, "--run-id", name}, server...)
		for _, o := range opts {
			args = append(args, "--writer-jvm-option", o)
		}
		if _, stderr, code := runCLI(t, args...); code != 0 {
			t.Fatalf("load %s: %d\n%s", name, code, stderr)
		}
		js, stderr, code := runCLI(t, "report", "--format", "json", out)
		var r report.RunJSON
		if err := json.Unmarshal([]byte(js), &r); code != 0 || err != nil {
			t.Fatalf("report %s: %d %v %s", name, code, err, stderr)
		}
		for _, c := range r.Collections {
			if c.Name == "Product" && c.Cost != nil && c.Cost.CPUUs != nil && c.Cost.BlockedUs != nil {
				return c
			}
		}
		t.Fatalf("%s: no Product row with its cost: %+v", name, r.Collections)
		return report.LatencyJSON{}
	}
	base := product("base")
	spin := product("spin", evitatest.SlowdownOptions(t, evitatest.Spin, int(slowMs*1000))...)
	park := product("park", evitatest.SlowdownOptions(t, evitatest.Park, int(slowMs*1000))...)
	ms := func(us float64) float64 { return us / 1000 }
	t.Logf("Product mean / CPU / blocked, ms: base %.1f / %.1f / %.1f, spin %.1f / %.1f / %.1f, park %.1f / %.1f / %.1f",
		ms(base.MeanUs), ms(*base.Cost.CPUUs), ms(*base.Cost.BlockedUs), ms(spin.MeanUs), ms(*spin.Cost.CPUUs), ms(*spin.Cost.BlockedUs),
		ms(park.MeanUs), ms(*park.Cost.CPUUs), ms(*park.Cost.BlockedUs))
	var fails []string
	check := func(ok bool, what string) {
		if !ok {
			fails = append(fails, what)
		}
	}
	check(ms(spin.MeanUs-base.MeanUs) > 0.8*slowMs, "spinning: the Product mean did not grow by 80 % of the slowdown")
	check(ms(*spin.Cost.CPUUs-*base.Cost.CPUUs) > 0.8*slowMs, "spinning: the Product CPU did not grow by 80 % of the slowdown")
	check(ms(park.MeanUs-base.MeanUs) > 0.8*slowMs, "parking: the Product mean did not grow by 80 % of the slowdown")
	check(ms(*park.Cost.CPUUs-*base.Cost.CPUUs) < 0.3*slowMs, "parking: the Product CPU grew by 30 % of the slowdown or more: it counted time the thread was parked")
	check(ms(*park.Cost.BlockedUs-*base.Cost.BlockedUs) > 0.8*slowMs, "parking: the Product's stopped/blocked time did not grow by 80 % of the slowdown")
	if len(fails) > 0 {
		t.Error(strings.Join(fails, "; "))
	}
}
