package evitaserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fakeProc(t *testing.T, meminfo, v2, v1 string) {
	t.Helper()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if content != "" {
			os.WriteFile(p, []byte(content), 0o644)
		}
		return p
	}
	old := [3]string{procMeminfo, cgroupV2Max, cgroupV1Limit}
	procMeminfo, cgroupV2Max, cgroupV1Limit = write("meminfo", meminfo), write("memory.max", v2), write("limit_in_bytes", v1)
	t.Cleanup(func() { procMeminfo, cgroupV2Max, cgroupV1Limit = old[0], old[1], old[2] })
}

func TestReadMachine(t *testing.T) {
	const mem = "MemTotal:       24683212 kB\nMemFree:        1 kB\n"
	fakeProc(t, mem, "max\n", "")
	m, err := ReadMachine()
	if err != nil || m.MemoryBytes != 24683212<<10 || m.CgroupLimit != nil || m.Cores < 1 {
		t.Fatalf("%+v %v", m, err)
	}
	fakeProc(t, mem, "17179869184\n", "")
	if m, _ = ReadMachine(); m.CgroupLimit == nil || *m.CgroupLimit != 16<<30 || m.Effective() != 16<<30 {
		t.Fatalf("v2 limit: %+v", m)
	}
	fakeProc(t, mem, "", "9223372036854771712\n") // cgroup v1 "no limit"
	if m, _ = ReadMachine(); m.CgroupLimit != nil {
		t.Fatalf("v1 unlimited: %+v", m)
	}
	fakeProc(t, mem, "lots\n", "")
	if _, err := ReadMachine(); err == nil || !strings.Contains(err.Error(), "not a byte count") {
		t.Fatalf("bad cgroup file: %v", err)
	}
	// this machine, for real
	procMeminfo, cgroupV2Max, cgroupV1Limit = "/proc/meminfo", "/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"
	if m, err := ReadMachine(); err != nil || m.MemoryBytes <= 0 {
		t.Fatalf("real machine: %+v %v", m, err)
	}
}

func TestCheckHeapsFit(t *testing.T) {
	limit := int64(24 << 30)
	m := Machine{Cores: 2, MemoryBytes: 32 << 30, CgroupLimit: &limit, LimitSource: "/sys/fs/cgroup/memory.max"}
	// the seed document's production heaps do not fit a 24 GiB cgroup
	err := CheckHeapsFit(m, map[string]int64{"writer": 23 << 30, "reader": 14 << 30})
	if err == nil || !strings.Contains(err.Error(), "writer 23g") || !strings.Contains(err.Error(), "reader 14g") ||
		!strings.Contains(err.Error(), "memory limit is 24g (cgroup /sys/fs/cgroup/memory.max)") {
		t.Fatalf("%v", err)
	}
	if err := CheckHeapsFit(m, map[string]int64{"writer": 16 << 30, "reader": 4 << 30}); err != nil {
		t.Fatalf("16g + 4g in 24g: %v", err)
	}
	err = CheckHeapsFit(Machine{MemoryBytes: 8 << 30}, map[string]int64{"writer": 8 << 30})
	if err == nil {
		t.Fatal("heap equal to MemTotal leaves nothing for the JVM itself")
	}
	// one JVM: the refusal names the largest heap that fits (7.25g + 742.4m overhead in
	// 8g; 7.5g + 768m would not)
	if !strings.Contains(err.Error(), "(the largest writer heap that fits is 7.25g)") {
		t.Fatalf("one heap: %v", err)
	}
	// this kind of machine's MemTotal, 23.54g, takes a writer of 21.25g (+ 2.125g)
	mem := int64(25_276_071_936)
	if h := LargestHeapThatFits(mem); h != 21760<<20 {
		t.Fatalf("largest heap in %d bytes: %d", mem, h)
	}
	if err := CheckHeapsFit(Machine{MemoryBytes: mem}, map[string]int64{"writer": LargestHeapThatFits(mem)}); err != nil {
		t.Fatalf("the largest heap that fits does not: %v", err)
	}
	if h := LargestHeapThatFits(256 << 20); h != 0 {
		t.Fatalf("nothing fits in 256 MiB beside 512 MiB of overhead: %d", h)
	}
}
