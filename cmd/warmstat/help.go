package main

import (
	"embed"
	"strings"

	"github.com/warmstat/warmstat/report"
)

// The commands' descriptions are prose, kept in help/COMMAND.txt (a subcommand's in
// help/COMMAND-SUB.txt) where they read as text and sentences.py measures them. Each
// ends with the command lines its page in docs/ shows (TestEveryCommandHasItsPage).
//
//go:embed help/*.txt
var helpFiles embed.FS

// help is the description of the command named (help/NAME.txt); {columns} stands for
// table's columns (report.ColumnHelp). A missing file is a build's defect, caught by
// every test that builds the app.
func help(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic("warmstat: no help/" + name + ".txt: " + err.Error())
	}
	return strings.ReplaceAll(strings.TrimSuffix(string(b), "\n"), "{columns}", report.ColumnHelp)
}
