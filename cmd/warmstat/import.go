package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/runfmt"
)

func importCommand() *cli.Command {
	return &cli.Command{
		Name:  "import",
		Usage: "turn one Java harness run (per-entity.csv + stdout.log) into a warmstat run directory",
		Description: "Reads DIR/stdout.log (the IsolatedWarmupLoadBenchmark loader's stdout, any JVM locale) and\n" +
			"DIR/per-entity.csv, checks that the CSV reproduces every latency figure the harness printed,\n" +
			"and writes --out (which must not exist or be empty). Heaps given as flags win over the log;\n" +
			"a heap known from neither is recorded as unknown.",
		Flags: append(conditionFlags("writer max heap, e.g. 23g", "reader max heap, e.g. 14g (overrides the log's figure)"),
			&cli.StringFlag{Name: "java", Usage: "harness run directory holding stdout.log and per-entity.csv", Required: true},
			&cli.StringFlag{Name: "out", Usage: "run directory to create", Required: true},
			&cli.StringFlag{Name: "build", Usage: "build label (default: the git commit in the log, else DIR's name)"},
			&cli.StringFlag{Name: "server-version", Usage: "evitaDB server version of the writer"},
			&cli.StringSliceFlag{Name: "writer-gc-log", Usage: "the writer server's -Xlog:gc* file(s), rotations oldest first (e.g. BENCH_DIR/server/RUN/gc.log): records its pauses, each counted once"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			dir := cmd.String("java")
			cond, err := parseConditions(cmd)
			if err != nil {
				return err
			}
			opts := runfmt.HarnessImportOptions{Build: cmd.String("build"), ServerVersion: cmd.String("server-version"),
				ServerHeap: cond.serverHeap, ReaderHeap: cond.readerHeap, StorageCompress: cond.compress, CacheEnabled: cond.cache, TrafficRecord: cond.record}
			logPath, csvPath := filepath.Join(dir, "stdout.log"), filepath.Join(dir, "per-entity.csv")
			rep, err := runfmt.ParseHarnessLog(logPath)
			if err != nil {
				return err
			}
			m := rep.Manifest(dir, opts)
			if logs := cmd.StringSlice("writer-gc-log"); len(logs) > 0 {
				gc, err := evitaserver.ParseGCFiles(logs...)
				if err != nil {
					return err
				}
				young, full := gc.Young, gc.Full
				m.WriterGC = &runfmt.GCStats{Collections: gc.Pauses(), YoungPauses: &young, FullPauses: &full, PauseNs: gc.PauseNs,
					ShareOfWallPc: gc.ShareOf(gc.UptimeNs)}
			}
			check := func(staged string) error {
				run, err := runfmt.Open(staged)
				if err != nil {
					return err
				}
				s, err := analyze.Summarize(run, analyze.QuantilesJava)
				if err != nil {
					return err
				}
				return analyze.CheckHarnessFigures(rep, s)
			}
			out := cmd.String("out")
			if err := runfmt.WriteHarnessRun(out, m, csvPath, logPath, check); err != nil {
				return err
			}
			fmt.Fprintf(cmd.Root().Writer, "imported %s -> %s: %d entities, build %s, verification %s, goLive %s, exit code %d\n",
				dir, out, m.Entities, m.Build.Label, m.Verification.Status, m.GoLive.Status, m.ExitCode)
			return nil
		},
	}
}
