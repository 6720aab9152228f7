package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/runfmt"
)

func importCommand() *cli.Command {
	return &cli.Command{
		Name:        "import",
		Usage:       "turn one Java harness run (per-entity.csv + stdout.log) into a warmstat run directory",
		Description: help("import"),
		Flags: append(conditionFlags("writer max heap, e.g. 23g", "reader max heap, e.g. 14g (overrides the log's figure)"),
			&cli.StringFlag{Name: "java", Usage: "harness run directory holding stdout.log and per-entity.csv", Required: true},
			&cli.StringFlag{Name: "out", Usage: "run directory to create", Required: true},
			&cli.StringFlag{Name: "build", Usage: "build label (default: the git commit in the log, else DIR's name)"},
			&cli.StringFlag{Name: "server-version", Usage: "evitaDB server version of the writer"},
			&cli.StringSliceFlag{Name: "writer-gc-log", Usage: "the writer server's -Xlog:gc* file(s), rotations oldest first (e.g. BENCH_DIR/server/RUN/gc.log): records its pauses, each counted once"},
			&cli.StringFlag{Name: "machine", Usage: "\"this\": the harness ran on this machine; record its cores, CPU model, kernel, memory and memory limit"},
			&cli.StringFlag{Name: "jvm", Usage: "\"this\": the harness and its server ran on this machine's java; record its vendor, version and collector"},
			&cli.IntFlag{Name: "cores", Usage: "cores of the machine the harness ran on"},
			&cli.StringFlag{Name: "memory", Usage: "memory of the machine the harness ran on, e.g. 32g"},
			&cli.StringFlag{Name: "memory-limit", Usage: "cgroup memory limit the harness ran under, e.g. 24g"},
		),
		Action: runImport,
	}
}

func runImport(ctx context.Context, cmd *cli.Command) error {
	cond, err := parseConditions(cmd)
	if err != nil {
		return err
	}
	mach, err := machineFlags(cmd)
	if err != nil {
		return err
	}
	if v := cmd.String("jvm"); v != "" && v != "this" {
		return usageError(cmd, "--jvm %q: the only JVM warmstat can read is \"this\" (this machine's java)", v)
	}
	h := runfmt.HarnessImport{Dir: cmd.String("java"), Out: cmd.String("out"), Machine: mach, Check: analyze.CheckHarnessRun,
		Options: runfmt.HarnessImportOptions{Build: cmd.String("build"), ServerVersion: cmd.String("server-version"), ServerHeap: cond.serverHeap,
			ReaderHeap: cond.readerHeap, StorageCompress: cond.compress, CacheEnabled: cond.cache, TrafficRecord: cond.record}}
	h.Amend = func(m *runfmt.Manifest) error { return importJVMs(cmd, m) }
	m, err := runfmt.ImportHarness(h)
	if err != nil {
		return err
	}
	report.WriteImported(cmd.Root().Writer, h.Dir, h.Out, m)
	return nil
}

// importJVMs records in m what the harness's files do not hold: the writer's GC
// (--writer-gc-log) and, with --jvm this, this machine's java as the run's JVMs.
func importJVMs(cmd *cli.Command, m *runfmt.Manifest) error {
	var writerGC *evitaserver.GCSummary
	if logs := cmd.StringSlice("writer-gc-log"); len(logs) > 0 {
		gc, err := evitaserver.ParseGCFiles(logs...)
		if err != nil {
			return err
		}
		m.WriterGC, writerGC = gc.Record(gc.UptimeNs), &gc
	}
	if cmd.String("jvm") != "this" {
		return nil
	}
	var err error
	m.Server.JVM, m.Reader.JVM, err = evitaserver.ThisJVMs(writerGC)
	var mismatch *evitaserver.JVMMismatchError
	switch {
	case errors.As(err, &mismatch):
		return fmt.Errorf("%v: --jvm this does not describe it", mismatch)
	case err != nil:
		return fmt.Errorf("--jvm this: %w", err)
	}
	return nil
}

// machineFlags is the machine an imported run was measured on: this one (--machine
// this), or what the flags say (they win); unknown otherwise.
func machineFlags(cmd *cli.Command) (runfmt.Machine, error) {
	var m runfmt.Machine
	switch v := cmd.String("machine"); v {
	case "":
	case "this":
		here, err := evitaserver.ReadMachine()
		if err != nil {
			return m, fmt.Errorf("reading this machine: %w", err)
		}
		m = here.Record() // exactly what load records
	default:
		return m, usageError(cmd, "--machine %q: the only machine warmstat can read is \"this\" (--cores, --memory and --memory-limit describe another)", v)
	}
	if cmd.IsSet("cores") {
		c := cmd.Int("cores")
		if c <= 0 || c > 1<<16 {
			return m, usageError(cmd, "--cores %d: must be from 1 to 65536", c)
		}
		m.Cores = &c
	}
	var err error
	if cmd.IsSet("memory") {
		if m.MemoryBytes, err = optBytes(cmd, "memory"); err != nil {
			return m, err
		}
	}
	if cmd.IsSet("memory-limit") {
		if m.CgroupMemoryLimitBytes, err = optBytes(cmd, "memory-limit"); err != nil {
			return m, err
		}
	}
	return m, nil
}
