package evitaserver

import (
	"encoding/binary"
	"strings"
	"testing"
)

func TestThreadGroups(t *testing.T) {
	for name, want := range map[string]string{
		"C2 CompilerThre": ThreadsJIT, "C1 CompilerThre": ThreadsJIT, "GC Thread#1": ThreadsGC, "G1 Conc#0": ThreadsGC,
		"G1 Refine#0": ThreadsGC, "VM Thread": ThreadsGC, "armeria-common": ThreadsRequest, "grpc-default-ex": ThreadsRequest,
		"main": ThreadsRequest, "Evita-request-1": ThreadsRequest, "Evita-transacti": ThreadsRequest, "armeria-eventlo": ThreadsRequest, "java": ThreadsRequest, "Signal Dispatch": ThreadsOther, "Finalizer": ThreadsOther,
	} {
		if got := threadGroup(name); got != want {
			t.Errorf("%q: %s, want %s", name, got, want)
		}
	}
}

// perfdata builds a performance-data buffer holding long counters, as HotSpot lays one out.
func perfdata(counters map[string]int64) []byte {
	bo := binary.LittleEndian
	b := make([]byte, 32)
	binary.BigEndian.PutUint32(b, 0xcafec0c0)
	b[4], b[5], b[6] = 1, 2, 0
	bo.PutUint32(b[24:], 32)
	bo.PutUint32(b[28:], uint32(len(counters)))
	for name, v := range counters {
		e := make([]byte, 20)
		nameBytes := append([]byte(name), 0)
		for len(nameBytes)%8 != 4 {
			nameBytes = append(nameBytes, 0)
		}
		bo.PutUint32(e[4:], 20)
		bo.PutUint32(e[16:], uint32(20+len(nameBytes)))
		e[12] = 'J'
		e = append(append(e, nameBytes...), make([]byte, 8)...)
		bo.PutUint64(e[len(e)-8:], uint64(v))
		bo.PutUint32(e, uint32(len(e)))
		b = append(b, e...)
	}
	return b
}

func TestPerfCounters(t *testing.T) {
	c, err := perfCounters(perfdata(map[string]int64{"java.ci.totalTime": 5e8, "sun.os.hrt.frequency": 1e9}))
	if err != nil || c["java.ci.totalTime"] != 5e8 || c["sun.os.hrt.frequency"] != 1e9 {
		t.Fatalf("%v %v", c, err)
	}
	good := perfdata(map[string]int64{"sun.ci.totalTime": 1})
	for name, b := range map[string][]byte{
		"empty": nil, "not perfdata": []byte(strings.Repeat("x", 64)), "truncated": good[:40],
		"version 1": append(append([]byte{}, good[:5]...), append([]byte{1}, good[6:]...)...),
	} {
		if _, err := perfCounters(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
