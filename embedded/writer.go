package embedded

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/warmstat/warmstat/evitaserver"
)

// Writer is a running embedded writer: an evitaserver.Server whose JVM runs our main
// class (same heap, GC log, profiler agent, memory reservation and stop rules as a
// spawned server) and answers on its pipes. Calls are strictly one at a time.
type Writer struct {
	*evitaserver.Server
	Version string // what the engine's jar says it is ("" if its manifest says nothing)
	mu      sync.Mutex
	w       *bufio.Writer
	wf, rf  *os.File
	r       *bufio.Reader
	hdr     [5]byte
	buf     []byte
	broken  error // the pipe failed: every later call fails with it
}

// ErrEngineFailed: the build's engine threw while opening, a class missing from an
// incomplete classpath for example; a remote server of the same jars would fail too.
var ErrEngineFailed = errors.New("the embedded writer could not open the engine")

// ErrWriterGone: the embedded writer's JVM exited or its pipe broke mid-call.
var ErrWriterGone = errors.New("the embedded writer is gone")

// Start starts the embedded writer on c (its Server, heap, data directory, JVM
// options and server arguments as for a spawned server), the writer's classes being
// classes (Build). It returns once the engine is open and the writer has said so.
func Start(ctx context.Context, c evitaserver.Config, classes string) (*Writer, error) {
	cmdR, cmdW, err := os.Pipe() // warmstat -> writer (its fd 3)
	if err != nil {
		return nil, err
	}
	repR, repW, err := os.Pipe() // writer -> warmstat (its fd 4)
	if err != nil {
		cmdR.Close()
		cmdW.Close()
		return nil, err
	}
	w := &Writer{wf: cmdW, rf: repR, w: bufio.NewWriterSize(cmdW, 64<<10), r: bufio.NewReaderSize(repR, 4<<10)}
	c.Main, c.AddClasspath, c.ExtraFiles = MainClass, []string{classes}, []*os.File{cmdR, repW}
	// the release's class-data archive for this launch is made by a boot of the writer
	// itself, ended by its goodbye (the JVM writes the archive as it exits)
	c.Boot = func(ctx context.Context, t evitaserver.Config) (func() error, error) {
		w, err := Start(ctx, t, classes)
		if err != nil {
			return nil, err
		}
		return func() error { return w.Close(2 * time.Minute) }, nil
	}
	// the writer says hello once its engine is open: one read, which every probe waits for
	// (closing the pipes ends it if the JVM never gets there)
	ready := make(chan struct{})
	var helloErr error
	go func() {
		defer close(ready)
		msg, err := w.reply()
		if err == nil {
			w.Version = strings.TrimPrefix(strings.TrimPrefix(string(msg), "ready "), "null")
		}
		helloErr = err
	}()
	c.Probe = func(pctx context.Context, _ string) error {
		select {
		case <-ready:
			return helloErr
		case <-pctx.Done():
			return errors.New("the embedded writer has not opened its engine yet")
		}
	}
	s, err := evitaserver.Start(ctx, c)
	if err != nil {
		w.closePipes()
		// a build the writer compiled against but cannot open: its hello said why
		<-ready // closing the pipes ended the hello's read, if the JVM never said it
		var re *remoteError
		if errors.As(helloErr, &re) {
			if what, ok := strings.CutPrefix(re.msg, "UnsupportedEngine: "); ok {
				return nil, fmt.Errorf("%w: evitaDB %s: %s", ErrUnsupported, name(c.Server), what)
			}
			what, _ := strings.CutPrefix(re.msg, "EngineFailed: ")
			return nil, fmt.Errorf("%w: evitaDB %s: %s (its stack is in the writer's log)", ErrEngineFailed, name(c.Server), what)
		}
		return nil, err
	}
	w.Server = s
	return w, nil
}

func (w *Writer) closePipes() {
	w.wf.Close()
	w.rf.Close()
}

// call sends one request and waits for its reply. A writer that answered with an
// error stays usable; a broken pipe (the JVM gone) ends every later call.
func (w *Writer) call(op byte, payload []byte) ([]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken != nil {
		return nil, w.broken
	}
	w.hdr[0] = op
	binary.BigEndian.PutUint32(w.hdr[1:], uint32(len(payload)))
	_, err := w.w.Write(w.hdr[:])
	if err == nil {
		_, err = w.w.Write(payload)
	}
	if err == nil {
		err = w.w.Flush()
	}
	if err != nil {
		w.broken = fmt.Errorf("%w: %v", ErrWriterGone, err)
		return nil, w.broken
	}
	b, err := w.reply()
	var re *remoteError
	if err != nil && !errors.As(err, &re) {
		w.broken = err
	}
	return b, err
}

// remoteError is the engine's own refusal of a request.
type remoteError struct{ msg string }

func (e *remoteError) Error() string { return e.msg }

func (w *Writer) reply() ([]byte, error) {
	if _, err := io.ReadFull(w.r, w.hdr[:]); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrWriterGone, err)
	}
	n := binary.BigEndian.Uint32(w.hdr[1:])
	if cap(w.buf) < int(n) {
		w.buf = make([]byte, n)
	}
	b := w.buf[:n]
	if _, err := io.ReadFull(w.r, b); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrWriterGone, err)
	}
	switch w.hdr[0] {
	case 'K':
		return b, nil
	case 'E':
		return nil, &remoteError{string(b)}
	}
	return nil, fmt.Errorf("%w: a reply of kind %q", ErrWriterGone, w.hdr[0])
}

func (w *Writer) do(what string, op byte, payload []byte) ([]byte, error) {
	b, err := w.call(op, payload)
	if err != nil {
		return nil, fmt.Errorf("embedded %s: %w", what, err)
	}
	return b, nil
}

func u64(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("%w: a reply of %d bytes where 8 were due", ErrWriterGone, len(b))
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}

// CatalogState is the catalog's state by the engine's name ("ALIVE", ...); "" when the
// engine does not know the catalog.
func (w *Writer) CatalogState(catalog string) (string, error) {
	b, err := w.do("catalog state", 'S', []byte(catalog))
	return string(b), err
}

// DeleteCatalog removes a catalog if it exists.
func (w *Writer) DeleteCatalog(catalog string) error {
	_, err := w.do("delete catalog "+catalog, 'R', []byte(catalog))
	return err
}

// DefineCatalog creates a catalog (WARMING_UP).
func (w *Writer) DefineCatalog(catalog string) error {
	_, err := w.do("define catalog "+catalog, 'D', []byte(catalog))
	return err
}

// Open opens the writer's one session on catalog, read-write or read-only.
func (w *Writer) Open(catalog string, write bool) error {
	mode := "\x00r"
	if write {
		mode = "\x00w"
	}
	_, err := w.do("open session on "+catalog, 'O', []byte(catalog+mode))
	return err
}

// CloseSession closes the open session (nothing when none is open).
func (w *Writer) CloseSession() error {
	_, err := w.do("close session", 'X', nil)
	return err
}

// UpdateCatalogSchema applies a GrpcUpdateCatalogSchemaRequest's mutations.
func (w *Writer) UpdateCatalogSchema(req []byte) error {
	_, err := w.do("UpdateCatalogSchema", 'C', req)
	return err
}

// DefineEntitySchema creates a collection.
func (w *Writer) DefineEntitySchema(entityType string) error {
	_, err := w.do("DefineEntitySchema "+entityType, 'E', []byte(entityType))
	return err
}

// UpdateEntitySchema applies a GrpcUpdateEntitySchemaRequest.
func (w *Writer) UpdateEntitySchema(what string, req []byte) error {
	_, err := w.do("UpdateEntitySchema "+what, 'M', req)
	return err
}

// Cost is what one upsert's wall time was made of, read on the thread that applied it
// (conversion and upsertEntity; the pipe and the request's parsing outside). A figure
// the JVM or the kernel could not give is -1.
type Cost struct {
	WallNs     int64 // the upsert's wall clock, read outermost
	CPUNs      int64 // the thread's CPU clock over it (user and system)
	AllocBytes int64 // bytes the thread allocated in it
	WaitNs     int64 // time the thread waited on the run queue for a CPU in it
}

// Upsert applies one GrpcUpsertEntityRequest and returns the engine's own clocks of it.
func (w *Writer) Upsert(req []byte) (Cost, error) {
	b, err := w.call('U', req)
	if err != nil {
		return Cost{}, fmt.Errorf("embedded UpsertEntity: %w", err)
	}
	if len(b) != 32 {
		return Cost{}, fmt.Errorf("embedded UpsertEntity: %w: a reply of %d bytes where 32 were due", ErrWriterGone, len(b))
	}
	c := Cost{int64(binary.BigEndian.Uint64(b)), int64(binary.BigEndian.Uint64(b[8:])),
		int64(binary.BigEndian.Uint64(b[16:])), int64(binary.BigEndian.Uint64(b[24:]))}
	if c.WallNs < 0 || c.CPUNs < -1 || c.AllocBytes < -1 || c.WaitNs < -1 {
		return Cost{}, fmt.Errorf("embedded UpsertEntity: %w: negative clocks %+v", ErrWriterGone, c)
	}
	return c, nil
}

// Tally is the applying thread's counters at one moment: a load window's figures are
// two tallies apart. A figure the JVM or the kernel could not give is -1.
type Tally struct {
	TID        int   // the applying thread as the kernel knows it (/proc/PID/task/TID)
	CPUNs      int64 // its CPU clock
	AllocBytes int64 // its allocated bytes
	WaitNs     int64 // its run-queue wait
}

// Tally reads the counters of the thread that applies upserts.
func (w *Writer) Tally() (Tally, error) {
	b, err := w.do("tally", 'T', nil)
	if err != nil {
		return Tally{}, err
	}
	if len(b) != 32 {
		return Tally{}, fmt.Errorf("embedded tally: %w: a reply of %d bytes where 32 were due", ErrWriterGone, len(b))
	}
	v := func(i int) int64 { return int64(binary.BigEndian.Uint64(b[8*i:])) }
	return Tally{int(v(0)), v(1), v(2), v(3)}, nil
}

// GoLive runs goLiveAndClose on the open session and returns how long the engine took.
func (w *Writer) GoLive() (time.Duration, error) {
	b, err := w.do("goLive", 'G', nil)
	if err != nil {
		return 0, err
	}
	ns, err := u64(b)
	return time.Duration(ns), err
}

// Count is a collection's entity count in the open session.
func (w *Writer) Count(entityType string) (int, error) {
	b, err := w.do("count "+entityType, 'N', []byte(entityType))
	if err != nil {
		return 0, err
	}
	n, err := u64(b)
	return int(n), err
}

// Close closes the engine (its storage flushed and closed, as a server's stop does) and
// waits for the JVM to exit; after grace it is stopped like a server.
func (w *Writer) Close(grace time.Duration) error {
	done := make(chan error, 1)
	go func() {
		_, err := w.call('Q', nil)
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(grace):
		err = fmt.Errorf("embedded writer: no goodbye within %s", grace)
	}
	serr := w.Stop(grace) // waits for the exit our goodbye asked for
	w.closePipes()
	if err != nil && errors.Is(err, ErrWriterGone) && !w.Running() {
		err = nil // it had already exited: Stop's account is the one that matters
	}
	return errors.Join(err, serr)
}
