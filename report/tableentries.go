package report

import "github.com/warmstat/warmstat/analyze"

// TableEntries are a table's entries for groups, each named by the label beside it
// (what the user gave): with perGroup an entry per group, its time cells estimates
// across its runs; else an entry per run, and after each group's runs what its
// directory held that is no run, listed under the table on no run's row.
func TableEntries(labels []string, groups []*analyze.Group, q analyze.Quantiles, perGroup bool) ([]TableEntry, error) {
	var entries []TableEntry
	for i, label := range labels {
		g := groups[i]
		var runs []*analyze.RunSummary
		for _, run := range g.Runs {
			s, err := analyze.Summarize(run, q)
			if err != nil {
				return nil, err
			}
			runs = append(runs, s)
		}
		if perGroup {
			entries = append(entries, TableEntry{Label: label, Runs: runs, Group: true, Excluded: g.Excluded})
			continue
		}
		for _, r := range runs {
			entries = append(entries, TableEntry{Label: r.Run.Dir, Runs: []*analyze.RunSummary{r}})
		}
		entries = append(entries, TableEntry{Label: label, Excluded: g.Excluded})
	}
	return entries, nil
}
