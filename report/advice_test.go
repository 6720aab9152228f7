package report

import (
	"strings"
	"testing"

	"github.com/warmstat/warmstat/analyze"
)

// A copy among the duplicates asks for the copies to go, even beside a run given
// twice; a run given twice alone asks for it once; no duplicates, no advice.
func TestDuplicateAdvice(t *testing.T) {
	twice := analyze.Duplicate{RunID: "r1", SameDirectory: true}
	copied := analyze.Duplicate{RunID: "r2"}
	for _, c := range []struct {
		dups []analyze.Duplicate
		want string
	}{
		{[]analyze.Duplicate{twice, copied}, "  (remove the copies: each run directory must hold a different run)"},
		{[]analyze.Duplicate{twice}, "  (give each run once: a directory of runs already holds the runs inside it)"},
		{nil, ""},
	} {
		if got := strings.Join(DuplicateAdvice(&analyze.Refusal{Duplicates: c.dups}), "\n"); got != c.want {
			t.Errorf("%+v: %q, want %q", c.dups, got, c.want)
		}
	}
}
