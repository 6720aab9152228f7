// Package history keeps a line of builds measured under one set of conditions: every
// commit (or release) of a branch measured once or a few times, in the branch's
// order, so that a change shows as a step. A history is a directory of plain files —
// it can live in a git repository or a CI artifact — and each measured run is a file
// of its own (points/LINE/ORDER-COMMIT-RUN.json), written whole under a temporary
// name and renamed, so that many machines appending at once never lose a point, and
// two branches of a git repository that each added points merge without a conflict.
//
// A line is the runs whose recorded conditions (analyze's comparability contract:
// heaps, workload, target mode, machine, JVM, ...) are the same; a run measured under
// other conditions starts another line, never joins this one. The change points are
// analyze's (ChangePoints); the rules of following one up — which record is of which
// change point, when a series confirms it, what a bisect named, the gate — are this
// package's (follow.go), and running the series or the bisect is the caller's, injected
// (Runner).
package history

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/warmstat/warmstat/runfmt"
)

// Schemas of the files.
const (
	StoreSchema = "warmstat.history/v1"
	PointSchema = "warmstat.history-point/v1"
)

const (
	storeFile = "history.json"
	pointsDir = "points"
)

// Store is a history directory.
type Store struct {
	Dir string
	// fresh: the directory is to be made a history by the first Add that writes (so a
	// refused add leaves nothing behind)
	fresh bool
}

// storeHeader is history.json: what the directory is.
type storeHeader struct {
	Schema  string    `json:"schema"`
	Created time.Time `json:"created"`
}

// Open opens the history in dir; create makes it when dir is absent or empty (never
// in a directory that holds anything else: warmstat writes only where it owns).
func Open(dir string, create bool) (*Store, error) {
	var h storeHeader
	found, err := runfmt.ReadJSONStrict(filepath.Join(dir, storeFile), &h)
	if err != nil {
		return nil, err
	}
	if found {
		if h.Schema != StoreSchema {
			return nil, fmt.Errorf("%s: field schema: %q is not a history of this warmstat (%s)", filepath.Join(dir, storeFile), h.Schema, StoreSchema)
		}
		return &Store{Dir: dir}, nil
	}
	if !create {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("%s is not a history: no such directory (warmstat history add makes one)", dir)
		}
		return nil, fmt.Errorf("%s is not a history (no %s): warmstat history add makes one", dir, storeFile)
	}
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			if e.Name() == storeFile {
				// another add made the history since its header was looked for (it is
				// renamed into place whole): the history is there now
				return Open(dir, false)
			}
			// what another add making this history at the same moment leaves: its
			// points/ and its header's temporary file
			if e.Name() != pointsDir && !strings.HasPrefix(e.Name(), "."+storeFile+".tmp-") {
				return nil, fmt.Errorf("%s is not empty and not a history: a history is made in a new or empty directory", dir)
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return &Store{Dir: dir, fresh: true}, nil
}

// make writes the header of a fresh history (idempotent: two adds making one history
// at once both write the same header).
func (s *Store) make(now time.Time) error {
	if !s.fresh {
		return nil
	}
	if err := os.MkdirAll(filepath.Join(s.Dir, pointsDir), 0o755); err != nil {
		return err
	}
	if err := runfmt.WriteJSONAtomic(filepath.Join(s.Dir, storeFile), storeHeader{Schema: StoreSchema, Created: now.UTC()}); err != nil {
		return err
	}
	s.fresh = false
	return nil
}

// Build is what a point was measured of: a commit and where it stands.
type Build struct {
	Commit string    `json:"commit"`          // the full hash ("" for a build known only by version)
	Order  int       `json:"order"`           // its place in the branch: git rev-list --count (the commit and its ancestors)
	Date   time.Time `json:"date"`            // its committer date
	Tag    string    `json:"tag,omitempty"`   // a release tag pointing at it
	Label  string    `json:"label"`           // the run's build label
	Source string    `json:"source"`          // how the run got its server: release, classpath, server-jar, checkout
	Ref    string    `json:"ref,omitempty"`   // what names the build to a series: a version, jar:FILE, checkout:DIR
	Title  string    `json:"title,omitempty"` // the commit's subject
	// Placed is how its order was found: "checkout" (git rev-list --count in the
	// checkout, the commit itself included) or "order" (given by hand); a line never
	// mixes the two, whose orders are not comparable
	Placed string `json:"placed"`
}

// Short is the commit's short hash, or the label.
func (b Build) Short() string {
	if b.Commit != "" {
		return b.Commit[:min(10, len(b.Commit))]
	}
	return b.Label
}

// Point is one run of one build in a history.
type Point struct {
	Schema string `json:"schema"`
	Build  Build  `json:"build"`
	// Run is where the run was (its directory when added) and its identity: the
	// SHA-256 of its manifest and entities.csv, so a run (or a copy of it) joins a
	// history once
	Run struct {
		ID     string     `json:"id"`
		Dir    string     `json:"dir"`
		Digest string     `json:"digest"`
		Start  *time.Time `json:"started_at,omitempty"`
	} `json:"run"`
	// Line is the digest of Conditions: the points of one line share it
	Line       string            `json:"line"`
	Conditions map[string]string `json:"conditions"`
	// Figures are the run's figures by metric (Figure*), in their units; a figure the
	// run does not have is absent
	Figures map[string]float64 `json:"figures"`
	// Collection is the run's dominant collection (analyze.DominantOf), the one the
	// per-upsert figures (product_*) are of; "" in points added before it was recorded
	Collection string    `json:"collection,omitempty"`
	Added      time.Time `json:"added"`
	file       string
}

// The figures a point keeps, and their units.
const (
	FigureProductMean  = "product_mean_us"  // the dominant collection's mean upsert
	FigurePublishing   = "publishing_s"     // load + goLive
	FigureGoLive       = "golive_s"         // goLive
	FigureLoad         = "load_s"           // the load's wall-clock
	FigureProductCPU   = "product_cpu_us"   // the dominant collection's mean upsert's CPU
	FigureProductAlloc = "product_alloc_kb" // and its allocated KB
	FigureMachine      = "machine_us"       // the canary: the machine's speed during the load
)

// File is where the point is stored ("" before Add).
func (p Point) File() string { return p.file }

// LineKey is the digest of a set of conditions.
func LineKey(conditions map[string]string) string {
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range conditions {
			if !yield(k) {
				return
			}
		}
	})
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s=%s\n", k, conditions[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Add stores points, each in a file of its own. A run already in the history (by its
// digest), or given twice, is refused before anything is written, naming it.
func (s *Store) Add(points []Point, now time.Time) ([]Point, error) {
	have, err := s.Points()
	if err != nil {
		return nil, err
	}
	seen := map[string]string{}
	for _, p := range have {
		for _, id := range p.identities() {
			seen[id] = p.file
		}
	}
	for _, p := range points {
		for _, id := range p.identities() {
			if f, ok := seen[id]; ok {
				if f == "" {
					return nil, fmt.Errorf("run %s is given twice (%s)", p.Run.Dir, identityWords(id))
				}
				return nil, fmt.Errorf("run %s is in the history already: %s (%s)", p.Run.Dir, f, identityWords(id))
			}
		}
		for _, id := range p.identities() {
			seen[id] = ""
		}
		if p.Line != LineKey(p.Conditions) {
			return nil, fmt.Errorf("run %s: its line %s is not its conditions' (%s)", p.Run.Dir, p.Line, LineKey(p.Conditions))
		}
	}
	if err := placeable(have, points); err != nil {
		return nil, err
	}
	if err := s.make(now); err != nil {
		return nil, err
	}
	out := make([]Point, len(points))
	for i, p := range points {
		p.Schema, p.Added = PointSchema, now.UTC()
		dir := filepath.Join(s.Dir, pointsDir, p.Line)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return out[:i], err
		}
		p.file = filepath.Join(dir, fmt.Sprintf("%09d-%s-%s.json", p.Build.Order, cleanName(p.Build.Short()), p.Run.Digest[:12]))
		if err := runfmt.WriteJSONAtomic(p.file, p); err != nil {
			return out[:i], err
		}
		out[i] = p
	}
	return out, nil
}

func cleanName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// placeable refuses points that would put a line's builds in a wrong order: a line
// placed by its checkout and by hand at once (their orders are not comparable), and,
// by hand, two builds at one order or one build at two.
func placeable(have, adding []Point) error {
	type at struct {
		line  string
		order int
	}
	type build struct{ line, commit, label string }
	placed, builds, orders := map[string]Point{}, map[at]Point{}, map[build]Point{}
	for _, p := range append(slices.Clone(have), adding...) {
		if q, ok := placed[p.Line]; ok && q.Build.Placed != p.Build.Placed {
			return fmt.Errorf("run %s is placed by %s, but line %s places its builds by %s (%s): their orders do not compare; place every run of a line the same way",
				p.Run.Dir, placedWords(p.Build.Placed), p.Line, placedWords(q.Build.Placed), q.file)
		}
		placed[p.Line] = p
		k := at{p.Line, p.Build.Order}
		// commits counted in a checkout may share a count on two branches (the history
		// orders them by the checkout's topology); orders given by hand may not
		if q, ok := builds[k]; ok && p.Build.Placed == "order" && (q.Build.Commit != p.Build.Commit || q.Build.Label != p.Build.Label) {
			return fmt.Errorf("run %s (build %s) is at order %d, where line %s has build %s already (%s): two builds at one place",
				p.Run.Dir, p.Build.Short(), p.Build.Order, p.Line, q.Build.Short(), cmp.Or(q.file, q.Run.Dir))
		}
		builds[k] = p
		if p.Build.Placed != "order" {
			continue
		}
		b := build{p.Line, p.Build.Commit, p.Build.Label}
		if q, ok := orders[b]; ok && q.Build.Order != p.Build.Order {
			return fmt.Errorf("run %s (build %s) is at order %d, where line %s has that build at order %d already (%s): one build at two places",
				p.Run.Dir, p.Build.Short(), p.Build.Order, p.Line, q.Build.Order, cmp.Or(q.file, q.Run.Dir))
		}
		orders[b] = p
	}
	return nil
}

func placedWords(how string) string {
	if how == "order" {
		return "an order given by hand (--order)"
	}
	return "its commit's place in a checkout (--evita-home)"
}

// identities are what make two points the same run: its files' digest (a copy of it),
// and its run id with its start (the same run, its files rewritten).
func (p Point) identities() []string {
	ids := []string{"digest " + p.Run.Digest}
	if p.Run.ID != "" && p.Run.Start != nil {
		ids = append(ids, "run "+p.Run.ID+" started "+p.Run.Start.UTC().Format(time.RFC3339Nano))
	}
	return ids
}

func identityWords(id string) string {
	if strings.HasPrefix(id, "digest ") {
		return "the same manifest and entities.csv"
	}
	return "the same " + id + ", its files rewritten"
}

// Points reads every point of the history, refusing a damaged file with its name,
// line and field, and a run held twice (two adds at once, or a merge of two copies of
// the history) naming both files; files of other names (a temporary one left by a
// crash) are skipped. A run held by two files is a *HeldTwiceError.
func (s *Store) Points() ([]Point, error) {
	out, err := s.points()
	if err != nil {
		return nil, err
	}
	held := map[string]string{}
	for _, p := range out {
		for _, id := range p.identities() {
			if f, ok := held[id]; ok {
				return nil, &HeldTwiceError{fmt.Sprintf("%s: field run: %s is held by %s too (%s): remove one of the two files", p.file, p.Run.Dir, f, identityWords(id))}
			}
			held[id] = p.file
		}
	}
	return out, nil
}

func (s *Store) points() ([]Point, error) {
	root := filepath.Join(s.Dir, pointsDir)
	var out []Point
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == root {
				return nil
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".json") || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		var p Point
		if _, err := runfmt.ReadJSONStrict(path, &p); err != nil {
			return err
		}
		if err := p.check(path); err != nil {
			return err
		}
		p.file = path
		out = append(out, p)
		return nil
	})
	return out, err
}

// check refuses a point that is not whole, naming its file and field.
func (p Point) check(path string) error {
	bad := func(field, format string, a ...any) error {
		return fmt.Errorf("%s: field %s: %s", path, field, fmt.Sprintf(format, a...))
	}
	switch {
	case p.Schema != PointSchema:
		return bad("schema", "%q is not a history point of this warmstat (%s)", p.Schema, PointSchema)
	case len(p.Run.Digest) != 64:
		return bad("run.digest", "%q is not a SHA-256", p.Run.Digest)
	case p.Line != LineKey(p.Conditions):
		return bad("line", "%s is not its conditions' digest %s (conditions edited?)", p.Line, LineKey(p.Conditions))
	case filepath.Base(filepath.Dir(path)) != p.Line:
		return bad("line", "%s, but the file is in line %s's directory", p.Line, filepath.Base(filepath.Dir(path)))
	case p.Build.Label == "":
		return bad("build.label", "empty")
	case p.Build.Placed != "checkout" && p.Build.Placed != "order":
		return bad("build.placed", "%q: checkout or order", p.Build.Placed)
	case p.Build.Order < 0:
		return bad("build.order", "%d: a place in a branch is not negative", p.Build.Order)
	}
	for k, v := range p.Figures {
		if !(v > 0) {
			return bad("figures."+k, "%v: a figure is positive", v)
		}
	}
	return nil
}

// HeldTwiceError is a history holding one run in two files: not a damaged file, a
// refusal to count the run twice.
type HeldTwiceError struct{ msg string }

func (e *HeldTwiceError) Error() string { return e.msg }
