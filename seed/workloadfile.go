package seed

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/warmstat/warmstat/workload"
)

// CheckNewWorkload refuses a workload file path WriteWorkload must not write: an
// existing file (a workload is never overwritten) or one whose directory is missing.
// It is checked before the catalog is generated, which may take minutes.
func CheckNewWorkload(path string) error {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s exists: a workload file is never overwritten", path)
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return fmt.Errorf("%s: its directory does not exist", path)
	}
	return nil
}

// WorkloadTooLarge is TooLargeHere for a workload file of p's catalog, from the live
// heap its header estimates (a header without an estimate says nothing).
func WorkloadTooLarge(p *Profile, h workload.Header) (f Fit, ok bool) {
	if h.LiveHeapEstimateBytes == nil {
		return Fit{}, false
	}
	return TooLargeHere(p, *h.LiveHeapEstimateBytes, h.LiveHeapEstimateSource)
}
