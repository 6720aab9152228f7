package main

import (
	"os"
	"testing"

	"github.com/warmstat/warmstat/internal/evitatest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	evitatest.RemoveShared() // the snapshot shared by this binary's tests, if make test did not share one
	os.Exit(code)
}
