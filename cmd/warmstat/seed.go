package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/seed"
)

func seedCommand() *cli.Command {
	return &cli.Command{
		Name:  "seed",
		Usage: "write a deterministic, production-shaped synthetic catalog into a server (for when no production export is at hand)",
		Description: "--scale is a fraction of the profile's catalog at scale 1. Without --shape that is production's: --scale\n" +
			"1.0 gives the production totals (386,369 entities, 118,772 Product), the default 0.01 ~3,900 entities. With\n" +
			"--shape FILE (a shape measured by warmstat shape, or a profile of one's own) it is the shape's: for a shape of\n" +
			"a real catalog (a server's), --scale 1 is that catalog's own size (a shop of 1,937 entities regenerates at\n" +
			"1,937); a shape of a catalog warmstat seeded at scale s keeps its seed's scale, so s is its own size. A measured\n" +
			"shape's --scale defaults to its source's own size. The same --seed and --scale give the same catalog.\n" +
			"The heaps warmstat proposes for a catalog come from its own size, its entities (23 GiB × their share of\n" +
			"production's 386,369 + 1 GiB, never below 1.5 × its estimated live heap + 256 MiB), recorded with the\n" +
			"snapshot or workload for every later command; --print-profile shows the profile as JSON.\n" +
			"--workload FILE writes the catalog straight into a workload file, with no server: load --replay FILE and\n" +
			"ab --workload FILE replay it as they replay what extract reads from a seeded snapshot (the same upserts),\n" +
			"and a catalog too large for a seeding server beside its writer needs only the writer.\n" +
			"Exit codes: 0 seeded, 1 failed (a server that could not be reached or started, a directory that cannot be\n" +
			"used, an invalid profile), 2 a usage error (a heap below the catalog's need included); 130 / 143 a second\n" +
			"Ctrl-C or SIGTERM." +
			examples("warmstat seed --pristine /var/tmp/ws/pristine --catalog shop --scale 0.02 --evita-version 2026.2.3",
				"warmstat seed --pristine /var/tmp/ws/regen --catalog shop --shape shop.shape.json --scale 1 --evita-version 2026.2.3",
				"warmstat seed --workload /var/tmp/ws/shop-0.2.wsw --catalog shop --scale 0.2",
				"warmstat seed --target 127.0.0.1:5555 --catalog shop --scale 0.05 --seed 1"),
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
	if cl := p.Disproportionate(cmd.Float("scale")); cl != nil {
		fmt.Fprintf(cmd.Root().ErrWriter, "note: at scale %g, %d of %d collections get one entity where their share rounds to none (%s): the catalog is not the profile's in proportion\n",
			cmd.Float("scale"), len(cl), len(p.Collections), strings.Join(cl, ", "))
	}
	if cmd.IsSet("workload") {
		return seedWorkload(ctx, cmd, p)
	}
	ctx, stop := interruptible(ctx, cmd.Root().ErrWriter)
	defer stop()
	if dir := cmd.String("pristine"); dir != "" {
		return seedPristine(ctx, cmd, dir, p)
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
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.Root().Writer, "seeded catalog %s on %s: %d entities in %s (%.1f entities/s), ALIVE\n", cmd.String("catalog"), c.Addr,
		st.Entities, st.Took.Round(1e6), float64(st.Entities)/st.Took.Seconds())
	return nil
}

// seedWorkload is seed --workload: the generator's upserts straight into a workload
// file, no server.
func seedWorkload(ctx context.Context, cmd *cli.Command, p *seed.Profile) error {
	path := cmd.String("workload")
	notHere := []string{"target", "pristine", "replace", "heap", "storage-compress"}
	for _, f := range serverFlags("") { // the server flags, whichever they are
		notHere = append(notHere, f.Names()[0])
	}
	for _, name := range notHere {
		if cmd.IsSet(name) {
			return usageError(cmd, "--workload writes a file and starts no server: --%s does not apply", name)
		}
	}
	if path == "" {
		return usageError(cmd, "--workload needs a file name")
	}
	if _, err := os.Lstat(path); err == nil {
		return usageError(cmd, "--workload %s exists: a workload file is never overwritten", path)
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return usageError(cmd, "--workload %s: its directory does not exist", path)
	}
	ctx, stop := interruptible(ctx, cmd.Root().ErrWriter)
	defer stop()
	begin := time.Now()
	info, err := seed.WriteWorkload(ctx, path, cmd.String("catalog"), p, cmd.Float("scale"), uint64(cmd.Int("seed")), liveProgress(cmd.Root().ErrWriter))
	if errors.Is(err, context.Canceled) { // WriteWorkload removed what it had written
		return fmt.Errorf("interrupted: %s was not written (the part written so far is removed)", path)
	}
	if err != nil {
		return err
	}
	took := time.Since(begin)
	fmt.Fprintf(cmd.Root().Writer, "workload %s: %d entities of catalog %s at scale %g written in %s (%.0f entities/s, %s); replay it with warmstat load --replay %s --evita-version V --build LABEL --out DIR\n",
		path, info.Trailer.Entities, cmd.String("catalog"), cmd.Float("scale"), took.Round(time.Millisecond), float64(info.Trailer.Entities)/took.Seconds(),
		runfmt.FormatSize(info.Size), path)
	if live := info.Header.LiveHeapEstimateBytes; live != nil {
		if f, ok := seed.TooLargeHere(p, *live, info.Header.LiveHeapEstimateSource); ok {
			fmt.Fprintf(cmd.Root().Writer, "note: its writer needs a heap of at least %s (about %s live, %s); this machine (%s) holds at most %s: it replays up to scale %g here\n",
				runfmt.FormatBytesAtLeast(f.Need), runfmt.FormatSize(f.Live), f.LiveHeapSource, runfmt.FormatBytes(&f.Memory), runfmt.FormatBytesExact(&f.Largest), f.LargestScale)
		}
	}
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
	}
	if err != nil {
		return faultHint(err)
	}
	est := seed.LiveHeapAt(p, scale)
	live := "not measured"
	if st.LiveHeapBytes != nil {
		live = runfmt.FormatSize(*st.LiveHeapBytes)
	}
	live += fmt.Sprintf(", estimated %s", runfmt.FormatSize(est.Bytes))
	fmt.Fprintf(cmd.Root().Writer, "pristine snapshot %s: %d entities (seeded in %s with a %s heap; live heap %s; storage.compress=%t)\n",
		filepath.Join(dir, cmd.String("catalog")), st.Entities, st.Took.Round(1e6), runfmt.FormatBytesExact(&heap), live, compress)
	return nil
}
