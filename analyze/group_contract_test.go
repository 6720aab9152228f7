package analyze

import (
	"testing"

	"github.com/warmstat/warmstat/runfmt"
)

// The comparability contract tells apart heaps that differ by less than their rounding
// for people: 1g against 1.0001g is a different writer heap.
func TestContractHeapsAreExact(t *testing.T) {
	one, odd := int64(1<<30), int64(1<<30+105_000)
	a, b := &runfmt.Manifest{}, &runfmt.Manifest{}
	a.Server.MaxHeapBytes, b.Server.MaxHeapBytes = &one, &odd
	if va, vb := ConditionValue(a, "server-heap"), ConditionValue(b, "server-heap"); va == vb {
		t.Fatalf("server-heap %q for both 1g and %d bytes", va, odd)
	}
}

// A duet's runs and runs made alone differ in the contract field duet, and so do
// duets with pinned and with shared writers; the slot is no condition (a series
// alternates it), nor the size of the CPU sets (the machine's: a fleet's may differ).
func TestContractDuet(t *testing.T) {
	alone := &runfmt.Manifest{}
	slot := func(n int, cpus string) *runfmt.Manifest {
		return &runfmt.Manifest{Duet: &runfmt.Duet{Partner: "x", Slot: n, CPUs: cpus}}
	}
	v := func(m *runfmt.Manifest) string { return ConditionValue(m, "duet") }
	if v(alone) == v(slot(1, "0")) || v(slot(1, "0")) != v(slot(2, "1")) || v(slot(1, "0")) == v(slot(1, "")) ||
		v(slot(1, "0-3")) != "yes (writers pinned apart)" || v(slot(2, "")) != "yes (writers sharing the CPUs)" {
		t.Fatalf("alone %q, slot 1 %q, slot 2 %q, shared %q, 4 CPUs %q", v(alone), v(slot(1, "0")), v(slot(2, "1")), v(slot(1, "")), v(slot(1, "0-3")))
	}
}

// A run on the catalog written for evitaDB 2026.1 is another workload than one on the
// catalog as its source holds it (runs from before the field read as the latter).
func TestContractCatalogLine(t *testing.T) {
	native, old := &runfmt.Manifest{}, &runfmt.Manifest{}
	old.Conditions.CatalogLine = "2026.1"
	if a, b := ConditionValue(native, "catalog-line"), ConditionValue(old, "catalog-line"); a == b || a != "as the source holds it" || b != "written for 2026.1" {
		t.Fatalf("native %q, 2026.1 %q", a, b)
	}
}
