package loader

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// The duet's barrier: two sides meet at each named barrier in turn; a side that
// names another barrier parts the duet; a side that leaves (its run ended) releases a
// waiting partner with ErrPartnerEnded, now and at every later barrier; a stopped
// context ends a wait.
func TestDuetBarrier(t *testing.T) {
	b := &barrier{}
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			for _, name := range []string{"start", "batch 1", "batch 2", "goLive"} {
				if err := b.meet(context.Background(), name); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("two sides meeting at the same barriers: %v", err)
		}
	}

	b = &barrier{}
	go func() { errs <- b.meet(context.Background(), "batch 3") }()
	time.Sleep(20 * time.Millisecond)
	if err := b.meet(context.Background(), "goLive"); err == nil || !strings.Contains(err.Error(), "parted: one at batch 3, the other at goLive") {
		t.Fatalf("parted sides: %v", err)
	}
	if err := <-errs; err == nil {
		t.Fatal("the waiting side was not told the duet parted")
	}

	b = &barrier{}
	go func() { errs <- b.meet(context.Background(), "batch 7") }()
	time.Sleep(20 * time.Millisecond)
	b.leave("slot 2 (B-002)", errors.New("writer server exited"))
	if err := <-errs; !errors.Is(err, ErrPartnerEnded) || !strings.Contains(err.Error(), "slot 2 (B-002) failed: writer server exited") {
		t.Fatalf("a partner that failed: %v", err)
	}
	if err := b.meet(context.Background(), "batch 8"); !errors.Is(err, ErrPartnerEnded) {
		t.Fatalf("a later barrier after the partner left: %v", err)
	}

	b = &barrier{}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { errs <- b.meet(ctx, "start") }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("a stopped wait: %v", err)
	}
}
