package main

import (
	"context"
	"time"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/loader"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/workload"
)

func extractCommand() *cli.Command {
	return &cli.Command{
		Name:        "extract",
		Usage:       "read a source catalog once into a workload file, for load --replay",
		Description: help("extract"),
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "out", Required: true, Usage: "the workload file to create"},
			&cli.StringFlag{Name: "work", Usage: "spawn mode: working directory (absent, empty or warmstat's; default <out>.work)"},
			&cli.IntFlag{Name: "max-per-collection", Usage: "cap per collection (0 = all)"},
			&cli.StringFlag{Name: "collections", Usage: "comma-separated subset (unknown name = error)"},
		}, sourceFlags()...), serverFlags("spawn mode")...),
		Action: runExtract,
	}
}

func runExtract(ctx context.Context, cmd *cli.Command) error {
	if err := loadLimits(cmd); err != nil {
		return err
	}
	ctx, stop := interruptible(ctx, cmd.Root().ErrWriter)
	defer stop()
	begin := time.Now()
	out := cmd.String("out")
	info, from, err := extractSource(ctx, cmd, out, cmd.String("work"), "extract")
	if err != nil {
		return err
	}
	report.WriteExtracted(cmd.Root().Writer, out, from, info, time.Since(begin))
	return nil
}

// sourceFlags name a source catalog to read: a pristine snapshot (spawn mode) or a
// running server (attach mode).
func sourceFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "pristine", Usage: "spawn mode: parent directory of the pristine <catalog>/ snapshot"},
		&cli.StringFlag{Name: "catalog", Usage: "spawn mode: the snapshot's catalog"},
		&cli.StringFlag{Name: "reader-heap", Usage: "spawn mode: the reader's heap (default: from the snapshot's metadata)"},
		&cli.StringFlag{Name: "snapshot-compress", Usage: "spawn mode, a snapshot warmstat seed did not make: its storage.compress (true | false)"},
		&cli.StringFlag{Name: "source", Usage: "attach mode: source server host:port (gRPC)"},
		&cli.StringFlag{Name: "source-catalog", Usage: "attach mode: catalog to read"},
		&cli.IntFlag{Name: "batch-size", Value: workload.DefaultBatchSize, Usage: "primary keys per source fetch"},
	}
}

// extractSource reads the source the command's flags name (spawn: --pristine and
// --catalog; attach: --source and --source-catalog) into the workload file out, and says
// where it came from. work is spawn mode's working directory (default <out>.work).
func extractSource(ctx context.Context, cmd *cli.Command, out, work, what string) (*workload.Info, string, error) {
	spawn := cmd.IsSet("pristine")
	attach := cmd.IsSet("source") || cmd.IsSet("source-catalog")
	switch {
	case spawn == attach:
		return nil, "", usageError(cmd, "%s needs either --pristine DIR --catalog NAME (spawn mode) or --source ADDR --source-catalog NAME (attach mode)", what)
	case spawn && cmd.String("catalog") == "":
		return nil, "", usageError(cmd, "spawn mode needs --catalog (the snapshot's catalog in --pristine)")
	case attach && (cmd.String("source") == "" || cmd.String("source-catalog") == ""):
		return nil, "", usageError(cmd, "attach mode needs --source ADDR and --source-catalog NAME")
	}
	ec := loader.ExtractConfig{Out: out, BatchSize: cmd.Int("batch-size"), MaxPerCollection: cmd.Int("max-per-collection"),
		Collections: subsetFlag(cmd), Progress: liveProgress(cmd.Root().ErrWriter)}
	src := loader.ExtractSource{SourceAddr: cmd.String("source"), SourceCatalog: cmd.String("source-catalog")}
	leanRuntime()
	if spawn {
		sc := &loader.SpawnConfig{Pristine: cmd.String("pristine"), Catalog: cmd.String("catalog"), WorkDir: work, Probe: evita.Probe}
		rh, err := optBytes(cmd, "reader-heap")
		if err != nil {
			return nil, "", err
		}
		sc.ReaderHeap = orZero(rh)
		if sc.SnapshotCompress, err = optBool(cmd, "snapshot-compress"); err != nil {
			return nil, "", err
		}
		if sc.Server, err = serverSource(cmd, "spawn mode"); err != nil {
			return nil, "", err
		}
		src.Spawn = sc
	}
	info, from, err := loader.ExtractFrom(ctx, src, ec)
	if err != nil && spawn {
		return nil, "", faultHint(spawnHint(err))
	}
	return info, from, err
}

// subsetFlag is --collections as a list (nil for none: every collection).
func subsetFlag(cmd *cli.Command) []string { return loader.ParseSubset(cmd.String("collections")) }

// orZero is a flag's value, or the zero value that says it was not given.
func orZero[T any](v *T) (zero T) {
	if v != nil {
		return *v
	}
	return zero
}
