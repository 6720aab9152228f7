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
