package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/seed"
)

func seedCommand() *cli.Command {
	return &cli.Command{
		Name:  "seed",
		Usage: "write a deterministic, production-shaped synthetic catalog into a server (for when no production export is at hand)",
		Description: "--scale 1.0 gives the production totals (386,369 entities, 118,772 Product); the default 0.01 gives\n" +
			"~3,900 entities. The same --seed and --scale give the same catalog, entity for entity. The shape is\n" +
			"the profile (--print-profile shows it as JSON; --profile FILE replaces it).",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "target", Usage: "server host:port (gRPC)"},
			&cli.StringFlag{Name: "catalog", Value: "seed", Usage: "catalog to create"},
			&cli.FloatFlag{Name: "scale", Value: 0.01, Usage: "scale factor (1.0 = production totals)"},
			&cli.IntFlag{Name: "seed", Value: 1, Usage: "random seed"},
			&cli.StringFlag{Name: "profile", Usage: "JSON profile replacing the built-in one"},
			&cli.BoolFlag{Name: "replace", Usage: "drop the catalog if it exists (otherwise refused)"},
			&cli.BoolFlag{Name: "print-profile", Usage: "print the profile as JSON and exit"},
			&cli.StringFlag{Name: "pristine", Usage: "spawn a server, seed, stop it and leave DIR/<catalog>/ as a pristine snapshot for load --pristine"},
			&cli.StringFlag{Name: "heap", Value: "2g", Usage: "with --pristine: the seeding server's heap"},
		}, serverFlags("with --pristine")...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			p := seed.DefaultProfile()
			if f := cmd.String("profile"); f != "" {
				var err error
				if p, err = seed.LoadProfile(f); err != nil {
					return err
				}
			}
			if cmd.Bool("print-profile") {
				enc := json.NewEncoder(cmd.Root().Writer)
				enc.SetIndent("", "  ") // a file to edit: line numbers in its errors mean something
				return enc.Encode(p)
			}
			if cmd.Float("scale") <= 0 || cmd.Float("scale") > 10 {
				return fmt.Errorf("--scale must be in (0, 10]")
			}
			ctx, stop := interruptible(ctx, cmd.Root().ErrWriter)
			defer stop()
			if dir := cmd.String("pristine"); dir != "" {
				src, err := serverSource(cmd, "seed --pristine")
				if err != nil {
					return err
				}
				heap, err := runfmt.ParseBytes(cmd.String("heap"))
				if err != nil {
					return fmt.Errorf("--heap: %v", err)
				}
				st, err := seed.Pristine(ctx, src, dir, cmd.String("catalog"), heap, p, cmd.Float("scale"), uint64(cmd.Int("seed")), evita.Probe)
				if err != nil {
					return faultHint(err)
				}
				fmt.Fprintf(cmd.Root().Writer, "pristine snapshot %s/%s: %d entities (seeded in %s)\n", dir, cmd.String("catalog"), st.Entities, st.Took.Round(1e6))
				return nil
			}
			if cmd.String("target") == "" {
				return fmt.Errorf("seed needs --target host:port, or --pristine DIR")
			}
			c, err := evita.Dial(ctx, cmd.String("target"), evita.Options{})
			if err != nil {
				return err
			}
			defer c.Close()
			var progress = cmd.Root().ErrWriter
			if !isTerminal(progress) {
				progress = nil
			}
			st, err := seed.Seed(ctx, c, cmd.String("catalog"), p, cmd.Float("scale"), uint64(cmd.Int("seed")), cmd.Bool("replace"), progress)
			if errors.Is(err, seed.ErrCatalogExists) {
				return fmt.Errorf("%w; --replace drops it", err)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.Root().Writer, "seeded catalog %s on %s: %d entities in %s (%.1f entities/s), ALIVE\n", cmd.String("catalog"), c.Addr,
				st.Entities, st.Took.Round(1e6), float64(st.Entities)/st.Took.Seconds())
			return nil
		},
	}
}
