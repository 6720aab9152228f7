package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/seed"
	"github.com/warmstat/warmstat/shape"
)

func shapeCommand() *cli.Command {
	return &cli.Command{
		Name:  "shape",
		Usage: "measure a catalog's shape (its schema and the distributions that decide the write path) into a shape file, with no value of the catalog in it",
		Description: "The source is a workload file (--workload), a pristine snapshot (spawn mode: --pristine DIR --catalog NAME and a\n" +
			"server, as in extract) or a running server (attach mode: --source ADDR --source-catalog NAME); spawn and attach\n" +
			"read the catalog once into a temporary workload beside --out, removed afterwards.\n" +
			"The shape file (--out, never an existing file) is JSON in seed's profile vocabulary (format warmstat.shape/v1):\n" +
			"the schema, and per collection its entities; per attribute its presence, value lengths and distinct values;\n" +
			"per reference the references per entity, the fan-in of its targets and its groups; prices, associated-data\n" +
			"sizes, locales and hierarchy. It holds no attribute value, associated-data content, price amount or primary\n" +
			"key; --anonymise also renames the catalog, collections, attributes, references and associated data.\n" +
			"warmstat seed --shape FILE generates a catalog of that shape at any --scale.\n" +
			"--diff GOT WANT compares two shape files (GOT typically of a catalog seeded from WANT) within the tolerances\n" +
			"of a regenerated catalog (docs/shape.md) and lists every figure beyond them.\n" +
			"Exit codes: 0 measured (--diff: within the tolerances), 1 failed (nothing left at --out; --diff: the shapes\n" +
			"differ), 2 usage error; 130 / 143 a second Ctrl-C or SIGTERM." +
			examples("warmstat shape --workload /var/tmp/ws/shop.wsw --out shop.shape.json",
				"warmstat shape --pristine /var/tmp/ws/regen --catalog shop --evita-version 2026.2.2 --out regen.shape.json",
				"warmstat shape --diff regen.shape.json shop.shape.json"),
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
	path, from, kind := cmd.String("workload"), cmd.String("workload"), "workload"
	if !fromWorkload {
		if err := loadLimits(cmd); err != nil {
			return err
		}
		ctx, stop := interruptible(ctx, cmd.Root().ErrWriter)
		defer stop()
		// the temporary workload lives beside --out, in a directory of warmstat's own:
		// removed whole afterwards, it never touches a directory warmstat did not make
		tmp, err := os.MkdirTemp(filepath.Dir(out), ".warmstat-shape-*")
		if err != nil {
			return err
		}
		removed := make(chan struct{})
		removeOnStop.Store(tmp, removed)
		defer func() {
			os.RemoveAll(tmp)
			if stoppingAtOnce.Load() { // the stop's goroutine exits with its code once this is gone
				close(removed)
				select {}
			}
			removeOnStop.Delete(tmp)
		}()
		path = filepath.Join(tmp, "source.wsw")
		if _, from, err = extractSource(ctx, cmd, path, filepath.Join(tmp, "work"), "shape"); err != nil {
			return err
		}
		kind = "snapshot"
		if !cmd.IsSet("pristine") {
			kind = "server"
		}
	}
	p, err := shape.MeasureFile(path, out, from, shape.Options{From: kind, Anonymise: cmd.Bool("anonymise")})
	if err != nil {
		return err
	}
	w := cmd.Root().Writer
	scale := ""
	if p.Measured.Scale != 1 {
		scale = fmt.Sprintf(" (a catalog seeded at scale %g: seed --shape regenerates it at --scale %g)", p.Measured.Scale, p.Measured.Scale)
	}
	fmt.Fprintf(w, "shape %s: %d collections, %d entities measured from %s in %s%s\n", out, len(p.Collections), p.Measured.Entities,
		from, time.Since(begin).Round(time.Millisecond), scale)
	if len(p.Measured.NotKept) > 0 {
		fmt.Fprintf(w, "not kept (the generator's vocabulary cannot say it): %s\n", strings.Join(p.Measured.NotKept, "; "))
	}
	return report.WriteShapeSummary(w, p)
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
