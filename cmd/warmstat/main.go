// Command warmstat measures and analyzes evitaDB catalog publishing
// (WARM_UP reindex + goLive). This file holds flags and wiring only.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v3"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// exitError carries the exit code a command wants; anything else exits 1.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func withCode(code int, err error) error { return &exitError{code: code, err: err} }

func main() {
	os.Exit(run(context.Background(), os.Args, os.Stdout, os.Stderr))
}

// run executes the CLI and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	err := app.Run(ctx, args)
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintf(stderr, "warmstat: %v\n", ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "warmstat: %v\n", err)
	return 1
}

func newApp(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:            "warmstat",
		Usage:           "how long does publishing an evitaDB catalog take, and did this build make it faster or slower?",
		Version:         version,
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		ExitErrHandler:  func(context.Context, *cli.Command, error) {}, // run() prints and maps errors
		OnUsageError: func(_ context.Context, _ *cli.Command, err error, _ bool) error {
			return withCode(1, err)
		},
		Commands: []*cli.Command{
			seedCommand(),
			loadCommand(),
			importCommand(),
			reportCommand(),
			compareCommand(),
			tableCommand(),
			plotCommand(),
		},
	}
}
