package profile

import (
	"bufio"
	"embed"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/warmstat/warmstat/runfmt"
)

// A reference profile is where a writer's samples go in a profile taken elsewhere —
// production's, as evitaDB published it — as a few frame groups and their shares, each
// with its source. The file is small, versioned and strictly parsed, one line a fact:
//
//	# a comment; blank lines are ignored
//	warmstat-fidelity-reference 1
//	name production-2026.2.2
//	about evitaDB 2026.2.2, WARM_UP load of the production export (386,369 entities)
//	entry ID EVENT MEASURE SHARE CLASS FRAMES | SOURCE
//
// EVENT is cpu or alloc (the profile mode whose samples the share is of), MEASURE is
// self (samples whose leaf frame is one of FRAMES) or total (samples with any of FRAMES
// anywhere on the stack, once per sample), SHARE a percentage in (0, 100], CLASS main or
// minor (a main entry is one the workload is held to), FRAMES comma-separated frame
// patterns, SOURCE where the figure comes from (never empty). A pattern matches a frame
// name or any of its tails that begins after a '.', and '*' in it matches any run of
// characters: so `EntitySchema.getReference` matches `io.evitadb.….EntitySchema.getReference`,
// `ObjectIntHashMap$*` every method of ObjectIntHashMap's inner classes, and `*libz.so*`
// a native library's unsymbolised frame.

// ReferenceFormat is the version of the reference file this build reads.
const ReferenceFormat = 1

const referenceMagic = "warmstat-fidelity-reference"

// Measures of a reference entry.
const (
	MeasureSelf  = "self"
	MeasureTotal = "total"
)

// Reference is a parsed reference profile.
type Reference struct {
	Path    string     `json:"path"`
	Name    string     `json:"name"`
	About   string     `json:"about"`
	Entries []RefEntry `json:"entries"`
}

// RefEntry is one frame group's share in the reference.
type RefEntry struct {
	ID      string   `json:"id"`
	Event   string   `json:"event"`   // cpu | alloc
	Measure string   `json:"measure"` // self | total
	Share   float64  `json:"share_pct"`
	Main    bool     `json:"main"`
	Frames  []string `json:"frames"`
	Source  string   `json:"source"`
	Line    int      `json:"-"`
}

//go:embed references/*.ref
var builtinReferences embed.FS

// DefaultReference is the built-in reference a fidelity report uses unless told otherwise.
const DefaultReference = "production-2026.2.2"

// BuiltinReferences are the names of the references that ship with warmstat.
func BuiltinReferences() []string {
	es, _ := builtinReferences.ReadDir("references")
	var out []string
	for _, e := range es {
		out = append(out, strings.TrimSuffix(e.Name(), ".ref"))
	}
	return out
}

// LoadReference reads a reference: a built-in one by name, else the file at spec.
func LoadReference(spec string) (*Reference, error) {
	if slices.Contains(BuiltinReferences(), spec) {
		f, err := builtinReferences.Open("references/" + spec + ".ref")
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return ParseReference(f, "built-in:"+spec)
	}
	f, err := os.Open(spec)
	if err != nil {
		return nil, fmt.Errorf("reference %s: neither a built-in reference (%s) nor a readable file: %v", spec, strings.Join(BuiltinReferences(), ", "), err)
	}
	defer f.Close()
	return ParseReference(f, spec)
}

// ParseReference reads a reference file; every error names the file, line and field.
func ParseReference(r io.Reader, file string) (*Reference, error) {
	ref := &Reference{Path: file}
	perr := func(line int, field, format string, args ...any) error {
		return &runfmt.ParseError{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	sc := bufio.NewScanner(r)
	header := false
	ids := map[string]int{}
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 {
			text = strings.TrimPrefix(text, "\ufeff") // an editor's byte-order mark
		}
		text = strings.TrimSpace(text)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		key, rest, _ := strings.Cut(text, " ")
		rest = strings.TrimSpace(rest)
		if !header {
			if key != referenceMagic {
				return nil, perr(line, "format", "not a fidelity reference: the first line must be %q", fmt.Sprintf("%s %d", referenceMagic, ReferenceFormat))
			}
			v, err := strconv.Atoi(rest)
			switch {
			case err != nil || v < 1:
				return nil, perr(line, "format", "version %q is not a positive integer", rest)
			case v > ReferenceFormat:
				return nil, perr(line, "format", "version %d is newer than this warmstat reads (%d): use a newer warmstat", v, ReferenceFormat)
			}
			header = true
			continue
		}
		switch key {
		case "name", "about":
			if rest == "" {
				return nil, perr(line, key, "empty")
			}
			if (key == "name" && ref.Name != "") || (key == "about" && ref.About != "") {
				return nil, perr(line, key, "given twice")
			}
			if key == "name" {
				ref.Name = rest
			} else {
				ref.About = rest
			}
		case "entry":
			e, err := parseEntry(rest, line, perr)
			if err != nil {
				return nil, err
			}
			if first, ok := ids[e.ID]; ok {
				return nil, perr(line, "id", "%q already defined on line %d", e.ID, first)
			}
			ids[e.ID] = line
			ref.Entries = append(ref.Entries, e)
		default:
			return nil, perr(line, "key", "unknown key %q (name, about, entry)", key)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, perr(line, "", "%v", err)
	}
	switch {
	case !header:
		return nil, perr(0, "format", "empty: no %q line", referenceMagic)
	case ref.Name == "":
		return nil, perr(0, "name", "missing")
	case len(ref.Entries) == 0:
		return nil, perr(0, "entry", "no entries")
	}
	// shares of one event and measure partition (self) or may overlap (total), but a
	// self group can never exceed 100 % of its event's samples
	for _, ev := range []string{"cpu", "alloc"} {
		sum := 0.0
		for _, e := range ref.Entries {
			if e.Event == ev && e.Measure == MeasureSelf {
				sum += e.Share
			}
		}
		if sum > 100.0001 {
			return nil, perr(0, "share", "the %s self entries add up to %.2f %%, more than all samples", ev, sum)
		}
	}
	return ref, nil
}

func parseEntry(rest string, line int, perr func(int, string, string, ...any) error) (RefEntry, error) {
	e := RefEntry{Line: line}
	body, source, ok := strings.Cut(rest, "|")
	e.Source = strings.TrimSpace(source)
	if !ok || e.Source == "" {
		return e, perr(line, "source", "missing: an entry ends with '| where the figure comes from'")
	}
	f := strings.Fields(body)
	names := []string{"id", "event", "measure", "share", "class", "frames"}
	if len(f) != len(names) {
		field := "frames"
		if len(f) < len(names) {
			field = names[len(f)]
		}
		return e, perr(line, field, "an entry is 'entry ID EVENT MEASURE SHARE CLASS FRAMES | SOURCE' (%d fields before '|', want %d)", len(f), len(names))
	}
	e.ID = f[0]
	if e.Event = f[1]; e.Event != "cpu" && e.Event != "alloc" {
		return e, perr(line, "event", "%q: cpu or alloc", e.Event)
	}
	if e.Measure = f[2]; e.Measure != MeasureSelf && e.Measure != MeasureTotal {
		return e, perr(line, "measure", "%q: self or total", e.Measure)
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(f[3], "%"), 64)
	if err != nil || !(v > 0 && v <= 100) {
		return e, perr(line, "share", "%q: a percentage in (0, 100]", f[3])
	}
	e.Share = v
	switch f[4] {
	case "main":
		e.Main = true
	case "minor":
	default:
		return e, perr(line, "class", "%q: main or minor", f[4])
	}
	for _, p := range strings.Split(f[5], ",") {
		if strings.Trim(p, "*") == "" {
			return e, perr(line, "frames", "a pattern that names no frame in %q", f[5])
		}
		e.Frames = append(e.Frames, p)
	}
	return e, nil
}

// matches says whether a frame name matches one of the patterns: the whole name or a
// tail of it beginning after a '.'.
func matches(patterns []string, name string) bool {
	for _, p := range patterns {
		for tail := name; ; {
			if glob(p, tail) {
				return true
			}
			i := strings.IndexByte(tail, '.')
			if i < 0 {
				break
			}
			tail = tail[i+1:]
		}
	}
	return false
}

// glob matches s against p, where '*' stands for any run of characters.
func glob(p, s string) bool {
	head, rest, star := strings.Cut(p, "*")
	if !star {
		return p == s
	}
	if !strings.HasPrefix(s, head) {
		return false
	}
	s = s[len(head):]
	for i := 0; i <= len(s); i++ {
		if glob(rest, s[i:]) {
			return true
		}
	}
	return false
}
