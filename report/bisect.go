package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/warmstat/warmstat/bisect"
)

// The presentation of a bisect's result: its culprits (or why it names none), the
// commits it skipped, every probe, the machine time.

// BisectChange is a series' result in one phrase: "+12.3 % [+4.1, +21.2] slower".
func BisectChange(r bisect.Result) string {
	g := r.Gate
	if g.DeltaPct == nil || g.LowPct == nil || g.HighPct == nil {
		return string(r.Verdict)
	}
	return fmt.Sprintf("%s %% [%s, %s] %s", SignedPct(*g.DeltaPct), SignedPct(*g.LowPct), SignedPct(*g.HighPct), r.Verdict)
}

// BisectSummary is a bisect's outcome in one line, when it names no culprit.
func BisectSummary(o *bisect.Outcome, subject map[string]bisect.Commit) string {
	switch o.Kind {
	case bisect.NoRegression:
		return "no regression confirmed: " + o.Detail + " (" + BisectChange(o.Confirm) + "): nothing bisected"
	case bisect.Undecidable:
		return fmt.Sprintf("undecidable at this noise between %s and %s: %s", subject[o.Open[0]].Short(), subject[o.Open[1]].Short(), o.Detail)
	case bisect.Unbuildable:
		var r []string
		for _, c := range o.Culprits[0].Range {
			r = append(r, subject[c].Short())
		}
		return "the slowdown is in one of " + strings.Join(r, ", ") + ", which could not all be measured"
	}
	return o.Kind
}

// BisectResult is the result for people (text) or for a pull request (md): the
// culprits, every probe, the machine time.
func BisectResult(w io.Writer, st *bisect.State, o *bisect.Outcome, subject map[string]bisect.Commit, md bool, alpha float64) {
	name := func(h string) string {
		c := subject[h]
		return fmt.Sprintf("%s %q (%s, %s)", c.Short(), c.Subject, c.Author, c.Date)
	}
	head := func(s string) {
		if md {
			fmt.Fprintf(w, "\n### %s\n\n", s)
		} else {
			fmt.Fprintf(w, "\n%s\n", s)
		}
	}
	head(fmt.Sprintf("warmstat bisect %s..%s (%s), gate %s", st.Good.Short(), st.Commits[len(st.Commits)-1].Short(), Plural(len(st.Commits), "commit"), st.Plan.Gate))
	if o.Kind == bisect.Found {
		for i, c := range o.Culprits {
			line := fmt.Sprintf("culprit %d of %d: %s: %s against %s", i+1, len(o.Culprits), name(c.Commit), BisectChange(c.Change), subject[c.Reference].Short())
			if before := unmeasuredBefore(c, subject); before != "" {
				line += " (or " + before + ", which could not be measured)"
			}
			if md {
				line = "- **" + line + "**"
			}
			fmt.Fprintln(w, line)
		}
	} else {
		fmt.Fprintln(w, BisectSummary(o, subject))
	}
	if o.Detail != "" && o.Kind == bisect.Found {
		fmt.Fprintln(w, "note: "+o.Detail)
	}
	for _, k := range o.Skipped {
		fmt.Fprintf(w, "skipped %s: %s\n", subject[k.Commit].Short(), k.Reason)
	}
	head("probes")
	rows := [][]string{}
	var probing, builds time.Duration
	for _, p := range st.Probes {
		rows = append(rows, []string{subject[p.B].Short(), subject[p.A].Short(), fmt.Sprint(p.Runs), BisectChange(p.Result),
			buildTime(st, p.B), time.Duration(p.MachineNs).Round(time.Second).String(), p.Series})
		probing += time.Duration(p.MachineNs)
	}
	for _, b := range st.Builds {
		builds += time.Duration(b.TookNs)
	}
	hdr := []string{"commit", "against", "runs/side", "change [interval], verdict", "build", "series time", "series"}
	f := Text
	if md {
		f = Markdown
	}
	Table(w, f, 2, hdr, rows)
	fmt.Fprintf(w, "intervals: each series' last look, at %g %% or more (a series spreads its false-verdict budget over its looks)\n", 100-alpha)
	fmt.Fprintf(w, "machine time: %s in %d series, the builds they waited for included (%d commits built, %s when they were built)\n",
		probing.Round(time.Second), len(st.Probes), len(st.Builds), builds.Round(time.Second))
}

// unmeasuredBefore names the commits of c's range other than c itself: the skipped
// ones just before it, any of which may be the part's culprit instead ("" if none).
func unmeasuredBefore(c bisect.Culprit, subject map[string]bisect.Commit) string {
	var others []string
	for _, h := range c.Range {
		if h != c.Commit {
			others = append(others, subject[h].Short())
		}
	}
	switch len(others) {
	case 0:
		return ""
	case 1:
		return others[0]
	}
	return "one of " + strings.Join(others, ", ")
}

func buildTime(st *bisect.State, commit string) string {
	b, ok := st.Builds[commit]
	if !ok {
		return "-"
	}
	return time.Duration(b.TookNs).Round(time.Second).String()
}
