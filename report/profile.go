package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/warmstat/warmstat/profile"
)

// ProfileTopDoc is the JSON document of `warmstat profile RUN`.
type ProfileTopDoc struct {
	Schema string `json:"schema"`
	*profile.Top
}

// ProfileDiffDoc is the JSON document of `warmstat profile --diff A B`.
type ProfileDiffDoc struct {
	Schema string `json:"schema"`
	*profile.Diff
}

// phaseTitle names a profiled phase for people.
func phaseTitle(p string) string {
	if p == "golive" {
		return "goLive"
	}
	return p
}

// amount prints a profile value in its unit: seconds or ms for time, MiB for bytes.
func amount(v float64, unit string) string {
	neg := ""
	if v < 0 {
		neg, v = "-", -v
	}
	switch unit {
	case "nanoseconds":
		switch {
		case v >= 1e9:
			return fmt.Sprintf("%s%.2f s", neg, v/1e9)
		case v >= 1e6:
			return fmt.Sprintf("%s%.1f ms", neg, v/1e6)
		}
		return fmt.Sprintf("%s%.1f µs", neg, v/1e3)
	case "bytes":
		switch {
		case v >= 1<<30:
			return fmt.Sprintf("%s%.2f GiB", neg, v/(1<<30))
		case v >= 1<<20:
			return fmt.Sprintf("%s%.1f MiB", neg, v/(1<<20))
		case v >= 1<<10:
			return fmt.Sprintf("%s%.1f KiB", neg, v/(1<<10))
		}
		return fmt.Sprintf("%s%.0f B", neg, v)
	}
	return fmt.Sprintf("%s%.0f %s", neg, v, unit)
}

func signed(v float64, unit string) string {
	if v > 0 {
		return "+" + amount(v, unit)
	}
	return amount(v, unit)
}

// WriteProfileTop presents a run's hottest frames by phase.
func WriteProfileTop(w io.Writer, t *profile.Top, f Format) error {
	if f == JSON {
		return WriteJSON(w, ProfileTopDoc{Schema: "warmstat.profile/v1", Top: t})
	}
	md := f == Markdown
	heading(w, md, fmt.Sprintf("writer profile of %s (build %s): %s", t.Run, t.Build, t.Profile))
	if t.Error != "" {
		fmt.Fprintf(w, "!! INCOMPLETE PROFILE: %s\n\n", t.Error)
	}
	for _, ph := range t.Phases {
		fmt.Fprintf(w, "%s: %s %s in %s samples\n\n", phaseTitle(ph.Phase), amount(float64(ph.Total), ph.Unit), ph.Value, group(fmt.Sprint(ph.Samples)))
		for _, by := range []struct {
			name   string
			frames []profile.Frame
		}{{"self", ph.BySelf}, {"total", ph.ByTotal}} {
			rows := [][]string{}
			for _, fr := range by.frames {
				rows = append(rows, []string{fmt.Sprintf("%.1f %%", fr.SelfPct), amount(float64(fr.Self), ph.Unit),
					fmt.Sprintf("%.1f %%", fr.TotalPct), amount(float64(fr.Total), ph.Unit), frameCell(fr.Name, md)})
			}
			fmt.Fprintf(w, "hottest by %s:\n", by.name)
			writeTable(w, md, []string{"self %", "self", "total %", "total", "frame"}, rows)
			fmt.Fprintln(w)
		}
	}
	return nil
}

// WriteProfileDiff presents the frames that grew or shrank between two builds.
func WriteProfileDiff(w io.Writer, d *profile.Diff, f Format) error {
	if f == JSON {
		return WriteJSON(w, ProfileDiffDoc{Schema: "warmstat.profile-diff/v1", Diff: d})
	}
	md := f == Markdown
	runs := nRuns
	heading(w, md, fmt.Sprintf("writer profile diff: A = %s (%s, %s upserts), B = %s (%s, %s upserts)",
		d.A.Build, runs(len(d.A.Runs)), group(fmt.Sprint(d.A.Entities)), d.B.Build, runs(len(d.B.Runs)), group(fmt.Sprint(d.B.Entities))))
	fmt.Fprintf(w, "profile: %s; values per upsert\n\n", d.Profile)
	for _, ph := range d.Phases {
		change := "n/a"
		if ph.DeltaPct != nil {
			change = fmt.Sprintf("%+.1f %%", *ph.DeltaPct)
		}
		fmt.Fprintf(w, "%s: %s per upsert: A %s, B %s, change %s (%s)\n\n", phaseTitle(ph.Phase), ph.Value,
			amount(ph.A, ph.Unit), amount(ph.B, ph.Unit), signed(ph.Delta, ph.Unit), change)
		for _, by := range []struct {
			name string
			rows []profile.DiffRow
		}{{"self (adds up to the change)", ph.BySelf}, {"total (callers include their callees)", ph.ByTotal}} {
			rows := [][]string{}
			for _, r := range by.rows {
				share := "—"
				if r.SharePct != nil {
					share = fmt.Sprintf("%+.1f %%", *r.SharePct)
				}
				rows = append(rows, []string{amount(r.A, ph.Unit), amount(r.B, ph.Unit), signed(r.Delta, ph.Unit), share, frameCell(r.Name, md)})
			}
			fmt.Fprintf(w, "largest changes by %s:\n", by.name)
			writeTable(w, md, []string{"A", "B", "change", "share of change", "frame"}, rows)
			fmt.Fprintln(w)
		}
	}
	return nil
}

func heading(w io.Writer, md bool, s string) {
	if md {
		fmt.Fprintf(w, "### %s\n\n", s)
		return
	}
	fmt.Fprintf(w, "%s\n\n", s)
}

func frameCell(name string, md bool) string {
	if md {
		return "`" + strings.ReplaceAll(name, "`", "'") + "`"
	}
	return name
}

// writeTable writes rows as an aligned text table, or a markdown table.
func writeTable(w io.Writer, md bool, header []string, rows [][]string) {
	if md {
		fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(header, " | "), strings.Repeat("---|", len(header)))
		for _, r := range rows {
			fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
		}
		return
	}
	width := make([]int, len(header))
	for _, r := range append([][]string{header}, rows...) {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	for _, r := range append([][]string{header}, rows...) {
		var b strings.Builder
		for i, c := range r {
			if i == len(r)-1 {
				b.WriteString(c)
				break
			}
			b.WriteString(strings.Repeat(" ", width[i]-len([]rune(c))) + c + "  ")
		}
		fmt.Fprintln(w, "  "+b.String())
	}
}
