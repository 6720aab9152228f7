package runfmt

import (
	"path/filepath"
	"strings"
	"testing"
)

// The state files' round trip: written atomically and read back strictly, an unknown
// field named with its file and line, an absent file not an error.
func TestJSONStateFiles(t *testing.T) {
	type state struct {
		Schema string `json:"schema"`
		Runs   []int  `json:"runs"`
	}
	p := filepath.Join(t.TempDir(), "state.json")
	var got state
	if found, err := ReadJSONStrict(p, &got); found || err != nil {
		t.Fatalf("absent: %v %v", found, err)
	}
	if err := WriteJSONAtomic(p, state{Schema: "x/v1", Runs: []int{1, 2}}); err != nil {
		t.Fatal(err)
	}
	if found, err := ReadJSONStrict(p, &got); !found || err != nil || got.Schema != "x/v1" || len(got.Runs) != 2 {
		t.Fatalf("round trip: %v %v %+v", found, err, got)
	}
	type older struct {
		Schema string `json:"schema"`
	}
	_, err := ReadJSONStrict(p, &older{})
	if err == nil || !strings.Contains(err.Error(), "state.json") || !strings.Contains(err.Error(), ":3") || !strings.Contains(err.Error(), "runs") {
		t.Fatalf("an unknown field: %v", err)
	}
}
