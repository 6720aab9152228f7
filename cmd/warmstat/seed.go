package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/seed"
)

func seedCommand() *cli.Command {
	return &cli.Command{
		Name:        "seed",
		Usage:       "write a deterministic, production-shaped synthetic catalog into a server (for when no production export is at hand)",
		Description: help("seed"),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "target", Usage: "server host:port (gRPC)"},
			&cli.StringFlag{Name: "catalog", Value: "seed", Usage: "catalog to create"},
			&cli.FloatFlag{Name: "scale", Value: 0.01, Usage: "a fraction of the profile's catalog: of production's (1.0 = 386,369 entities), or with --shape of the shape's (default with a measured shape: its source's own size)"},
			&cli.IntFlag{Name: "seed", Value: 1, Usage: "random seed"},
			&cli.StringFlag{Name: "shape", Aliases: []string{"profile"}, Usage: "a shape file (warmstat shape) or hand-written profile to generate from, in place of the built-in default; --scale defaults to a measured shape's source scale"},
			&cli.BoolFlag{Name: "replace", Usage: "drop the catalog if it exists (otherwise refused)"},
			&cli.BoolFlag{Name: "print-profile", Usage: "print the profile as JSON and exit"},
			&cli.StringFlag{Name: "pristine", Usage: "spawn a server, seed, stop it and leave DIR/<catalog>/ as a pristine snapshot for load --pristine"},
			&cli.StringFlag{Name: "workload", Usage: "write the catalog into this workload file (never an existing one) instead of a server, for load --replay and ab --workload"},
			&cli.StringFlag{Name: "heap", Usage: "with --pristine: the seeding server's heap (default: from the catalog's entities, 23 GiB × their share of production's + 1 GiB, what the catalog loads into)"},
			&cli.StringFlag{Name: "storage-compress", Value: "false", Usage: "with --pristine: the snapshot's storage.compress (true | false); recorded with the snapshot, load --pristine opens it the same way"},
		}, serverFlags("with --pristine")...),
		Action: runSeed,
	}
}

func runSeed(ctx context.Context, cmd *cli.Command) error {
	p := seed.DefaultProfile()
	if f := cmd.String("shape"); f != "" {
		var err error
		if p, err = seed.LoadProfile(f); err != nil {
			return err
		}
		if own, ok := p.OwnScale(); ok && !cmd.IsSet("scale") {
			if err := cmd.Set("scale", strconv.FormatFloat(own, 'g', -1, 64)); err != nil {
				return err
			}
		}
	}
	if cmd.Bool("print-profile") {
		enc := json.NewEncoder(cmd.Root().Writer)
		enc.SetIndent("", "  ") // a file to edit: line numbers in its errors mean something
		return enc.Encode(p)
	}
	if sc := cmd.Float("scale"); !(sc > 0 && sc <= 10) { // NaN too
		return usageError(cmd, "--scale %v: must be above 0 and at most 10", sc)
	}
	report.WriteDisproportionate(cmd.Root().ErrWriter, p, cmd.Float("scale"))
	if cmd.IsSet("workload") {
		if err := seedWorkloadFlags(cmd); err != nil {
			return err
		}
	}
	ctx, stop := interruptible(ctx, cmd.Root().ErrWriter)
	defer stop()
	switch {
	case cmd.IsSet("workload"):
		return seedWorkload(ctx, cmd, p)
	case cmd.String("pristine") != "":
		return seedPristine(ctx, cmd, cmd.String("pristine"), p)
	}
	return seedTarget(ctx, cmd, p)
}

// seedTarget is seed --target: the catalog written into a running server.
func seedTarget(ctx context.Context, cmd *cli.Command, p *seed.Profile) error {
	if cmd.IsSet("heap") || cmd.IsSet("storage-compress") {
		return usageError(cmd, "--heap and --storage-compress set up the server seed --pristine starts; a --target server has its own")
	}
	if cmd.String("target") == "" {
		return usageError(cmd, "seed needs --target host:port, or --pristine DIR")
	}
	c, err := evita.Dial(ctx, cmd.String("target"), evita.Options{})
	if err != nil {
		return err
	}
	defer c.Close()
	st, err := seed.Seed(ctx, c, cmd.String("catalog"), p, cmd.Float("scale"), uint64(cmd.Int("seed")), cmd.Bool("replace"), liveProgress(cmd.Root().ErrWriter))
	if errors.Is(err, seed.ErrCatalogExists) {
		return fmt.Errorf("%w; --replace drops it", err)
	} else if err == nil {
		report.WriteSeeded(cmd.Root().Writer, cmd.String("catalog"), c.Addr, st)
	}
	return err
}

// seedWorkloadFlags refuses what seed --workload cannot use: a flag of a server (it
// starts none) and a file it must not write.
func seedWorkloadFlags(cmd *cli.Command) error {
	notHere := []string{"target", "pristine", "replace", "heap", "storage-compress"}
	for _, f := range serverFlags("") { // the server flags, whichever they are
		notHere = append(notHere, f.Names()[0])
	}
	for _, name := range notHere {
		if cmd.IsSet(name) {
			return usageError(cmd, "--workload writes a file and starts no server: --%s does not apply", name)
		}
	}
	if cmd.String("workload") == "" {
		return usageError(cmd, "--workload needs a file name")
	}
	if err := seed.CheckNewWorkload(cmd.String("workload")); err != nil {
		return usageError(cmd, "--workload %v", err)
	}
	return nil
}

// seedWorkload is seed --workload: the generator's upserts straight into a workload
// file, no server.
func seedWorkload(ctx context.Context, cmd *cli.Command, p *seed.Profile) error {
	path, begin := cmd.String("workload"), time.Now()
	info, err := seed.WriteWorkload(ctx, path, cmd.String("catalog"), p, cmd.Float("scale"), uint64(cmd.Int("seed")), liveProgress(cmd.Root().ErrWriter))
	if errors.Is(err, context.Canceled) { // WriteWorkload removed what it had written
		return fmt.Errorf("interrupted: %s was not written (the part written so far is removed)", path)
	} else if err != nil {
		return err
	}
	fit, tooLarge := seed.WorkloadTooLarge(p, info.Header)
	report.WriteSeededWorkload(cmd.Root().Writer, info, cmd.String("catalog"), cmd.Float("scale"), time.Since(begin), fit, tooLarge)
	return nil
}

// seedPristine is seed --pristine: a server of its own, sized from the scale unless
// --heap says otherwise, and a snapshot with its metadata.
func seedPristine(ctx context.Context, cmd *cli.Command, dir string, p *seed.Profile) error {
	scale := cmd.Float("scale")
	heap := seed.HeapAt(p, scale) // from the catalog's own size: its entities
	if h, err := optBytes(cmd, "heap"); err != nil {
		return err
	} else if h != nil {
		heap = *h
	}
	compress, err := strconv.ParseBool(cmd.String("storage-compress"))
	if err != nil {
		return usageError(cmd, "--storage-compress: %q is not true or false", cmd.String("storage-compress"))
	}
	src, err := serverSource(cmd, "seed --pristine")
	if err != nil {
		return err
	}
	pc := seed.PristineConfig{Server: src, Dir: dir, Catalog: cmd.String("catalog"), Heap: heap, Compress: compress, Probe: evita.Probe,
		Note: func(s string) { fmt.Fprintln(cmd.Root().ErrWriter, s) }}
	st, err := seed.Pristine(ctx, pc, p, scale, uint64(cmd.Int("seed")))
	var he *evitaserver.HeapError
	if errors.As(err, &he) {
		return usageError(cmd, "%v: give --heap %s or more", err, runfmt.FormatBytesAtLeast(he.Need)) // a flag value, as in ab and load
	} else if err != nil {
		return faultHint(err)
	}
	report.WritePristineSeeded(cmd.Root().Writer, filepath.Join(dir, cmd.String("catalog")), st, heap, seed.LiveHeapAt(p, scale), compress)
	return nil
}
