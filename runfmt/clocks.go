package runfmt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// checkClocks refuses aggregate clocks that cannot all be true: a part longer than
// the whole it is timed inside, or a total that overflows. Figures may be rounded to
// timings.resolution_ns (the Java harness prints 0.1 s), so every bound allows the
// rounding it could hide: half a step for one rounded figure against another figure
// (rounding is monotone), a whole step where two rounded parts share one whole.
//
// What is inside what: every upsert and every source read of a collection happens
// inside that collection's wall-clock, and every collection inside the load
// wall-clock. Reads and upserts alternate, so they share the wall-clock, except with
// prefetch, where the next read overlaps the current upserts.
func (m *Manifest) checkClocks() error {
	t := m.Timings
	half, step := t.ResolutionNs/2, t.ResolutionNs
	shared := !m.Conditions.Prefetch
	if m.Entities > 0 && t.LoadWallNs == 0 && t.ResolutionNs == 1 {
		return ferr("timings.load_wall_ns", "0 ns for a load of %d entities", m.Entities)
	}
	if err := inside("timings.upsert_ns", "the upserts", t.UpsertNs, "the load wall-clock", t.LoadWallNs, half); err != nil {
		return err
	}
	if err := inside("timings.source_read_ns", "the source reads", t.SourceReadNs, "the load wall-clock", t.LoadWallNs, half); err != nil {
		return err
	}
	if both, ok := add(t.UpsertNs, t.SourceReadNs); shared && (!ok || both > addSat(t.LoadWallNs, step)) {
		return ferr("timings.source_read_ns", "source read %s plus upsert %s exceed the load wall-clock %s they alternate in",
			Duration(t.SourceReadNs), Duration(t.UpsertNs), Duration(t.LoadWallNs))
	}
	if o := t.LoopOverheadNs; o != nil {
		if !shared {
			return ferr("timings.loop_overhead_ns", "must be null with prefetch: the source reads overlap the upserts")
		}
		if d := *o - (t.LoadWallNs - t.UpsertNs - t.SourceReadNs); d > step || d < -step {
			return ferr("timings.loop_overhead_ns", "%s, but load wall-clock - upsert - source read is %s",
				Duration(*o), Duration(t.LoadWallNs-t.UpsertNs-t.SourceReadNs))
		}
	}
	var walls, ups, reads int64
	for i, c := range m.Collections {
		f := fmt.Sprintf("collections[%d]", i)
		what := "the wall-clock of " + strconv.Quote(c.Name)
		if err := inside(f+".upsert_ns", "the upserts", c.UpsertNs, what, c.WallNs, half); err != nil {
			return err
		}
		if err := inside(f+".read_ns", "the source reads", c.ReadNs, what, c.WallNs, half); err != nil {
			return err
		}
		if both, ok := add(c.UpsertNs, c.ReadNs); shared && (!ok || both > addSat(c.WallNs, step)) {
			return ferr(f+".read_ns", "source read %s plus upsert %s exceed %s %s they alternate in",
				Duration(c.ReadNs), Duration(c.UpsertNs), what, Duration(c.WallNs))
		}
		var ok1, ok2, ok3 bool
		walls, ok1 = add(walls, c.WallNs)
		ups, ok2 = add(ups, c.UpsertNs)
		reads, ok3 = add(reads, c.ReadNs)
		if !ok1 || !ok2 || !ok3 {
			return ferr(f, "durations of the collections overflow 64-bit nanoseconds")
		}
	}
	n := int64(len(m.Collections))
	slack := mulSat(n+1, half) // each collection's figure and the total rounded apart
	if walls > addSat(t.LoadWallNs, slack) {
		return ferr("timings.load_wall_ns", "%s, but the collections' wall-clocks inside it add up to %s", Duration(t.LoadWallNs), Duration(walls))
	}
	if d := ups - t.UpsertNs; n > 0 && (d > slack || d < -slack) {
		return ferr("timings.upsert_ns", "%s, but the collections' upserts add up to %s", Duration(t.UpsertNs), Duration(ups))
	}
	if d := reads - t.SourceReadNs; n > 0 && (d > slack || d < -slack) {
		return ferr("timings.source_read_ns", "%s, but the collections' source reads add up to %s", Duration(t.SourceReadNs), Duration(reads))
	}
	if g := m.GoLive.Ns; g != nil {
		if _, ok := add(t.LoadWallNs, *g); !ok {
			return ferr("golive.ns", "%d: load wall-clock plus goLive overflows 64-bit nanoseconds", *g)
		}
	}
	return nil
}

// inside refuses a part longer than the whole it was timed inside, beyond slack.
func inside(field, part string, partNs int64, whole string, wholeNs, slack int64) error {
	if partNs > addSat(wholeNs, slack) {
		return ferr(field, "%s take %s, longer than %s (%s) they happen inside", part, Duration(partNs), whole, Duration(wholeNs))
	}
	return nil
}

// add is a+b for non-negative a and b; ok false when it overflows.
func add(a, b int64) (int64, bool) {
	if a > math.MaxInt64-b {
		return math.MaxInt64, false
	}
	return a + b, true
}

func addSat(a, b int64) int64 {
	s, _ := add(a, b)
	return s
}

func mulSat(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

// Duration renders nanoseconds for messages: "12.345678 s", exact to the microsecond.
func Duration(ns int64) string {
	return strconv.FormatFloat(float64(ns)/1e9, 'f', -1, 64) + " s"
}

// lineOfPath finds the line of a JSON path ("timings.upsert_ns",
// "collections[3].read_ns", "collections[3]") in data: the line of the key, or of
// the array element. 0 when the path is not there.
func lineOfPath(data []byte, path string) int {
	type frame struct {
		obj  bool
		key  string // object: the key whose value comes next ("" = a key comes next)
		idx  int    // array: index of the current element
		name string // path of this container
	}
	join := func(a, b string) string {
		if a == "" {
			return b
		}
		return a + "." + b
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var st []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return 0
		}
		end := dec.InputOffset()
		var top *frame
		if len(st) > 0 {
			top = st[len(st)-1]
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			st = st[:len(st)-1]
			if len(st) > 0 {
				st[len(st)-1].key = ""
			}
			continue
		}
		if top != nil && top.obj && top.key == "" { // a key
			top.key, _ = tok.(string)
			if join(top.name, top.key) == path {
				return lineAt(data, end-1)
			}
			continue
		}
		var vp string // the path of this value
		switch {
		case top == nil:
		case top.obj:
			vp = join(top.name, top.key)
			top.key = ""
		default:
			top.idx++
			vp = fmt.Sprintf("%s[%d]", top.name, top.idx)
			if vp == path {
				return lineAt(data, end-1)
			}
		}
		if d, ok := tok.(json.Delim); ok {
			st = append(st, &frame{obj: d == '{', idx: -1, name: vp})
		}
	}
}
