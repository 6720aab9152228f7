package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

// referencePath is the generated flag reference.
var referencePath = filepath.Join("..", "..", "docs", "reference.md")

// The command and flag reference (docs/reference.md) is generated from the CLI's own
// definitions, so that --help and the docs cannot drift apart: make docs rewrites it
// (this test with -update), and the test fails when it is stale.
func TestFlagReference(t *testing.T) {
	got := flagReference(newApp(io.Discard, io.Discard))
	if *update {
		if err := os.MkdirAll(filepath.Dir(referencePath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(referencePath, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(referencePath)
	if err != nil || string(want) != got {
		t.Fatalf("docs/reference.md is stale (%v): make docs rewrites it from the commands' definitions", err)
	}
}

// flagReference renders every visible command: its one-line purpose, its arguments, its
// description as --help prints it, and a table of its flags (name, default, required,
// what it does).
func flagReference(app *cli.Command) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# warmstat command reference\n\n")
	p("Generated from warmstat's own command definitions by `make docs`: what `warmstat COMMAND --help` prints, for\n")
	p("every command. Do not edit it by hand; a test fails when it is stale. The guides in this directory explain\n")
	p("what the commands are for and how to read their output.\n\n")
	p("%s\n\n", app.Usage)
	p("```text\n%s\n```\n\n", app.Description)
	for _, c := range app.Commands {
		if c.Hidden || c.Name == "help" {
			continue
		}
		p("- [`warmstat %s`](#warmstat-%s): %s\n", c.Name, c.Name, c.Usage)
	}
	for _, c := range app.Commands {
		if c.Hidden || c.Name == "help" {
			continue
		}
		p("\n## warmstat %s\n\n%s\n\n", c.Name, c.Usage)
		args := "[options]"
		if c.ArgsUsage != "" {
			args += " " + c.ArgsUsage
		}
		p("```text\nwarmstat %s %s\n", c.Name, args)
		if c.Description != "" {
			p("\n%s\n", c.Description)
		}
		p("```\n")
		for _, sub := range c.Commands {
			p("\n- `warmstat %s %s`: %s\n", c.Name, sub.Name, sub.Usage)
		}
		var rows []string
		for _, f := range c.Flags {
			d, ok := f.(cli.DocGenerationFlag)
			if !ok {
				continue
			}
			var names []string
			for _, n := range f.Names() {
				if len(n) == 1 {
					names = append(names, "`-"+n+"`")
				} else {
					names = append(names, "`--"+n+"`")
				}
			}
			def := ""
			if d.TakesValue() && d.IsDefaultVisible() {
				def = d.GetDefaultText()
				if def == "" {
					def = d.GetValue()
				}
			}
			if r, ok := f.(cli.RequiredFlag); ok && r.IsRequired() {
				def = "required"
			}
			if def == "" || def == `""` {
				def = "—"
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %s |", strings.Join(names, ", "), mdCell(def), mdCell(d.GetUsage())))
		}
		if len(rows) > 0 {
			p("\n| flag | default | what it does |\n|---|---|---|\n%s\n", strings.Join(rows, "\n"))
		}
	}
	return b.String()
}

// mdCell keeps a table cell one cell: no pipe or line break of its own.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
