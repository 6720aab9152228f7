package evitaserver

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"time"
)

// JIT is what a HotSpot JVM's own counters say about its JIT compiler so far.
type JIT struct {
	CompileTime time.Duration // java.ci.totalTime: time spent compiling (all compiler threads)
	Compiles    int64         // sun.ci.totalCompiles
}

// ReadJIT reads the JIT counters of a running HotSpot JVM from its performance-data
// file (/tmp/hsperfdata_USER/PID, which every HotSpot JVM keeps unless started with
// -XX:-UsePerfData): the counters jstat reads, without starting a JVM to read them.
func ReadJIT(pid int) (JIT, error) {
	u, err := user.Current()
	if err != nil {
		return JIT{}, err
	}
	path := filepath.Join("/tmp", "hsperfdata_"+u.Username, fmt.Sprint(pid))
	b, err := os.ReadFile(path)
	if err != nil {
		return JIT{}, err
	}
	c, err := perfCounters(b)
	if err != nil {
		return JIT{}, fmt.Errorf("%s: %w", path, err)
	}
	ticks, okT := c["java.ci.totalTime"]
	freq, okF := c["sun.os.hrt.frequency"]
	n, okN := c["sun.ci.totalCompiles"]
	if !okT || !okF || !okN || freq <= 0 {
		return JIT{}, fmt.Errorf("%s: no JIT counters (java.ci.totalTime, sun.os.hrt.frequency, sun.ci.totalCompiles)", path)
	}
	return JIT{CompileTime: time.Duration(float64(ticks) / float64(freq) * float64(time.Second)), Compiles: n}, nil
}

// perfCounters reads the long-valued counters of a HotSpot performance-data buffer:
// a prologue (magic 0xcafec0c0 big-endian, then the buffer's byte order, versions,
// and where its entries start), then entries of name and value.
func perfCounters(b []byte) (map[string]int64, error) {
	if len(b) < 32 || binary.BigEndian.Uint32(b) != 0xcafec0c0 {
		return nil, errors.New("not a HotSpot performance-data file")
	}
	var bo binary.ByteOrder = binary.BigEndian
	if b[4] == 1 {
		bo = binary.LittleEndian
	}
	if b[5] != 2 {
		return nil, fmt.Errorf("performance-data version %d.%d, this reads 2.x", b[5], b[6])
	}
	off, n := int(bo.Uint32(b[24:])), int(bo.Uint32(b[28:]))
	out := map[string]int64{}
	for range n {
		if off < 0 || off+20 > len(b) {
			return nil, errors.New("an entry lies outside the file")
		}
		e := b[off:]
		length, nameOff, vecLen, dataOff := int(bo.Uint32(e)), int(bo.Uint32(e[4:])), int(bo.Uint32(e[8:])), int(bo.Uint32(e[16:]))
		if length <= 0 || off+length > len(b) || nameOff >= length || dataOff+8 > length && vecLen == 0 {
			return nil, errors.New("a malformed entry")
		}
		name := e[nameOff:length]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if e[12] == 'J' && vecLen == 0 { // a long scalar
			out[string(name)] = int64(bo.Uint64(e[dataOff:]))
		}
		off += length
	}
	return out, nil
}
