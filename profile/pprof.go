package profile

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/warmstat/warmstat/runfmt"
)

// kind is what a mode's samples measure and how the converter selects them.
type kind struct {
	flag     string // the converter's event selection
	weighted bool   // each sample carries a weight (bytes, ns), not one interval
	value    string // pprof sample type of the value
	unit     string // its unit: "nanoseconds" or "bytes"
	describe string
}

func (r *Recorder) kind() kind { return kindOf(r.o.Mode) }

func kindOf(mode string) kind {
	switch mode {
	case "alloc":
		return kind{"--alloc", true, "alloc_space", "bytes", "bytes allocated"}
	case "lock":
		return kind{"--lock", true, "delay", "nanoseconds", "time waiting for locks"}
	case "wall":
		return kind{"--wall", false, "wall", "nanoseconds", "wall-clock samples"}
	case "jfr": // the converter's --cpu finds none of the JDK's own execution samples; its default takes them
		return kind{"", false, "cpu", "nanoseconds", "execution samples"}
	}
	return kind{"--cpu", false, "cpu", "nanoseconds", "CPU samples"}
}

// annotation is the frame-type suffix the converter appends (_[j] compiled, _[i]
// inlined, _[0] interpreted, _[1] C1, _[k] kernel): one method is one function, however
// it was compiled, so builds compare by method.
var annotation = regexp.MustCompile(`_\[[a-z0-9]\]$`)

// frameName is a folded frame's function name and whether it is a kernel frame.
func frameName(f string) (string, bool) {
	kernel := strings.HasSuffix(f, "_[k]")
	return normalizeName(annotation.ReplaceAllString(f, "")), kernel
}

// generated are the parts of generated names that differ from JVM to JVM (lambda and
// proxy numbers, hidden-class addresses) or from build to build (javac's lambda$m$N
// numbers shift when a class gains or loses a lambda): without them the same code has
// the same name in every run, so two builds' profiles line up. Two lambdas of one
// method become one frame, which a build-to-build diff can afford; a renamed frame
// reads as one vanishing and another appearing, which it cannot.
var generated = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\$\$Lambda\$?[0-9]*(/0x[0-9a-f]+)?`), "$$$$Lambda"},
	{regexp.MustCompile(`(GeneratedMethodAccessor|GeneratedConstructorAccessor|\$Proxy)[0-9]+`), "$1"},
	{regexp.MustCompile(`/0x[0-9a-f]+`), ""},
	{regexp.MustCompile(`(lambda\$[A-Za-z0-9_<>]+)\$[0-9]+`), "$1"},
}

func normalizeName(n string) string {
	if !strings.ContainsAny(n, "$/") && !strings.Contains(n, "Generated") {
		return n
	}
	for _, g := range generated {
		n = g.re.ReplaceAllString(n, g.with)
	}
	return n
}

// readCollapsed reads folded stacks ("root;...;leaf N" per line) into stack -> N.
// Errors name the file and line.
func readCollapsed(path string) (map[string]int64, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	out := map[string]int64{}
	var order []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if text == "" {
			continue
		}
		i := strings.LastIndexByte(text, ' ')
		if i <= 0 {
			return nil, nil, fmt.Errorf("%s:%d: not a folded stack (\"frame;frame N\")", path, line)
		}
		n, err := strconv.ParseInt(text[i+1:], 10, 64)
		if err != nil || n < 0 {
			return nil, nil, fmt.Errorf("%s:%d: field count: %q is not a non-negative integer", path, line, text[i+1:])
		}
		stack := text[:i]
		if _, ok := out[stack]; !ok {
			order = append(order, stack)
		}
		if out[stack] > math.MaxInt64-n {
			return nil, nil, fmt.Errorf("%s:%d: field count: the stack's total overflows", path, line)
		}
		out[stack] += n
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, order, nil
}

// buildPprof makes a pprof profile from folded stacks: sample counts from counts, and
// values (weights) from values for a weighted kind, or counts x interval otherwise.
func buildPprof(values, counts string, k kind, interval int64, phase string) (*profile.Profile, int64, int64, error) {
	n, order, err := readCollapsed(counts)
	if err != nil {
		return nil, 0, 0, err
	}
	v := n
	if values != counts {
		if v, _, err = readCollapsed(values); err != nil {
			return nil, 0, 0, err
		}
	}
	periodType := &profile.ValueType{Type: k.value, Unit: k.unit}
	if k.weighted && k.unit == "bytes" {
		periodType = &profile.ValueType{Type: "space", Unit: "bytes"}
	}
	p := &profile.Profile{
		SampleType:        []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: k.value, Unit: k.unit}},
		DefaultSampleType: k.value,
		PeriodType:        periodType,
		Period:            interval,
		Comments:          []string{"warmstat writer profile", "phase: " + phase, "samples: " + k.describe},
	}
	funcs := map[string]*profile.Location{}
	var samples, total int64
	for _, stack := range order {
		c := n[stack]
		if !k.weighted && c > math.MaxInt64/interval {
			return nil, 0, 0, fmt.Errorf("%s: %d samples of %d ns overflow a profile value", counts, c, interval)
		}
		val := c * interval
		if k.weighted {
			val = v[stack]
		}
		if samples > math.MaxInt64-c || total > math.MaxInt64-val {
			return nil, 0, 0, fmt.Errorf("%s: the profile's total overflows", counts)
		}
		frames := strings.Split(stack, ";")
		s := &profile.Sample{Value: []int64{c, val}}
		for i := len(frames) - 1; i >= 0; i-- { // pprof lists the leaf first
			s.Location = append(s.Location, location(p, funcs, frames[i]))
		}
		p.Sample = append(p.Sample, s)
		samples += c
		total += val
	}
	if err := p.CheckValid(); err != nil {
		return nil, 0, 0, err
	}
	return p, samples, total, nil
}

func location(p *profile.Profile, seen map[string]*profile.Location, frame string) *profile.Location {
	name, kernel := frameName(frame)
	if l, ok := seen[name]; ok {
		return l
	}
	fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
	if kernel {
		fn.Filename = "[kernel]"
	}
	p.Function = append(p.Function, fn)
	l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn}}}
	p.Location = append(p.Location, l)
	seen[name] = l
	return l
}

// writePprof writes p gzipped, atomically.
func writePprof(path string, p *profile.Profile) error {
	return runfmt.WriteFileAtomic(path, p.Write)
}
