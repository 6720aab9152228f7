package analyze

import (
	"fmt"
	"slices"

	"github.com/warmstat/warmstat/runfmt"
)

// Profile is one collection's upsert latencies in one run as the plots show them:
// sorted, with the summary's percentiles marked (the CDF), and in load order as
// consecutive blocks of upserts with each block's median and p99 (the timeline).
// Every percentile here is the summary's definition (Quantiles).
type Profile struct {
	Run        *runfmt.Run
	Collection string // or Overall
	SortedNs   []int64
	Marks      []Mark // p50, p95, p99
	Block      int    // upserts per block
	Blocks     []Block
}

// Mark is one percentile of the sorted latencies and the height of the empirical
// CDF where it lies.
type Mark struct {
	P        float64
	Ns       float64
	Fraction float64
}

// Block is a run of consecutive upserts of the collection, by their position in the
// whole run (1-based).
type Block struct {
	FirstSeq, LastSeq int64
	MedianNs, P99Ns   float64
}

// ProfileOf reads one collection's latencies ("*" = every collection) of a run.
// block is the upserts per timeline block; 0 picks about 200 blocks (at least 25
// upserts each).
func ProfileOf(run *runfmt.Run, coll string, q Quantiles, block int) (*Profile, error) {
	if block < 0 {
		return nil, &OptionError{Option: "Block", Value: fmt.Sprint(block), Msg: "upserts per block must be positive (0 = about 200 blocks)"}
	}
	var lat, seq []int64
	var n int64
	err := run.ScanRows(func(r runfmt.Row) error {
		n++
		if coll == Overall || r.Collection == coll {
			lat = append(lat, r.UpsertNs)
			seq = append(seq, n)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(lat) == 0 {
		return nil, &OptionError{Option: "Collection", Value: coll, Msg: fmt.Sprintf("%s has no upserts of this collection (it has %v)", run.Dir, run.Manifest.CollectionNames())}
	}
	p := &Profile{Run: run, Collection: coll, Block: block}
	if p.Block == 0 {
		p.Block = max(25, len(lat)/200)
	}
	buf := make([]int64, 0, p.Block)
	for i := 0; i < len(lat); i += p.Block {
		j := min(len(lat), i+p.Block)
		buf = append(buf[:0], lat[i:j]...)
		slices.Sort(buf)
		p.Blocks = append(p.Blocks, Block{FirstSeq: seq[i], LastSeq: seq[j-1],
			MedianNs: quantileSorted(buf, 50, q), P99Ns: quantileSorted(buf, 99, q)})
	}
	slices.Sort(lat)
	p.SortedNs = lat
	for _, pc := range percentiles {
		k, frac := rank(len(lat), pc, q)
		p.Marks = append(p.Marks, Mark{P: pc, Ns: quantileSorted(lat, pc, q), Fraction: (float64(k+1) + frac) / float64(len(lat))})
	}
	return p, nil
}
