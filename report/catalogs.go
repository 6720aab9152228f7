package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/warmstat/warmstat/analyze"
	"github.com/warmstat/warmstat/runfmt"
	"github.com/warmstat/warmstat/seed"
	"github.com/warmstat/warmstat/workload"
)

// The closing lines of the commands that write a run, a catalog or a file of one (load,
// seed, extract, shape, import): what was written, how large, how fast.

// WriteLoadEnd says where a load's run went, then its status line, the one the Java
// harness prints and scripts wait for: on out, or beside out's JSON document.
func WriteLoadEnd(out, errw io.Writer, m *runfmt.Manifest, dir string, took time.Duration, f Format) {
	fmt.Fprintf(errw, "run %s written to %s in %s\n", m.RunID, dir, took.Round(time.Millisecond))
	if f == JSON { // stdout holds one JSON document
		out = errw
	}
	fmt.Fprintf(out, "RUN_STATUS=MEASUREMENT-DONE-%s\n", m.RunID)
}

// WriteExtracted is extract's line: the workload file at out, read from from.
func WriteExtracted(w io.Writer, out, from string, info *workload.Info, took time.Duration) {
	per := "-"
	if n := info.Trailer.Entities; n > 0 {
		per = fmt.Sprintf("%.0f bytes/entity", float64(info.Size)/float64(n))
	}
	fmt.Fprintf(w, "workload %s: %d entities from %s, %s (%s), sha256 %s; read in %s, %s in all\n", out, info.Trailer.Entities, from,
		runfmt.FormatSize(info.Size), per, info.SHA256[:12], time.Duration(info.Trailer.ExtractNs).Round(time.Millisecond), took.Round(time.Millisecond))
}

// WriteDisproportionate notes a scale at which most of p's collections get one entity
// where their share rounds to none (nothing when the catalog keeps its proportions).
func WriteDisproportionate(w io.Writer, p *seed.Profile, scale float64) {
	if cl := p.Disproportionate(scale); cl != nil {
		fmt.Fprintf(w, "note: at scale %g, %d of %d collections get one entity where their share rounds to none (%s): the catalog is not the profile's in proportion\n",
			scale, len(cl), len(p.Collections), strings.Join(cl, ", "))
	}
}

// WriteSeeded is seed's line for a catalog seeded into the server at addr.
func WriteSeeded(w io.Writer, catalog, addr string, st *seed.Stats) {
	fmt.Fprintf(w, "seeded catalog %s on %s: %d entities in %s (%.1f entities/s), ALIVE\n", catalog, addr,
		st.Entities, st.Took.Round(1e6), float64(st.Entities)/st.Took.Seconds())
}

// WriteSeededWorkload is seed's line for a catalog written into a workload file, how to
// replay it, and, when no heap this machine holds fits its writer (seed.WorkloadTooLarge),
// the largest scale that would.
func WriteSeededWorkload(w io.Writer, info workload.Info, catalog string, scale float64, took time.Duration, fit seed.Fit, tooLarge bool) {
	fmt.Fprintf(w, "workload %s: %d entities of catalog %s at scale %g written in %s (%.0f entities/s, %s); replay it with warmstat load --replay %s --evita-version V --build LABEL --out DIR\n",
		info.Path, info.Trailer.Entities, catalog, scale, took.Round(time.Millisecond), float64(info.Trailer.Entities)/took.Seconds(),
		runfmt.FormatSize(info.Size), info.Path)
	if tooLarge {
		fmt.Fprintf(w, "note: its writer needs a heap of at least %s (about %s live, %s); this machine (%s) holds at most %s: it replays up to scale %g here\n",
			runfmt.FormatBytesAtLeast(fit.Need), runfmt.FormatSize(fit.Live), fit.LiveHeapSource, runfmt.FormatBytes(&fit.Memory), runfmt.FormatBytesExact(&fit.Largest), fit.LargestScale)
	}
}

// WritePristineSeeded is seed's line for a pristine snapshot at path: its size, its
// seeding server's heap, its live heap as measured and as estimated.
func WritePristineSeeded(w io.Writer, path string, st *seed.Stats, heap int64, est seed.LiveEstimate, compress bool) {
	live := "not measured"
	if st.LiveHeapBytes != nil {
		live = runfmt.FormatSize(*st.LiveHeapBytes)
	}
	fmt.Fprintf(w, "pristine snapshot %s: %d entities (seeded in %s with a %s heap; live heap %s, estimated %s; storage.compress=%t)\n",
		path, st.Entities, st.Took.Round(1e6), runfmt.FormatBytesExact(&heap), live, runfmt.FormatSize(est.Bytes), compress)
}

// WriteShapeMeasured is shape's answer: the shape file out measured from from, what the
// generator's vocabulary could not keep, and the shape at a glance (WriteShapeSummary).
func WriteShapeMeasured(w io.Writer, out, from string, p *seed.Profile, took time.Duration) error {
	scale := ""
	if p.Measured.Scale != 1 {
		scale = fmt.Sprintf(" (a catalog seeded at scale %g: seed --shape regenerates it at --scale %g)", p.Measured.Scale, p.Measured.Scale)
	}
	fmt.Fprintf(w, "shape %s: %d collections, %d entities measured from %s in %s%s\n", out, len(p.Collections), p.Measured.Entities,
		from, took.Round(time.Millisecond), scale)
	if len(p.Measured.NotKept) > 0 {
		fmt.Fprintf(w, "not kept (the generator's vocabulary cannot say it): %s\n", strings.Join(p.Measured.NotKept, "; "))
	}
	return WriteShapeSummary(w, p)
}

// WriteImported is import's line: the harness run dir imported into out as m.
func WriteImported(w io.Writer, dir, out string, m *runfmt.Manifest) {
	machine := "machine unknown (--machine this, or --cores and --memory, record it)"
	if m.Machine.Cores != nil {
		machine = fmt.Sprintf("machine %d cores, memory %s", *m.Machine.Cores, analyze.ConditionValue(m, "memory-limit"))
	}
	fmt.Fprintf(w, "imported %s -> %s: %d entities, build %s, verification %s, goLive %s, exit code %d, %s\n",
		dir, out, m.Entities, m.Build.Label, m.Verification.Status, m.GoLive.Status, m.ExitCode, machine)
}
