package report

import (
	"fmt"
	"io"

	"github.com/warmstat/warmstat/analyze"
)

// TransportJSON is the transport's cost as automation reads it.
type TransportJSON struct {
	Kind         string                 `json:"kind"` // "transport-cost"
	Remote       string                 `json:"remote"`
	Embedded     string                 `json:"embedded"`
	Build        string                 `json:"build"`
	RunsRemote   int                    `json:"runs_remote"`
	RunsEmbedded int                    `json:"runs_embedded"`
	Level        float64                `json:"level"`
	Rows         []analyze.TransportRow `json:"rows"`
}

// WriteTransport renders what gRPC costs per collection: remote − embedded per
// upsert, with its interval across runs and its share of the remote figure. It is a
// measurement of the transport, and says so: it is not a verdict on a build.
func WriteTransport(w io.Writer, t *analyze.TransportCost, f Format) error {
	j := TransportJSON{Kind: "transport-cost", Remote: t.Remote.Path, Embedded: t.Embedded.Path, Build: t.Remote.Build,
		RunsRemote: len(t.Remote.Runs), RunsEmbedded: len(t.Embedded.Runs), Level: t.Level, Rows: t.Rows}
	if f == JSON {
		return WriteJSON(w, j)
	}
	md := f == Markdown
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	title := fmt.Sprintf("what the transport costs: remote %s (%s) - embedded %s (%s), build %s",
		t.Remote.Name, nRuns(len(t.Remote.Runs)), t.Embedded.Name, nRuns(len(t.Embedded.Runs)), t.Remote.Build)
	if md {
		p("### warmstat compare: %s\n\n", MDEscape(title))
	} else {
		p("warmstat compare: %s\n", title)
	}
	p("The groups differ only in the target mode: remote - embedded per upsert is gRPC's cost (serialization, the\n"+
		"loopback round trip, the server's deframing and dispatch), not a verdict on a build. Interval: %.0f %% Welch t\n"+
		"across runs (each run's mean upsert); share = (remote - embedded) / remote.\n\n", 100*t.Level)
	header := []string{"collection", "remote µs", "embedded µs", "transport µs", fmt.Sprintf("%.0f %% interval", 100*t.Level), "share of remote", "share interval"}
	var rows [][]string
	reasons := map[string]bool{}
	for _, r := range t.Rows {
		us := func(v *float64) string {
			if v == nil {
				return "-"
			}
			return Fixed(*v, 1)
		}
		ci, sci := "-", "-"
		if r.CostLowUs != nil {
			ci = "[" + Fixed(*r.CostLowUs, 1) + ", " + Fixed(*r.CostHighUs, 1) + "]"
			sci = "[" + Fixed(*r.ShareLowPct, 1) + " %, " + Fixed(*r.ShareHighPct, 1) + " %]"
		} else if r.Reason != "" {
			reasons[r.Reason] = true
		}
		share := "-"
		if r.SharePct != nil {
			share = Fixed(*r.SharePct, 1) + " %"
		}
		name := r.Collection
		if r.Dominated(TransportDominatesPct) {
			name += " †"
		}
		rows = append(rows, []string{name, us(r.RemoteUs), us(r.EmbeddedUs), us(r.CostUs), ci, share, sci})
	}
	if err := Table(w, f, 1, header, rows); err != nil {
		return err
	}
	if md {
		p("\n")
	}
	for _, r := range t.Rows { // in row order, each once
		if reasons[r.Reason] {
			p("no interval: %s\n", r.Reason)
			delete(reasons, r.Reason)
		}
	}
	p("† the transport is at least %s %% of the remote figure (the share interval's low end; the estimate where there is no interval):\n"+
		"  that collection's remote latency is mostly gRPC, not the write path.\n", Fixed(TransportDominatesPct, 0))
	return nil
}

// TransportDominatesPct: a collection whose transport share of the remote mean is at
// least this is wire-dominated (report's † with --transport).
const TransportDominatesPct = 50
