package evita_test

import (
	"context"
	"os"
	"testing"

	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/internal/evitatest"
)

// BenchmarkServerStatusRoundTrip is the wire's physical floor on loopback: one bare
// gRPC call. The loader's cheapest collection should upsert within 1.3x of it.
// WARMSTAT_EVITA_ADDR measures an already running server instead of starting one.
func BenchmarkServerStatusRoundTrip(b *testing.B) {
	ctx := context.Background()
	var c *evita.Client
	if addr := os.Getenv("WARMSTAT_EVITA_ADDR"); addr != "" {
		var err error
		if c, err = evita.Dial(ctx, addr, evita.Options{}); err != nil {
			b.Fatal(err)
		}
		defer c.Close()
	} else {
		_, c = evitatest.Start(b)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.ServerStatus(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
