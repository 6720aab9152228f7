package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"
	"github.com/warmstat/warmstat/embedded"
)

// embeddedCommand compiles the embedded writer against a build ahead of its first use
// (make embedded): a refusal (a build without evitaDB's gRPC converters) then comes
// before any series, and a CI machine compiles once.
func embeddedCommand() *cli.Command {
	return &cli.Command{
		Name:  "embedded-writer",
		Usage: "compile warmstat's embedded writer (--target-mode embedded) against a build, once; prints where it is",
		Description: "Compiles warmstat's embedded writer (the engine in one JVM, no transport) against a build's jars.\n" +
			"It is cached per build; load and ab compile it on first use. Prints the jar's path.\n" +
			"Exit codes: 0 ok, 1 not compiled or the build cannot be used, 2 usage error. docs/embedded-writer.md has the rest." +
			examples("warmstat embedded-writer --evita-version 2026.2.3"),
		Flags:  serverFlags("the build"),
		Action: runEmbedded,
	}
}

func runEmbedded(_ context.Context, cmd *cli.Command) error {
	src, err := serverSource(cmd, "embedded-writer")
	if err != nil {
		return err
	}
	jar, err := embedded.BuildSource(src, func(msg string) { fmt.Fprintln(cmd.Root().ErrWriter, msg) })
	if err != nil {
		return err
	}
	fmt.Fprintln(cmd.Root().Writer, jar)
	return nil
}
