package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/warmstat/warmstat/evitaserver"
	"github.com/warmstat/warmstat/history"
	"github.com/warmstat/warmstat/runfmt"
)

// HistoryAdded says, a line per run, where each run added to the history in hist
// went; a run that began a line of its own says so, since a run measured under other
// conditions than intended (a heap, a machine) is otherwise never noticed.
func HistoryAdded(w io.Writer, hist string, added []history.Added) {
	for _, p := range added {
		tag := ""
		if p.Build.Tag != "" {
			tag = " " + p.Build.Tag
		}
		fmt.Fprintf(w, "added %s: build %s%s (order %d) in line %s: %s\n", p.Run.Dir, p.Build.Short(), tag, p.Build.Order, p.Line, p.File())
		if p.NewLine {
			fmt.Fprintf(w, "  line %s is new: no line of the history had this run's conditions (warmstat history %s names how the lines differ)\n", p.Line, hist)
		}
	}
}

// HistoryPublished says where the page of the history in hist went, and how many
// lines it shows.
func HistoryPublished(w io.Writer, hist, page string, h *HistoryJSON) {
	fmt.Fprintf(w, "published %s: %s (%s)\n", hist, page, Plural(len(h.Lines), "line"))
}

// PublishHistory writes the history h into the site directory as index.html (the
// page) and history.json (its figures), each written whole. The site must be new,
// empty, or one published before: a user's directory is never overwritten.
// It returns the page's path.
func PublishHistory(site string, h *HistoryJSON, now time.Time) (string, error) {
	if err := claimSite(site); err != nil {
		return "", err
	}
	page := filepath.Join(site, "index.html")
	if err := runfmt.WriteFileAtomic(page, func(w io.Writer) error { return WriteHistoryPage(w, h, now) }); err != nil {
		return "", err
	}
	return page, runfmt.WriteJSONAtomic(filepath.Join(site, "history.json"), h)
}

// claimSite makes dir warmstat's: absent or empty (then marked), or marked before.
func claimSite(dir string) error {
	mark := filepath.Join(dir, evitaserver.OwnerMarker)
	if _, err := os.Stat(mark); err == nil {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s holds files warmstat did not publish: give a new or empty directory", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(mark, []byte("made by warmstat history publish\n"), 0o644)
}
