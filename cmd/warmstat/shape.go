package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/base/interrupt"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/seed"
	"github.com/warmstat/warmstat/shape"
)

func shapeCommand() *cli.Command {
	return &cli.Command{
		Name:        "shape",
		Usage:       "measure a catalog's shape (its schema and the distributions that decide the write path) into a shape file, with no value of the catalog in it",
		Description: help("shape"),
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "the shape file to create"},
			&cli.BoolFlag{Name: "diff", Usage: "compare two shape files, GOT and WANT (arguments), within a regenerated catalog's tolerances"},
			&cli.StringFlag{Name: "workload", Usage: "the source: a workload file (warmstat extract)"},
			&cli.BoolFlag{Name: "anonymise", Usage: "rename the catalog, collections, attributes, references and associated data consistently"},
		}, sourceFlags()...), serverFlags("spawn mode")...),
		Action: runShape,
	}
}

func runShape(ctx context.Context, cmd *cli.Command) error {
	if cmd.Bool("diff") {
		return runShapeDiff(cmd)
	}
	if cmd.Args().Len() > 0 {
		return usageError(cmd, "unexpected argument %q (arguments are for --diff GOT WANT)", cmd.Args().First())
	}
	out := cmd.String("out")
	if out == "" {
		return usageError(cmd, "shape needs --out FILE (or --diff GOT WANT)")
	}
	if _, err := os.Lstat(out); err == nil {
		return usageError(cmd, "--out %s exists: a shape file is never overwritten", out)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	fromWorkload := cmd.String("workload") != ""
	if fromWorkload && (cmd.IsSet("pristine") || cmd.IsSet("source") || cmd.IsSet("source-catalog")) {
		return usageError(cmd, "one source: --workload, or --pristine (spawn mode), or --source (attach mode)")
	}
	if !fromWorkload && !cmd.IsSet("pristine") && !cmd.IsSet("source") && !cmd.IsSet("source-catalog") {
		return usageError(cmd, "shape needs a source: --workload FILE, --pristine DIR --catalog NAME (spawn mode) or --source ADDR --source-catalog NAME (attach mode)")
	}
	if _, err := os.Stat(filepath.Dir(out)); err != nil {
		return usageError(cmd, "--out %s: its directory %v", out, err)
	}
	begin := time.Now()
	o := shape.Options{From: "workload", Anonymise: cmd.Bool("anonymise")}
	var p *seed.Profile
	var err error
	from := cmd.String("workload")
	if fromWorkload {
		p, err = shape.MeasureFile(from, out, from, o)
	} else if err = loadLimits(cmd); err == nil {
		p, from, err = shapeOfSource(ctx, cmd, out, o)
	}
	if err != nil {
		return err
	}
	return report.WriteShapeMeasured(cmd.Root().Writer, out, from, p, time.Since(begin))
}

// shapeOfSource measures a snapshot's or a server's catalog, read first into a
// temporary workload beside out, in a directory of warmstat's own: removed whole
// afterwards, it never touches a directory warmstat did not make.
func shapeOfSource(ctx context.Context, cmd *cli.Command, out string, o shape.Options) (p *seed.Profile, from string, err error) {
	ctx, stop := interruptible(ctx, cmd.Root().ErrWriter)
	defer stop()
	if o.From = "snapshot"; !cmd.IsSet("pristine") {
		o.From = "server"
	}
	err = interrupt.WithTempDir(filepath.Dir(out), ".warmstat-shape-*", func(tmp string) error {
		path := filepath.Join(tmp, "source.wsw")
		if _, from, err = extractSource(ctx, cmd, path, filepath.Join(tmp, "work"), "shape"); err != nil {
			return err
		}
		p, err = shape.MeasureFile(path, out, from, o)
		return err
	})
	return p, from, err
}

// runShapeDiff is shape --diff GOT WANT.
func runShapeDiff(cmd *cli.Command) error {
	if cmd.Args().Len() != 2 {
		return usageError(cmd, "--diff compares two shape files: GOT WANT")
	}
	if cmd.IsSet("out") || cmd.IsSet("workload") || cmd.IsSet("pristine") || cmd.IsSet("source") || cmd.IsSet("anonymise") {
		return usageError(cmd, "--diff reads two shape files; it measures nothing")
	}
	got, err := seed.LoadProfile(cmd.Args().Get(0))
	if err != nil {
		return err
	}
	want, err := seed.LoadProfile(cmd.Args().Get(1))
	if err != nil {
		return err
	}
	diffs := shape.Compare(got, want)
	w := cmd.Root().Writer
	if len(diffs) == 0 {
		fmt.Fprintf(w, "%s has the shape of %s: every figure within the tolerances of a regenerated catalog\n", cmd.Args().Get(0), cmd.Args().Get(1))
		return nil
	}
	if err := report.WriteShapeDifferences(w, diffs); err != nil {
		return err
	}
	return fmt.Errorf("%s differs from %s in %d figure(s) beyond the tolerances", cmd.Args().Get(0), cmd.Args().Get(1), len(diffs))
}
