package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
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
	p("%s\n\n", sentence(app.Usage))
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
		p("\n## warmstat %s\n\n%s\n\n", c.Name, sentence(c.Usage))
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
		if t := flagTable(c); t != "" {
			p("\n%s", t)
		}
	}
	return b.String()
}

// mdCell keeps a table cell one cell: no pipe or line break of its own.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// flagTable is a command's flags as a markdown table (name, default, required, what it
// does), or "" for a command without flags.
func flagTable(c *cli.Command) string {
	var rows []string
	for _, f := range c.Flags {
		d, ok := f.(cli.DocGenerationFlag)
		if !ok {
			continue
		}
		var names []string
		for _, n := range f.Names() {
			names = append(names, "`--"+n+"`") // as the examples write them, one letter or many
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
	if len(rows) == 0 {
		return ""
	}
	return fmt.Sprintf("| flag | default | what it does |\n|---|---|---|\n%s\n", strings.Join(rows, "\n"))
}

// flagBlock matches a page's generated flag section: the lines between
// <!-- flags:COMMAND --> and <!-- /flags -->.
var flagBlock = regexp.MustCompile(`(?s)(<!-- flags:([a-z-]+) -->\n).*?(<!-- /flags -->)`)

// fillFlagBlocks rewrites every flag section of a page from the command's definition.
func fillFlagBlocks(page string, app *cli.Command) (string, error) {
	var missing []string
	out := flagBlock.ReplaceAllStringFunc(page, func(m string) string {
		sub := flagBlock.FindStringSubmatch(m)
		c := findCommand(app, sub[2])
		if c == nil {
			missing = append(missing, sub[2])
			return m
		}
		body := "Generated from the command's own definition by `make docs` (`warmstat " + c.Name + " --help` prints the same).\n\n"
		if t := flagTable(c); t != "" {
			body += t
		} else {
			body += "No flags.\n"
		}
		return sub[1] + body + sub[3]
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("a flag section names no command: %s", strings.Join(missing, ", "))
	}
	return out, nil
}

func findCommand(app *cli.Command, name string) *cli.Command {
	for _, c := range app.Commands {
		if c.Name == name && !c.Hidden {
			return c
		}
	}
	return nil
}

// visibleCommands are the commands a user is shown (help aside).
func visibleCommands(app *cli.Command) []*cli.Command {
	var cs []*cli.Command
	for _, c := range app.Commands {
		if !c.Hidden && c.Name != "help" {
			cs = append(cs, c)
		}
	}
	return cs
}

// Every command has its page, docs/COMMAND.md, listed in the guides' index, whose flag
// section is generated (make docs) and current, and whose worked examples hold every
// example the command's --help prints, verbatim: the help and the docs say the same.
func TestEveryCommandHasItsPage(t *testing.T) {
	app := newApp(io.Discard, io.Discard)
	docs := filepath.Join("..", "..", "docs")
	index, err := os.ReadFile(filepath.Join(docs, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range visibleCommands(app) {
		page := filepath.Join(docs, c.Name+".md")
		b, err := os.ReadFile(page)
		if err != nil {
			t.Errorf("warmstat %s has no page: %v", c.Name, err)
			continue
		}
		text := string(b)
		if !strings.Contains(text, "<!-- flags:"+c.Name+" -->") {
			t.Errorf("%s: no generated flag section (<!-- flags:%s --> … <!-- /flags -->)", page, c.Name)
		}
		if !strings.Contains(string(index), "("+c.Name+".md)") {
			t.Errorf("docs/README.md does not link %s.md", c.Name)
		}
		examples := helpExamples(c)
		if len(examples) == 0 {
			t.Errorf("warmstat %s --help shows no example", c.Name)
		}
		for _, sub := range c.Commands { // a subcommand's examples are its parent's page's too
			examples = append(examples, helpExamples(sub)...)
		}
		for _, ex := range examples {
			if !strings.HasPrefix(ex, "warmstat "+c.Name+" ") {
				t.Errorf("warmstat %s --help: after its examples, a line that is not one: %s", c.Name, ex)
			}
			flags := map[string]bool{}
			for _, f := range subcommandOf(c, strings.Fields(ex)[2:]).Flags {
				for _, n := range f.Names() {
					flags[n] = true
				}
			}
			for _, tok := range strings.Fields(ex) {
				if name, ok := strings.CutPrefix(tok, "--"); ok && !flags[name] {
					t.Errorf("warmstat %s --help shows an example with a flag it does not have (--%s): %s", c.Name, name, ex)
				}
			}
			if !strings.Contains(text, ex) {
				t.Errorf("%s does not show the example warmstat %s --help prints: %s", page, c.Name, ex)
			}
		}
	}
	pages, err := filepath.Glob(filepath.Join(docs, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fillFlagBlocks(string(b), app)
		if err != nil {
			t.Errorf("%s: %v", page, err)
			continue
		}
		if *update {
			if got != string(b) {
				if err := os.WriteFile(page, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		if got != string(b) {
			t.Errorf("%s: its flag section is stale: make docs rewrites it from the commands' definitions", page)
		}
	}
}

// subcommandOf is c's subcommand named by the first of args (warmstat history publish
// ...), else c itself.
func subcommandOf(c *cli.Command, args []string) *cli.Command {
	if len(args) > 0 {
		for _, sub := range c.Commands {
			if sub.Name == args[0] {
				return sub
			}
		}
	}
	return c
}

// helpExamples are the command lines under "Examples:" in a command's description.
func helpExamples(c *cli.Command) []string {
	_, after, ok := strings.Cut(c.Description, "Examples:\n")
	if !ok {
		return nil
	}
	var ex []string
	for _, line := range strings.Split(after, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		// the examples close the description: anything else after them is misplaced
		ex = append(ex, line)
	}
	return ex
}

// Every warmstat command the docs and the README show in a shell block can be typed as
// it stands: its command exists, every flag it names is one the command has, and it
// gives every flag the command requires (a reader who copies a command from a guide
// must not meet "Required flag not set").
func TestShownCommandsAreComplete(t *testing.T) {
	app := newApp(io.Discard, io.Discard)
	commands := map[string]*cli.Command{}
	for _, c := range visibleCommands(app) {
		commands[c.Name] = c
	}
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join("..", "..", "README.md"))
	shown := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range shellCommands(string(b)) {
			fields := strings.Fields(sc.text)
			if len(fields) < 2 {
				continue
			}
			c, ok := commands[fields[1]]
			if !ok {
				t.Errorf("%s:%d: warmstat has no command %q: %s", page, sc.line, fields[1], sc.text)
				continue
			}
			c = subcommandOf(c, fields[2:])
			shown++
			given := map[string]bool{}
			for _, tok := range fields[2:] {
				name, ok := strings.CutPrefix(tok, "--")
				if !ok {
					continue
				}
				name, _, _ = strings.Cut(name, "=")
				given[name] = true
				if !slicesContainsName(c.Flags, name) && name != "help" {
					t.Errorf("%s:%d: warmstat %s has no flag --%s: %s", page, sc.line, c.Name, name, sc.text)
				}
			}
			if given["help"] {
				continue
			}
			for _, f := range c.Flags {
				if r, ok := f.(cli.RequiredFlag); ok && r.IsRequired() && !anyGiven(given, f.Names()) {
					t.Errorf("%s:%d: warmstat %s lacks its required --%s: %s", page, sc.line, c.Name, f.Names()[0], sc.text)
				}
			}
		}
	}
	if shown < 50 {
		t.Fatalf("only %d warmstat commands found in the docs' shell blocks: the scan is broken", shown)
	}
	t.Logf("%d commands checked", shown)
}

// shownCommand is one warmstat command of a shell block, continuation lines joined.
type shownCommand struct {
	line int
	text string
}

// shellCommands are the warmstat commands of a page's shell blocks (```shell, ```sh,
// ```bash), from the word warmstat on, with a line's comment and any pipe cut off.
func shellCommands(page string) []shownCommand {
	var out []shownCommand
	in := false
	lines := strings.Split(page, "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "```") {
			lang := strings.TrimPrefix(l, "```")
			in = !in && (lang == "shell" || lang == "sh" || lang == "bash")
			continue
		}
		if !in {
			continue
		}
		start := i
		for strings.HasSuffix(l, "\\") && i+1 < len(lines) {
			i++
			l = strings.TrimSuffix(l, "\\") + " " + strings.TrimSpace(lines[i])
		}
		l, _, _ = strings.Cut(l, " #")
		for _, part := range regexp.MustCompile(`&&|\|\||[|;]`).Split(l, -1) {
			part = strings.TrimSpace(part)
			if j := strings.Index(part, "warmstat "); j >= 0 && (j == 0 || strings.HasSuffix(part[:j], "/") || strings.HasSuffix(part[:j], " ")) {
				out = append(out, shownCommand{line: start + 1, text: part[j:]})
			}
		}
	}
	return out
}

func slicesContainsName(flags []cli.Flag, name string) bool {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

func anyGiven(given map[string]bool, names []string) bool {
	for _, n := range names {
		if given[n] {
			return true
		}
	}
	return false
}

// sentence ends a command's one-line usage as a sentence where it stands as a
// paragraph of its own (a reader, and sentences.py, take it for one).
func sentence(s string) string {
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "!") {
		return s
	}
	return s + "."
}
