package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/loader"
	"github.com/warmstat/warmstat/profile"
	"github.com/warmstat/warmstat/report"
	"github.com/warmstat/warmstat/runfmt"
)

// writerProfileFlags are load's (and a series') profiler flags.
func writerProfileFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "writer-profile", Usage: "spawn mode: profile the writer JVM during the load and, apart, goLive: " +
			strings.Join(profile.Modes, " | ") + " (cpu, alloc, wall, lock: async-profiler, fetched by make profiler; jfr: the JDK's Flight Recorder). " +
			"Flame graphs (HTML), pprof and JFR files go into the run directory's profile/, the profiler into the manifest"},
		&cli.StringFlag{Name: "writer-profile-interval", Usage: fmt.Sprintf("sampling interval: a duration for cpu (default %s), wall (%s), jfr (%s), "+
			"the lock threshold for lock (%s), a size for alloc (default %s)", profile.DefaultCPUInterval, profile.DefaultWallInterval,
			profile.DefaultJFRPeriod, profile.DefaultLockThreshold, runfmt.FormatInterval(profile.DefaultAllocBytes, runfmt.UnitBytes))},
	}
}

// writerProfiler reads the profiler flags (nil without --writer-profile); recordings
// are written into the work directory while the writer runs.
func writerProfiler(cmd *cli.Command, workDir string, warn func(string)) (loader.Profiler, error) {
	mode := cmd.String("writer-profile")
	if mode == "" {
		if cmd.IsSet("writer-profile-interval") {
			return nil, usageError(cmd, "--writer-profile-interval needs --writer-profile")
		}
		return nil, nil
	}
	r, err := profile.Open(profile.Setup{Mode: mode, Interval: cmd.String("writer-profile-interval"), WorkDir: workDir, Warn: warn})
	var ie *profile.IntervalError
	var oe *profile.OptionError
	switch {
	case err == nil:
		return r, nil
	case errors.As(err, &ie):
		return nil, usageError(cmd, "--writer-profile-interval %v", ie)
	case errors.Is(err, profile.ErrNotFetched):
		return nil, fmt.Errorf("--writer-profile %s: %w", mode, err)
	case errors.As(err, &oe):
		return nil, usageError(cmd, "--writer-profile%s: %v", map[string]string{"Interval": "-interval"}[oe.Option], oe)
	}
	return nil, err
}

func profileCommand() *cli.Command {
	return &cli.Command{
		Name:        "profile",
		Usage:       "the writer's hottest frames by phase (load, goLive), or which frames grew or shrank between two builds",
		ArgsUsage:   "RUN | --diff A B | --fidelity RUN...",
		Description: help("profile"),
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "diff", Usage: "compare two builds: A B"},
			&cli.BoolFlag{Name: "fidelity", Usage: "hold the runs' writer profiles against a reference profile: RUN..."},
			&cli.StringFlag{Name: "reference", Value: profile.DefaultReference, Usage: "with --fidelity: a built-in reference (" +
				strings.Join(profile.BuiltinReferences(), ", ") + ") or a reference file"},
			&cli.IntFlag{Name: "callers", Usage: "with --fidelity: list each entry's N largest call paths (why its share is what it is)"},
			&cli.FloatFlag{Name: "within", Value: profile.DefaultWithin, Usage: "with --fidelity: the factor a main entry may differ from the reference by and count as faithful"},
			&cli.IntFlag{Name: "top", Value: 20, Usage: "frames listed per table"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text | json | md"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			f, err := report.ParseFormat(cmd.String("format"), report.Text, report.JSON, report.Markdown)
			if err != nil {
				return usageError(cmd, "--format: %v", err)
			}
			err = runProfile(cmd, f)
			var oe *profile.OptionError
			var ref *profile.Refusal
			switch {
			case errors.As(err, &oe):
				return usageError(cmd, "--%s: %v", strings.ToLower(oe.Option), oe)
			case errors.As(err, &ref):
				return withCode(exitRefused, err)
			case errors.Is(err, profile.ErrNotProfiled):
				return fmt.Errorf("%w (load --writer-profile profiles it)", err)
			}
			return err
		},
	}
}

func runProfile(cmd *cli.Command, f report.Format) error {
	out := cmd.Root().Writer
	if cmd.Bool("fidelity") {
		if cmd.Bool("diff") {
			return usageError(cmd, "--fidelity and --diff: one at a time")
		}
		if cmd.Args().Len() == 0 {
			return usageError(cmd, "profile --fidelity needs one or more RUN directories (or directories of runs)")
		}
		ref, err := profile.LoadReference(cmd.String("reference"))
		if err != nil {
			return err
		}
		if cmd.IsSet("top") {
			return usageError(cmd, "--top lists frames of a profile or a diff; a fidelity report lists its reference's entries (--callers lists where they come from)")
		}
		if cmd.Int("callers") < 0 {
			return usageError(cmd, "--callers %d: a count, 0 or more", cmd.Int("callers"))
		}
		fd, err := profile.FidelityReport(ref, cmd.Float("within"), cmd.Int("callers"), cmd.Args().Slice()...)
		if err != nil {
			return err
		}
		return report.WriteFidelity(out, fd, f)
	}
	for _, fl := range []string{"reference", "within", "callers"} {
		if cmd.IsSet(fl) {
			return usageError(cmd, "--%s needs --fidelity", fl)
		}
	}
	if cmd.Bool("diff") {
		if cmd.Args().Len() != 2 {
			return usageError(cmd, "profile --diff needs two arguments, A and B (got %d)", cmd.Args().Len())
		}
		d, err := profile.DiffGroups(cmd.Args().Get(0), cmd.Args().Get(1), cmd.Int("top"))
		if err != nil {
			return err
		}
		return report.WriteProfileDiff(out, d, f)
	}
	if cmd.Args().Len() != 1 {
		return usageError(cmd, "profile needs exactly one RUN directory, or --diff A B (got %d arguments)", cmd.Args().Len())
	}
	t, err := profile.TopFrames(cmd.Args().First(), cmd.Int("top"))
	if err != nil {
		return err
	}
	return report.WriteProfileTop(out, t, f)
}
