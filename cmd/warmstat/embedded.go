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
		Name:        "embedded-writer",
		Usage:       "compile warmstat's embedded writer (--target-mode embedded) against a build, once; prints where it is",
		Description: help("embedded-writer"),
		Flags:       serverFlags("the build"),
		Action:      runEmbedded,
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
