package evita

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// leanConn carries the load's fetches and upserts: one unary gRPC call at a time over
// its own plaintext HTTP/2 connection, written and read by the calling goroutine.
//
// Why not grpc-go: per unary call it hands the request to a writer goroutine and the
// response over from a reader goroutine, encodes the headers anew and keeps per-call
// state; on a 2-core machine beside two JVMs that was most of warmstat's own CPU
// during a load (about 100 µs per upsert, 7 % of the load's wall-clock at scale 0.05).
// Here a call is one write (headers, pre-encoded once per session, and the message)
// and, usually, one read: what it costs is the wire, and the timer around the call
// measures the server, not a goroutine hand-off.
//
// It speaks just enough HTTP/2 for that (RFC 9113): the connection preface and
// settings, flow control in both directions, PING and SETTINGS acknowledgements,
// GOAWAY and RST_STREAM; the call's outcome is the grpc-status trailer. A protocol or
// connection failure gives the connection up (Session.leanCall opens a new one for the
// next call, and sends a call again only when the server proved it did not take it);
// a gRPC error from the server leaves it open.
type leanConn struct {
	conn    *netTransport
	bw      *bufio.Writer
	fr      *http2.Framer
	timeout time.Duration

	nextID     uint32
	peerFrame  uint32 // the server's SETTINGS_MAX_FRAME_SIZE
	peerWindow int64  // the server's SETTINGS_INITIAL_WINDOW_SIZE (each new stream's send window)
	connWindow int64  // what may still be sent on the connection
	unacked    uint32 // DATA received on the connection and not yet given back
	goAway     bool
	broken     error
	// untaken: the last call failed before the server took its stream (a GOAWAY that
	// names a lower last stream, or the connection already going away): it was not
	// processed (RFC 9113 6.8), so it may be sent again on a new connection
	untaken    bool
	lastUsed   time.Time
	buf        []byte // the gRPC-framed message being sent
	status     callStatus
	resp       *[]byte // where the answer goes (nil: dropped)
	streamRead uint32  // answer bytes not yet given back to the stream's window
}

const (
	leanStreamWindow = 16 << 20 // each stream's receive window, announced in SETTINGS
	leanConnWindow   = 1 << 30  // the connection's receive window, raised at once
)

// dialLean opens the connection and sends the preface and settings; the server's
// settings are read with the first call's frames.
func dialLean(addr string, timeout time.Duration) (*leanConn, error) {
	conn, err := dialLeanTransport(addr, timeout)
	if err != nil {
		return nil, err
	}
	c := &leanConn{conn: conn, bw: bufio.NewWriterSize(conn, 64<<10), timeout: timeout, nextID: 1,
		peerFrame: 16384, peerWindow: 65535, connWindow: 65535, lastUsed: time.Now()}
	c.fr = http2.NewFramer(c.bw, bufio.NewReaderSize(conn, 64<<10))
	c.fr.SetReuseFrames()
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	c.fr.MaxHeaderListSize = 1 << 20
	if _, err := c.bw.WriteString(http2.ClientPreface); err != nil {
		conn.Close()
		return nil, err
	}
	err = c.fr.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: leanStreamWindow})
	if err == nil {
		err = c.fr.WriteWindowUpdate(0, leanConnWindow-65535)
	}
	if err == nil {
		err = c.bw.Flush()
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	return c, nil
}

func (c *leanConn) Close() error { return c.conn.Close() }

// leanHeaders is the header block of a call: literal fields without indexing, so the
// same bytes serve every call and the server's decoder table is never touched.
func leanHeaders(authority, path string, extra ...string) []byte {
	var b []byte
	field := func(name, value string) {
		b = append(b, 0) // literal without indexing, new name
		b = hpackString(b, name)
		b = hpackString(b, value)
	}
	field(":method", "POST")
	field(":scheme", "http")
	field(":path", path)
	field(":authority", authority)
	field("content-type", "application/grpc")
	field("te", "trailers")
	for i := 0; i+1 < len(extra); i += 2 {
		field(extra[i], extra[i+1])
	}
	return b
}

// hpackString is a string literal without Huffman coding: a 7-bit-prefix length.
func hpackString(b []byte, s string) []byte {
	n := uint64(len(s))
	if n < 127 {
		b = append(b, byte(n))
	} else {
		b = append(b, 127)
		for n -= 127; n >= 128; n >>= 7 {
			b = append(b, byte(n&0x7f|0x80))
		}
		b = append(b, byte(n))
	}
	return append(b, s...)
}

// call makes one unary call: the header block, then msg as one gRPC message; the
// answer (gRPC-framed) is put in *resp, its capacity reused, and its message returned
// as a sub-slice of it; it is dropped when resp is nil.
// A non-OK grpc-status comes back as a status error, as grpc-go gives it.
//
// ctx may end the call (a fetch, on an interrupt): the read or write under way is
// then interrupted and the connection given up. An upsert passes context.Background(): never cut in flight (WARM_UP has no
// rollback), bounded only by the call timeout.
func (c *leanConn) call(ctx context.Context, headers, msg []byte, resp *[]byte) ([]byte, error) {
	if c.broken != nil {
		return nil, c.broken
	}
	c.untaken = false
	defer func() { c.lastUsed = time.Now() }()
	if err := c.conn.arm(); err != nil {
		return nil, c.breakWith(err)
	}
	if ctx.Done() != nil {
		interrupted := make(chan struct{})
		stop := context.AfterFunc(ctx, func() { c.conn.interrupt(); close(interrupted) })
		defer func() {
			if !stop() { // under way: let it finish before the socket can be closed
				<-interrupted
				if c.broken == nil { // too late for this call, but the socket is interrupted
					c.breakWith(ctx.Err())
				}
			}
		}()
	}
	c.resp = resp
	if resp != nil {
		*resp = (*resp)[:0]
	}
	err := c.do(headers, msg)
	var answer []byte
	if err == nil && resp != nil {
		if answer, err = unframe(*resp); err != nil {
			err = status.Error(codes.Internal, err.Error()) // a whole exchange: the connection stays
		}
	}
	c.resp = nil
	if err != nil {
		if ctx.Err() != nil {
			c.breakWith(err)
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		var st interface{ GRPCStatus() *status.Status }
		if !errors.As(err, &st) {
			return nil, c.breakWith(err)
		}
		return nil, err // the server's answer: the connection stays
	}
	return answer, nil
}

// breakWith gives the connection up: every later call fails as Unavailable.
func (c *leanConn) breakWith(err error) error {
	c.broken = status.Error(codes.Unavailable, "lean connection: "+err.Error())
	c.conn.Close()
	return c.broken
}

func (c *leanConn) do(headers, msg []byte) error {
	if c.goAway {
		c.untaken = true
		return errors.New("the server sent GOAWAY")
	}
	if c.nextID > 1<<31-1 {
		return errors.New("stream ids exhausted")
	}
	id := c.nextID
	c.nextID += 2
	c.status = callStatus{}
	c.streamRead = 0
	if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: headers, EndHeaders: true}); err != nil {
		return err
	}
	// the gRPC message: compressed flag, length, bytes
	c.buf = append(c.buf[:0], 0, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(c.buf[1:], uint32(len(msg)))
	c.buf = append(c.buf, msg...)
	streamWindow := c.peerWindow
	for out := c.buf; len(out) > 0; {
		for min(c.connWindow, streamWindow) <= 0 {
			if err := c.bw.Flush(); err != nil {
				return err
			}
			if err := c.readFrame(id, &streamWindow); err != nil {
				return err
			}
			if c.status.done { // the server answered before the request ended: end ours
				if err := c.fr.WriteRSTStream(id, http2.ErrCodeCancel); err != nil {
					return err
				}
				if err := c.bw.Flush(); err != nil {
					return err
				}
				return c.status.err()
			}
		}
		chunk := out[:min(int64(len(out)), int64(c.peerFrame), c.connWindow, streamWindow)]
		out = out[len(chunk):]
		if err := c.fr.WriteData(id, len(out) == 0, chunk); err != nil {
			return err
		}
		c.connWindow -= int64(len(chunk))
		streamWindow -= int64(len(chunk))
	}
	if err := c.bw.Flush(); err != nil {
		return err
	}
	for !c.status.done {
		if err := c.readFrame(id, &streamWindow); err != nil {
			return err
		}
	}
	return c.status.err()
}

// callStatus is what the server said of the current call.
type callStatus struct {
	done    bool
	headers bool // the response headers came (the next header block is the trailers)
	code    codes.Code
	msg     string
	httpErr string
}

func (s callStatus) err() error {
	if s.httpErr != "" {
		return status.Error(codes.Internal, s.httpErr)
	}
	if s.code != codes.OK {
		return status.Error(s.code, s.msg)
	}
	return nil
}

// readFrame reads and handles one frame; frames of the call's stream update c.status.
func (c *leanConn) readFrame(id uint32, streamWindow *int64) error {
	f, err := c.fr.ReadFrame()
	if err != nil {
		return err
	}
	switch f := f.(type) {
	case *http2.SettingsFrame:
		if f.IsAck() {
			return nil
		}
		err := f.ForeachSetting(func(s http2.Setting) error {
			switch s.ID {
			case http2.SettingMaxFrameSize:
				c.peerFrame = s.Val
			case http2.SettingInitialWindowSize:
				// applies to open streams too (RFC 9113 6.9.2)
				*streamWindow += int64(s.Val) - c.peerWindow
				c.peerWindow = int64(s.Val)
			}
			return s.Valid() // e.g. a max frame size below 16,384 is a protocol error
		})
		if err != nil {
			return err
		}
		if err := c.fr.WriteSettingsAck(); err != nil {
			return err
		}
		return c.bw.Flush()
	case *http2.PingFrame:
		if f.IsAck() {
			return nil
		}
		if err := c.fr.WritePing(true, f.Data); err != nil {
			return err
		}
		return c.bw.Flush()
	case *http2.WindowUpdateFrame:
		if f.StreamID == 0 {
			c.connWindow += int64(f.Increment)
		} else if f.StreamID == id {
			*streamWindow += int64(f.Increment)
		}
	case *http2.GoAwayFrame:
		c.goAway = true
		if f.LastStreamID < id {
			c.untaken = true
			return fmt.Errorf("the server sent GOAWAY (%v) before the call was taken", f.ErrCode)
		}
	case *http2.RSTStreamFrame:
		if f.StreamID == id {
			c.status.done = true
			c.status.code, c.status.msg = codes.Unavailable, "the server reset the stream: "+f.ErrCode.String()
			if f.ErrCode == http2.ErrCodeCancel {
				c.status.code = codes.Canceled
			}
		}
	case *http2.DataFrame:
		// received data is given back when half a window is used: the connection's
		// (1 GB) over many calls, the stream's (16 MB) within a large answer; the
		// frame's length counts (padding uses window too)
		n := f.Header().Length
		c.unacked += n
		if c.unacked > leanConnWindow/2 {
			if err := c.windowUpdate(0, &c.unacked); err != nil {
				return err
			}
		}
		if f.StreamID == id {
			if c.resp != nil {
				if err := c.collect(f.Data()); err != nil {
					return err
				}
			}
			if c.streamRead += n; c.streamRead > leanStreamWindow/2 && !f.StreamEnded() {
				if err := c.windowUpdate(id, &c.streamRead); err != nil {
					return err
				}
			}
		}
		if f.StreamID == id && f.StreamEnded() {
			c.status.done = true
			if c.status.httpErr == "" {
				c.status.httpErr = "the response ended without a grpc-status"
			}
		}
	case *http2.MetaHeadersFrame:
		if f.StreamID != id {
			return nil
		}
		c.headers(f)
	}
	return nil
}

// maxAnswer bounds an answer's message (a 1,000-entity batch of full Products is tens
// of MB): a larger length prefix is a broken stream, not an allocation to attempt.
const maxAnswer = 1 << 30

// collect appends answer bytes; once the message's length prefix is in, the buffer is
// grown to the whole message at once (growing by append copies a large answer many
// times over: that was a quarter of the loader's CPU).
func (c *leanConn) collect(data []byte) error {
	r := *c.resp
	before := len(r)
	r = append(r, data...)
	if before < 5 && len(r) >= 5 {
		n := int(binary.BigEndian.Uint32(r[1:5]))
		if n > maxAnswer {
			return fmt.Errorf("the answer's message claims %d bytes", n)
		}
		if more := 5 + n - len(r); more > 0 {
			r = slices.Grow(r, more)
		}
	}
	*c.resp = r
	return nil
}

func (c *leanConn) windowUpdate(stream uint32, n *uint32) error {
	if err := c.fr.WriteWindowUpdate(stream, *n); err != nil {
		return err
	}
	*n = 0
	return c.bw.Flush()
}

// unframe is the answer's one gRPC message: after an uncompressed flag and the length.
func unframe(r []byte) ([]byte, error) {
	if len(r) < 5 {
		return nil, fmt.Errorf("the answer has %d bytes, not a gRPC message", len(r))
	}
	if r[0] != 0 {
		return nil, errors.New("the answer is compressed, which was not asked for")
	}
	if n := binary.BigEndian.Uint32(r[1:5]); int(n) != len(r)-5 {
		return nil, fmt.Errorf("the answer's message says %d bytes, %d came", n, len(r)-5)
	}
	return r[5:], nil
}

// headers reads a header block of the call: the response headers (":status" 200) or
// the trailers (grpc-status, grpc-message); a block that ends the stream is the
// trailers, also when it is the only one ("trailers-only").
func (c *leanConn) headers(f *http2.MetaHeadersFrame) {
	if !c.status.headers {
		c.status.headers = true
		if st := f.PseudoValue("status"); st != "200" {
			c.status.httpErr = "HTTP status " + st + " from the server"
		}
	}
	if !f.StreamEnded() {
		return
	}
	c.status.done = true
	gs, has := "", false
	for _, h := range f.RegularFields() {
		switch h.Name {
		case "grpc-status":
			gs, has = h.Value, true
		case "grpc-message":
			c.status.msg = decodeGrpcMessage(h.Value)
		}
	}
	if !has {
		if c.status.httpErr == "" {
			c.status.httpErr = "the response ended without a grpc-status"
		}
		return
	}
	c.status.httpErr = "" // a gRPC status says more than the HTTP one
	n, err := strconv.Atoi(gs)
	if err != nil {
		c.status.code, c.status.msg = codes.Internal, fmt.Sprintf("malformed grpc-status %q (%s)", gs, c.status.msg)
		return
	}
	c.status.code = codes.Code(n)
}

// decodeGrpcMessage undoes the percent-encoding of grpc-message.
func decodeGrpcMessage(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}
