// Command warmstat measures and analyzes evitaDB catalog publishing
// (WARM_UP reindex + goLive). This file holds flags and wiring only.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/base/buildinfo"
	"github.com/warmstat/warmstat/embedded"
	"github.com/warmstat/warmstat/report"
)

// stamped is the version the Makefile gives the build (-X main.stamped=...).
var stamped string

// version is the build's name, as runs record it and --version prints it.
var version = buildVersion(stamped)

// buildVersion names a build: stamped, else what the Go toolchain recorded.
var buildVersion = buildinfo.Version

// Exit codes, the same for every command.
const (
	exitFailed     = 1 // a failed run, or input that cannot be used
	exitUsage      = 2 // a bad flag value, a missing argument
	exitRefused    = 3 // a comparison warmstat will not make, or a gate it could not judge with --require-verdict
	exitRegression = 4 // a gated metric is slower, with --fail-on-regression
	// exitLoadUsage is a usage error of load, whose 2 is the Java harness's "counts
	// unknown" (its 0/2/1 contract is the run's own outcome): 64, sysexits' EX_USAGE
	exitLoadUsage = 64
)

// exitError carries the exit code a command wants; anything else exits 1.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func withCode(code int, err error) error { return &exitError{code: code, err: err} }

// usageError is a bad flag value or argument of command cmd: exit 2, with where to
// read how the command is used.
func usageError(cmd *cli.Command, format string, args ...any) error {
	return withCode(usageCode(cmd), fmt.Errorf("%s (%s --help)", fmt.Sprintf(format, args...), cmd.FullName()))
}

// usageCode is the exit code of a usage error of cmd: 2, except in load (64).
func usageCode(cmd *cli.Command) int {
	if cmd.Name == "load" {
		return exitLoadUsage
	}
	return exitUsage
}

// optionFlags name the flag behind each analyze option.
var optionFlags = map[string]string{
	"ThresholdPct": "--threshold", "Resamples": "--resamples", "Method": "--method", "Quantiles": "--quantiles",
	"AllowMismatch": "--allow-mismatch", "Gates": "--gate", "Watch": "--watch", "MinRuns": "--min-runs", "MaxRuns": "--max-runs", "AlphaPct": "--alpha", "Block": "--block", "Collection": "--collection",
}

// action maps what a command's packages return to exit codes and flag hints: an
// option analyze cannot use is a usage error naming its flag; a refusal exits 3.
func action(f cli.ActionFunc) cli.ActionFunc {
	return func(ctx context.Context, cmd *cli.Command) error {
		err := f(ctx, cmd)
		var oe *analyze.OptionError
		var ref *analyze.Refusal
		switch {
		case err == nil:
			return nil
		case errors.As(err, &oe):
			return usageError(cmd, "%s %s", optionFlags[oe.Option], oe)
		case errors.As(err, &ref):
			return refusal(ref)
		}
		return err
	}
}

// refusal is a refused comparison for people (stderr), with the flag that overrides
// a differing condition.
func refusal(ref *analyze.Refusal) error {
	lines := report.RefusalLines(ref)
	if len(ref.Mismatches) > 0 {
		lines = append(lines, "  (--allow-mismatch FIELD compares anyway, stamped NOT COMPARABLE; a build cannot be mixed within a group)")
	}
	for _, m := range ref.Mismatches {
		if m.Field == "catalog-line" {
			lines = append(lines, "  (a 2026.2 build gets the catalog written for 2026.1 with load --catalog-line 2026.1 or ab --catalog-line 2026.1; docs/upgrade.md)")
		}
	}
	lines = append(lines, report.DuplicateAdvice(ref)...)
	return withCode(exitRefused, errors.New(strings.Join(lines, "\n")))
}

func main() {
	os.Exit(run(context.Background(), os.Args, os.Stdout, os.Stderr))
}

// run executes the CLI and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	stdout, stderr = quietOnStop{W: stdout}, quietOnStop{W: stderr}
	app := newApp(stdout, stderr)
	// a command run from inside another (ab's compare and table) is a root of its own:
	// urfave/cli would otherwise find the caller's command in ctx, make it the parent
	// and write to the caller's writers. Only ctx's cancellation is carried over.
	own, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	err := app.Run(own, args)
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintf(stderr, "warmstat: %v\n", wayOut(ee.err))
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "warmstat: %v\n", wayOut(err))
	return exitFailed
}

// wayOut adds the flag that gets past a refusal any command can meet.
func wayOut(err error) error {
	if errors.Is(err, embedded.ErrUnsupported) {
		return fmt.Errorf("%w: ask it with --target-mode remote (a remote writer needs no adapter)", err)
	}
	return err
}

func newApp(stdout, stderr io.Writer) *cli.Command {
	app := &cli.Command{
		Name:           "warmstat",
		Usage:          "how long does publishing an evitaDB catalog take, and did this build make it faster or slower?",
		Version:        version,
		Writer:         stdout,
		ErrWriter:      stderr,
		ExitErrHandler: func(context.Context, *cli.Command, error) {}, // run() prints and maps errors
		// warmstat completion bash|zsh|fish|pwsh prints the script a shell sources
		EnableShellCompletion: true,
		ConfigureShellCompletionCommand: func(c *cli.Command) {
			c.Hidden = false
			c.Usage = "print the shell completion script: source <(warmstat completion bash) (zsh, fish, pwsh likewise)"
			c.Description = "Prints the script that completes warmstat's commands and flags in bash, zsh, fish or PowerShell.\n" +
				"Source it from the shell's start-up file (~/.bashrc, ~/.zshrc), or save it as fish's completion file." + examples("warmstat completion bash", "warmstat completion fish > ~/.config/fish/completions/warmstat.fish")
		},
		// without a command: the help; an unknown command is a usage error (exit 2)
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				return usageError(cmd, "no command %q", cmd.Args().First())
			}
			return cli.ShowAppHelp(cmd)
		},
		Description: help("warmstat"),
		Commands: []*cli.Command{
			seedCommand(),
			extractCommand(),
			shapeCommand(),
			loadCommand(),
			abCommand(),
			bisectCommand(),
			historyCommand(),
			importCommand(),
			reportCommand(),
			compareCommand(),
			combineCommand(),
			tableCommand(),
			plotCommand(),
			profileCommand(),
			embeddedCommand(),
		},
	}
	wire(app)
	return app
}

// wire gives every command the house's rules: usage errors as one line, slice flags
// taking each value whole, value flags given once, stray arguments refused, and
// errors mapped to exit codes (action).
func wire(app *cli.Command) {
	// A usage error is one line and exit 2, never the whole help text; "warmstat help
	// [command]" works, "warmstat compare help" is not a command of compare.
	onUsage := func(_ context.Context, cmd *cli.Command, err error, _ bool) error {
		return usageError(cmd, "%v", err)
	}
	app.OnUsageError = onUsage
	// these take flags only: a stray word (a flag's value given twice, a missing --) is
	// a usage error, never silently dropped
	noArgs := map[string]bool{"seed": true, "extract": true, "load": true, "ab": true, "import": true}
	for _, c := range app.Commands {
		c.OnUsageError = onUsage
		c.HideHelpCommand = true
		// a repeatable flag takes each value whole: a JVM option holds commas
		// (-agentpath:lib.so=start,event=cpu), and so may a gate's collection name
		c.DisableSliceFlagSeparator = true
		// a value flag given twice is a usage error, never "the last one wins": --a X ...
		// --a Y would silently measure Y (repeatable flags are the slice ones)
		for _, f := range c.Flags {
			switch f := f.(type) {
			case *cli.StringFlag:
				f.OnlyOnce = true
			case *cli.IntFlag:
				f.OnlyOnce = true
			case *cli.FloatFlag:
				f.OnlyOnce = true
			}
		}
		if c.Action != nil {
			inner := action(c.Action)
			if noArgs[c.Name] {
				c.Action = func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Args().Present() {
						return usageError(cmd, "%s takes no arguments, got %q", cmd.Name, strings.Join(cmd.Args().Slice(), " "))
					}
					return inner(ctx, cmd)
				}
			} else {
				c.Action = inner
			}
		}
	}
}

// examples closes a command's description with the command lines its page in docs/
// shows (TestEveryCommandHasItsPage holds them equal).
func examples(lines ...string) string {
	return "\n\nExamples:\n  " + strings.Join(lines, "\n  ")
}
