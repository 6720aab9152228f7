package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/warmstat/warmstat/base/interrupt"
	"github.com/warmstat/warmstat/base/procgroup"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/runfmt"
)

// quietOnStop is what every command writes through: silent once a stop at once begins.
type quietOnStop = interrupt.Quiet

// interruptible runs long work (load, seed, a series): the first Ctrl-C cancels ctx,
// and the work ends at its next safe point (a load between upserts, with its manifest
// written); a second Ctrl-C, or a SIGTERM at any time, stops every evitaDB JVM and
// build this process started and exits at once. The returned function stops listening.
func interruptible(parent context.Context, errw io.Writer) (context.Context, func()) {
	return interrupt.Listen(parent, errw, killEverything)
}

// killEverything ends what warmstat started, for a stop at once, and says what it ended.
func killEverything() string {
	runfmt.FreezeCommits()        // what is still being written stays unfinished
	builds := procgroup.KillAll() // a bisect's build, with the JVMs mvn forked
	killed := fmt.Sprintf("%d evitaDB JVM(s) killed", evitaserver.KillAll())
	if builds > 0 {
		killed += fmt.Sprintf(", %s ended with every process it started", report.Plural(builds, "build"))
	}
	return killed
}

// faultHint adds the flag to change to a failed server's fault (the packages name no
// flags): the writer's heap is --server-heap, the reader's --reader-heap, a seeding
// server's --heap.
func faultHint(err error) error {
	var f *evitaserver.Fault
	if err == nil || !errors.As(err, &f) || f.Advice == "" {
		return err
	}
	flag := map[string]string{"writer": "--server-heap", "reader": "--reader-heap", "seeding": "--heap"}[f.Role]
	if flag == "" {
		return err
	}
	return fmt.Errorf("%w (%s)", err, flag)
}
