// Package report presents analyze results (and profile's, for writer profiles): aligned
// text for people, JSON and CSV for automation, markdown for docs and PRs, and plots. It computes no statistic: every
// figure it shows comes from analyze; it only formats, orders and labels them.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/warmstat/warmstat/base/numfmt"
)

// Format is an output format.
type Format string

const (
	Text     Format = "text"
	JSON     Format = "json"
	Markdown Format = "md"
)

// ParseFormat validates a --format value against the formats a command offers.
func ParseFormat(s string, allowed ...Format) (Format, error) {
	for _, f := range allowed {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, len(allowed))
	for i, f := range allowed {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown format %q (use %s)", s, strings.Join(names, ", "))
}

// WriteJSON writes v as indented JSON, the form of every --format json output.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// group inserts thousands separators into a non-negative integer string.
func group(digits string) string { return numfmt.Group(digits) }

// Int formats an integer with grouping: 386,369.
func Int(v int64) string {
	if v < 0 {
		return "-" + group(strconv.FormatInt(-v, 10))
	}
	return group(strconv.FormatInt(v, 10))
}

// Fixed formats v with d decimals (half away from zero on the decimal value) and
// grouping: 1,158.1.
func Fixed(v float64, d int) string {
	s := strconv.FormatFloat(v, 'f', d, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	out := group(whole)
	if frac != "" {
		out += "." + frac
	}
	if neg && strings.Trim(out, "0.,") != "" {
		out = "-" + out
	}
	return out
}

// Seconds formats nanoseconds as seconds with one decimal, rounded the way the Java
// harness rounds (half up on the exact decimal), so imported runs print the same
// figure the harness did: 1,158.1 s.
func Seconds(ns int64) string { return tenthsString(javaTenths(ns, 1e9)) + " s" }

// Micros formats nanoseconds as microseconds with one decimal (Java rounding).
func Micros(ns float64) string { return tenthsString(javaTenths(int64(ns), 1000)) }

func javaTenths(v, unit int64) int64 {
	step := unit / 10
	if v < 0 {
		return -((-v + step/2) / step)
	}
	return (v + step/2) / step
}

func tenthsString(t int64) string {
	sign := ""
	if t < 0 {
		sign, t = "-", -t
	}
	return sign + group(strconv.FormatInt(t/10, 10)) + "." + strconv.FormatInt(t%10, 10)
}

// MDEscape makes a cell safe inside a markdown table.
func MDEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// Table renders rows under header as an aligned text table or a markdown table.
// The first `left` columns (names) are left-aligned, the rest (numbers) right-aligned.
func Table(w io.Writer, f Format, left int, header []string, rows [][]string) error {
	align := make(tw.Alignment, len(header))
	for i := range align {
		align[i] = tw.AlignRight
		if i < left {
			align[i] = tw.AlignLeft
		}
	}
	opts := []tablewriter.Option{tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithAlignment(align),
		tablewriter.WithRowAutoWrap(tw.WrapNone), tablewriter.WithHeaderAutoWrap(tw.WrapNone)}
	if f == Markdown {
		esc := func(in []string) []string {
			out := make([]string, len(in))
			for i, s := range in {
				out[i] = MDEscape(s)
			}
			return out
		}
		header = esc(header)
		r2 := make([][]string, len(rows))
		for i, r := range rows {
			r2[i] = esc(r)
		}
		rows = r2
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	} else {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders:  tw.BorderNone,
			Symbols:  tw.NewSymbols(tw.StyleASCII),
			Settings: tw.Settings{Separators: tw.Separators{BetweenColumns: tw.Off, BetweenRows: tw.Off}, Lines: tw.Lines{ShowHeaderLine: tw.On}},
		})))
	}
	t := tablewriter.NewTable(w, opts...)
	t.Header(header)
	if err := t.Bulk(rows); err != nil {
		return err
	}
	return t.Render()
}

// Plural is n with its noun, in the plural unless n is 1: "1 run", "3 runs".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
