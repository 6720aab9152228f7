package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/loader"
	"github.com/warmstat/warmstat/runfmt"
)

func extractCommand() *cli.Command {
	return &cli.Command{
		Name:  "extract",
		Usage: "read a source catalog once into a workload file, for load --replay",
		Description: "Spawn mode: --pristine DIR --catalog NAME and a server (--evita-version V | --classpath CP | --server-jar FILE |\n" +
			"--evita-home CHECKOUT) starts a reader alone on a disposable copy of the snapshot (in --work, default <out>.work),\n" +
			"with --reader-heap (default from the snapshot's metadata), and proves the snapshot unchanged afterwards.\n" +
			"Attach mode: --source ADDR --source-catalog NAME reads a running server.\n" +
			"Each entity is read and transcoded exactly as load does and written, as its upsert request, to --out: a\n" +
			"compressed, checksummed workload file (never an existing one), verified before the command reports it.\n" +
			"--collections and --max-per-collection as in load; the file holds only those.\n" +
			"Exit codes: 0 extracted, 1 failed (nothing left at --out), 2 usage error; 130 / 143 a second Ctrl-C or SIGTERM." +
			examples("warmstat extract --pristine /var/tmp/ws/pristine --catalog shop --evita-version 2026.2.3 --out /var/tmp/ws/shop.wsw"),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "out", Required: true, Usage: "the workload file to create"},
			&cli.StringFlag{Name: "pristine", Usage: "spawn mode: parent directory of the pristine <catalog>/ snapshot"},
			&cli.StringFlag{Name: "catalog", Usage: "spawn mode: the snapshot's catalog"},
			&cli.StringFlag{Name: "work", Usage: "spawn mode: working directory (absent, empty or warmstat's; default <out>.work)"},
			&cli.StringFlag{Name: "reader-heap", Usage: "spawn mode: the reader's heap (default: from the snapshot's metadata)"},
			&cli.StringFlag{Name: "snapshot-compress", Usage: "spawn mode, a snapshot warmstat seed did not make: its storage.compress (true | false)"},
			&cli.StringFlag{Name: "source", Usage: "attach mode: source server host:port (gRPC)"},
			&cli.StringFlag{Name: "source-catalog", Usage: "attach mode: catalog to read"},
			&cli.IntFlag{Name: "batch-size", Value: 1000, Usage: "primary keys per source fetch"},
			&cli.IntFlag{Name: "max-per-collection", Usage: "cap per collection (0 = all)"},
			&cli.StringFlag{Name: "collections", Usage: "comma-separated subset (unknown name = error)"},
		}, serverFlags("spawn mode")...),
		Action: runExtract,
	}
}

func runExtract(ctx context.Context, cmd *cli.Command) error {
	if err := loadLimits(cmd); err != nil {
		return err
	}
	spawn := cmd.IsSet("pristine")
	attach := cmd.IsSet("source") || cmd.IsSet("source-catalog")
	switch {
	case spawn == attach:
		return usageError(cmd, "extract needs either --pristine DIR --catalog NAME (spawn mode) or --source ADDR --source-catalog NAME (attach mode)")
	case spawn && cmd.String("catalog") == "":
		return usageError(cmd, "spawn mode needs --catalog (the snapshot's catalog in --pristine)")
	case attach && (cmd.String("source") == "" || cmd.String("source-catalog") == ""):
		return usageError(cmd, "attach mode needs --source ADDR and --source-catalog NAME")
	}
	ec := loader.ExtractConfig{Out: cmd.String("out"), BatchSize: cmd.Int("batch-size"), MaxPerCollection: cmd.Int("max-per-collection"),
		Collections: subsetFlag(cmd)}
	errw := cmd.Root().ErrWriter
	if isTerminal(errw) {
		ec.Progress = errw
	}
	ctx, stop := interruptible(ctx, errw)
	defer stop()
	leanRuntime()
	begin := time.Now()
	if spawn {
		sc := loader.SpawnConfig{Pristine: cmd.String("pristine"), Catalog: cmd.String("catalog"), Probe: evita.Probe}
		sc.WorkDir = cmd.String("work")
		if sc.WorkDir == "" {
			sc.WorkDir = ec.Out + ".work"
		}
		rh, err := optBytes(cmd, "reader-heap")
		if err != nil {
			return err
		}
		if rh != nil {
			sc.ReaderHeap = *rh
		}
		if sc.SnapshotCompress, err = optBool(cmd, "snapshot-compress"); err != nil {
			return err
		}
		if sc.Server, err = serverSource(cmd, "spawn mode"); err != nil {
			return err
		}
		info, err := loader.SpawnExtract(ctx, sc, ec)
		if err != nil {
			return faultHint(spawnHint(err))
		}
		return extracted(cmd, cmd.String("out"), info.Size, info.SHA256, info.Trailer.Entities, info.Trailer.ExtractNs, sc.Pristine+"/"+sc.Catalog, begin)
	}
	src, err := evita.Dial(ctx, cmd.String("source"), evita.Options{})
	if err != nil {
		return fmt.Errorf("source %s: %w", cmd.String("source"), err)
	}
	defer src.Close()
	ec.Source, ec.SourceCatalog, ec.SourceMode = src, cmd.String("source-catalog"), "attach"
	info, err := loader.Extract(ctx, ec)
	if err != nil {
		return err
	}
	return extracted(cmd, cmd.String("out"), info.Size, info.SHA256, info.Trailer.Entities, info.Trailer.ExtractNs, cmd.String("source")+" catalog "+ec.SourceCatalog, begin)
}

func extracted(cmd *cli.Command, path string, size int64, sum string, entities, extractNs int64, from string, begin time.Time) error {
	per := "-"
	if entities > 0 {
		per = fmt.Sprintf("%.0f bytes/entity", float64(size)/float64(entities))
	}
	fmt.Fprintf(cmd.Root().Writer, "workload %s: %d entities from %s, %s (%s), sha256 %s; read in %s, %s in all\n", path, entities, from,
		runfmt.FormatSize(size), per, sum[:12], time.Duration(extractNs).Round(time.Millisecond), time.Since(begin).Round(time.Millisecond))
	return nil
}

// subsetFlag is --collections as a list.
func subsetFlag(cmd *cli.Command) []string {
	var subset []string
	for _, c := range strings.Split(cmd.String("collections"), ",") {
		if c = strings.TrimSpace(c); c != "" {
			subset = append(subset, c)
		}
	}
	return subset
}
