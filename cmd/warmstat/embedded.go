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
		Description: "The embedded writer is a small Java program of warmstat's (the engine in one JVM, no transport) compiled\n" +
			"against each build's own jars and cached per build; load and ab compile it on first use. This does it now." +
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
	id, err := src.Identify()
	if err != nil {
		return err
	}
	jar, err := embedded.Build(src, id, func(msg string) { fmt.Fprintln(cmd.Root().ErrWriter, msg) })
	if err != nil {
		return err
	}
	fmt.Fprintln(cmd.Root().Writer, jar)
	return nil
}
