package analyze

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/warmstat/warmstat/runfmt"
)

// TransportCost is what the transport costs per upsert: a remote group against an
// embedded group of the same build, conditions and workload, differing only in the
// target mode. It is a measurement of gRPC, not a verdict on a build.
type TransportCost struct {
	Remote, Embedded *Group
	Level            float64 // of the intervals (0.95)
	Rows             []TransportRow
	Dominant         string
}

// TransportRow is one collection's cost: remote − embedded mean upsert.
type TransportRow struct {
	Collection   string   `json:"collection"`
	RemoteUs     *float64 `json:"remote_mean_us"` // arithmetic mean across runs of each run's mean upsert
	EmbeddedUs   *float64 `json:"embedded_mean_us"`
	CostUs       *float64 `json:"cost_us"` // remote − embedded per upsert
	CostLowUs    *float64 `json:"cost_ci_low_us"`
	CostHighUs   *float64 `json:"cost_ci_high_us"`
	SharePct     *float64 `json:"share_of_remote_pct"` // (remote − embedded) / remote
	ShareLowPct  *float64 `json:"share_ci_low_pct"`
	ShareHighPct *float64 `json:"share_ci_high_pct"`
	RunsRemote   int      `json:"runs_remote"`
	RunsEmbedded int      `json:"runs_embedded"`
	Reason       string   `json:"reason,omitempty"` // why there is no interval
}

// TargetModes returns each group's target mode when both groups are uniform in it and
// the modes differ, ok false otherwise. With one build label on both sides that is a
// transport measurement (Transport), not a comparison of builds.
func TargetModes(a, b *Group) (string, string, bool) {
	f := contractByName("target-mode")
	sa, sb := settings(values(a, f)), settings(values(b, f))
	if len(sa) != 1 || len(sb) != 1 || sa[0].Value == sb[0].Value {
		return "", "", false
	}
	return sa[0].Value, sb[0].Value, true
}

// transportBuild are the fields that must be equal between the groups although
// compare lets them differ: the transport is measured on one build.
var transportBuild = []string{"server-version", "server-build"}

// Transport measures the transport's cost between two groups that differ only in
// their target mode (either order). Any other difference of the comparability
// contract — the build included, by what its jars say — is a *Refusal.
func Transport(a, b *Group, o CompareOptions) (*TransportCost, error) {
	ma, mb, ok := TargetModes(a, b)
	if !ok {
		return nil, fmt.Errorf("a transport measurement needs a remote group and an embedded one")
	}
	remote, emb := a, b
	if ma == runfmt.TargetEmbedded && mb == runfmt.TargetRemote {
		remote, emb = b, a
	} else if ma != runfmt.TargetRemote || mb != runfmt.TargetEmbedded {
		return nil, fmt.Errorf("a transport measurement needs a remote group and an embedded one (got %s and %s)", ma, mb)
	}
	ref := &Refusal{Duplicates: duplicates(a, b)}
	for _, m := range checkContract(a, b) {
		if m.Field == "target-mode" && m.Within == "" {
			continue // the treatment here
		}
		ref.Mismatches = append(ref.Mismatches, m)
	}
	for _, name := range append([]string{"build"}, transportBuild...) {
		f := contractByName(name)
		sa, sb := settings(values(a, f)), settings(values(b, f))
		if len(sa) == 1 && len(sb) == 1 && sa[0].Value != sb[0].Value {
			ref.Mismatches = append(ref.Mismatches, Mismatch{Field: name, A: sa, B: sb,
				Detail: "the transport's cost is remote − embedded on one build; a different build would be in it"})
		}
	}
	if len(ref.Mismatches) > 0 || len(ref.Duplicates) > 0 {
		return nil, ref
	}
	rr, err := collect(remote.Runs, o.Quantiles, false)
	if err != nil {
		return nil, err
	}
	re, err := collect(emb.Runs, o.Quantiles, false)
	if err != nil {
		return nil, err
	}
	level := cmp.Or(o.Level, 0.95)
	t := &TransportCost{Remote: remote, Embedded: emb, Level: level}
	var cols []string
	cols, t.Dominant, _ = collectionOrder(remote, emb)
	for _, coll := range cols {
		t.Rows = append(t.Rows, transportRow(coll, gather(remote.Name, summaries(rr), coll, metricMean),
			gather(emb.Name, summaries(re), coll, metricMean), level))
	}
	return t, nil
}

func contractByName(name string) contractField {
	i := slices.IndexFunc(contract, func(f contractField) bool { return f.name == name })
	return contract[i]
}

// transportRow: the cost is remote − embedded of the runs' arithmetic mean upserts
// (a Welch interval: an absolute difference); its share is that cost over the remote
// mean, with a delta-method interval of the ratio embedded/remote on the same degrees
// of freedom, so that the two columns tell one story.
func transportRow(coll string, r, e side, level float64) TransportRow {
	row := TransportRow{Collection: coll, RunsRemote: r.n(), RunsEmbedded: e.n()}
	if r.n() == 0 || e.n() == 0 {
		row.Reason = "no figure on one side"
		return row
	}
	us := func(s side) []float64 {
		v := make([]float64, len(s.y))
		for i, y := range s.y {
			v[i] = math.Exp(y) / 1e3 // ns -> µs
		}
		return v
	}
	ru, eu := us(r), us(e)
	rm, em := mean(ru), mean(eu)
	cost, share := rm-em, 100*(rm-em)/rm
	row.RemoteUs, row.EmbeddedUs, row.CostUs, row.SharePct = &rm, &em, &cost, &share
	if r.n() < 2 || e.n() < 2 {
		row.Reason = fmt.Sprintf("%d remote run(s), %d embedded: an interval needs at least 2 per side", r.n(), e.n())
		return row
	}
	qr, qe := variance(ru)/float64(len(ru)), variance(eu)/float64(len(eu))
	if qr+qe == 0 {
		row.Reason = noSpread
		return row
	}
	df := (qr + qe) * (qr + qe) / (qr*qr/float64(len(ru)-1) + qe*qe/float64(len(eu)-1))
	df = math.Max(df, float64(min(len(ru), len(eu))-1))
	t := tq(df, level)
	h := t * math.Sqrt(qr+qe)
	lo, hi := cost-h, cost+h
	row.CostLowUs, row.CostHighUs = &lo, &hi
	ratio := em / rm
	hr := t * ratio * math.Sqrt(qe/(em*em)+qr/(rm*rm))
	slo, shi := 100*(1-ratio-hr), 100*(1-ratio+hr)
	row.ShareLowPct, row.ShareHighPct = &slo, &shi
	return row
}

// Dominated reports whether the transport is at least pct % of the remote figure:
// proven by the interval's low end when there is one, else by the point estimate.
func (r TransportRow) Dominated(pct float64) bool {
	if r.ShareLowPct != nil {
		return *r.ShareLowPct >= pct
	}
	return r.SharePct != nil && *r.SharePct >= pct
}
