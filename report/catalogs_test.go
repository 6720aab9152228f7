package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/warmstat/warmstat/runfmt"
)

// The status line scripts wait for goes to stdout, except beside a JSON document, which
// must stay alone on stdout.
func TestWriteLoadEndStatusLine(t *testing.T) {
	m := &runfmt.Manifest{RunID: "run-7"}
	for _, f := range []Format{Text, JSON} {
		var out, errw bytes.Buffer
		WriteLoadEnd(&out, &errw, m, "runs/x/run-7", 1500*time.Millisecond, f)
		status := "RUN_STATUS=MEASUREMENT-DONE-run-7\n"
		onOut := strings.Contains(out.String(), status)
		if onOut == (f == JSON) || strings.Contains(errw.String(), status) != (f == JSON) {
			t.Errorf("%v: stdout %q, stderr %q", f, out.String(), errw.String())
		}
		if !strings.HasPrefix(errw.String(), "run run-7 written to runs/x/run-7 in 1.5s\n") {
			t.Errorf("%v: stderr %q", f, errw.String())
		}
	}
}
