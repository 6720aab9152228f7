package evita

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// These peers are hand-written HTTP/2 servers, because the faults are ones a real
// evitaDB (Armeria) cannot be made to show on demand: a malformed gRPC answer, an
// invalid SETTINGS value, a GOAWAY before the call was taken. Each must end the call
// with an error (never a panic or a spin), and only a broken stream may break the
// connection. TestLeanConnectionOnRealServer covers the ordinary protocol.

// peer accepts connections, reads each one's preface and then answers each call (its
// headers and request data) with answer, which writes frames through fr; call counts
// the calls of all connections.
func peer(t *testing.T, answer func(fr *http2.Framer, enc func(...string) []byte, stream uint32, call int)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var mu sync.Mutex
	calls := 0
	serve := func(conn net.Conn) {
		defer conn.Close()
		br := bufio.NewReader(conn)
		if _, err := io.ReadFull(br, make([]byte, len(http2.ClientPreface))); err != nil {
			return
		}
		fr := http2.NewFramer(conn, br)
		fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
		var hb bytes.Buffer
		he := hpack.NewEncoder(&hb)
		enc := func(kv ...string) []byte {
			hb.Reset()
			for i := 0; i+1 < len(kv); i += 2 {
				_ = he.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
			}
			return append([]byte(nil), hb.Bytes()...)
		}
		_ = fr.WriteSettings()
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				return
			}
			if d, ok := f.(*http2.DataFrame); ok && d.StreamEnded() {
				mu.Lock()
				call := calls
				calls++
				mu.Unlock()
				answer(fr, enc, d.StreamID, call)
			}
		}
	}
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go serve(conn)
		}
	}()
	return l.Addr().String()
}

func okHeaders(enc func(...string) []byte) []byte {
	return enc(":status", "200", "content-type", "application/grpc")
}

func dialPeer(t *testing.T, addr string) *leanConn {
	t.Helper()
	c, err := dialLean(addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestLeanConnectionAgainstOddPeers(t *testing.T) {
	hdr := leanHeaders("peer", "/x.Y/Z")
	t.Run("malformed answer, then a good one on the same connection", func(t *testing.T) {
		addr := peer(t, func(fr *http2.Framer, enc func(...string) []byte, id uint32, call int) {
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: okHeaders(enc), EndHeaders: true})
			if call == 0 {
				_ = fr.WriteData(id, false, []byte{0, 0, 0, 0, 0, 9}) // says 0 bytes, one follows
			} else {
				_ = fr.WriteData(id, false, []byte{0, 0, 0, 0, 2, 7, 7})
			}
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: enc("grpc-status", "0"), EndHeaders: true, EndStream: true})
		})
		c := dialPeer(t, addr)
		var buf []byte
		_, err := c.call(context.Background(), hdr, []byte("q"), &buf)
		if status.Code(err) != codes.Internal || c.broken != nil {
			t.Fatalf("malformed answer: %v (broken %v)", err, c.broken)
		}
		got, err := c.call(context.Background(), hdr, []byte("q"), &buf)
		if err != nil || !bytes.Equal(got, []byte{7, 7}) {
			t.Fatalf("next call: %v %v", got, err)
		}
	})
	t.Run("trailers-only error keeps the connection", func(t *testing.T) {
		addr := peer(t, func(fr *http2.Framer, enc func(...string) []byte, id uint32, call int) {
			if call == 0 {
				_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, EndHeaders: true, EndStream: true,
					BlockFragment: enc(":status", "200", "content-type", "application/grpc", "grpc-status", "5", "grpc-message", "no%20such%20entity")})
				return
			}
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: okHeaders(enc), EndHeaders: true})
			_ = fr.WriteData(id, false, []byte{0, 0, 0, 0, 0})
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: enc("grpc-status", "0"), EndHeaders: true, EndStream: true})
		})
		c := dialPeer(t, addr)
		_, err := c.call(context.Background(), hdr, nil, nil)
		if st, _ := status.FromError(err); st.Code() != codes.NotFound || st.Message() != "no such entity" || c.broken != nil {
			t.Fatalf("trailers-only: %v", err)
		}
		if _, err := c.call(context.Background(), hdr, nil, nil); err != nil {
			t.Fatalf("next call: %v", err)
		}
	})
	t.Run("invalid SETTINGS is an error, not a spin", func(t *testing.T) {
		// a peer whose only SETTINGS are invalid (max frame size 0)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
			br := bufio.NewReader(conn)
			_, _ = io.ReadFull(br, make([]byte, len(http2.ClientPreface)))
			fr := http2.NewFramer(conn, br)
			fr.AllowIllegalWrites = true
			_ = fr.WriteSettings(http2.Setting{ID: http2.SettingMaxFrameSize, Val: 0})
			_, _ = io.Copy(io.Discard, br)
		}()
		c := dialPeer(t, l.Addr().String())
		done := make(chan error, 1)
		go func() { _, err := c.call(context.Background(), hdr, make([]byte, 100_000), nil); done <- err }()
		select {
		case err := <-done:
			if err == nil || c.broken == nil {
				t.Fatalf("invalid max frame size: %v", err)
			}
		case <-time.After(4 * time.Second):
			t.Fatal("the call did not end on an invalid SETTINGS")
		}
	})
	t.Run("GOAWAY before the call was taken marks it untaken", func(t *testing.T) {
		addr := peer(t, func(fr *http2.Framer, _ func(...string) []byte, id uint32, _ int) {
			_ = fr.WriteGoAway(id-1, http2.ErrCodeNo, nil) // the streams before this one only
		})
		c := dialPeer(t, addr)
		_, err := c.call(context.Background(), hdr, nil, nil)
		if err == nil || !c.untaken || !strings.Contains(err.Error(), "GOAWAY") {
			t.Fatalf("GOAWAY: %v (untaken %v)", err, c.untaken)
		}
		if _, err := c.call(context.Background(), hdr, nil, nil); !errors.Is(err, c.broken) {
			t.Fatalf("a given-up connection: %v", err)
		}
	})
}

// A call the server proved it did not take (GOAWAY naming only earlier streams) is sent
// once more, on a new connection; a second refusal is the call's error.
func TestLeanCallRetriesAnUntakenCall(t *testing.T) {
	for _, refusals := range []int{1, 2} {
		addr := peer(t, func(fr *http2.Framer, enc func(...string) []byte, id uint32, call int) {
			if call < refusals {
				_ = fr.WriteGoAway(id-1, http2.ErrCodeNo, nil)
				return
			}
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: okHeaders(enc), EndHeaders: true})
			_ = fr.WriteData(id, false, []byte{0, 0, 0, 0, 1, 42})
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: enc("grpc-status", "0"), EndHeaders: true, EndStream: true})
		})
		s := &Session{c: &Client{Addr: addr, callTimeout: 5 * time.Second, plaintext: true}, ID: "s"}
		var buf []byte
		got, err := s.leanCall(context.Background(), "/x.Y/Z", []byte("q"), &buf)
		switch {
		case refusals == 1 && (err != nil || !bytes.Equal(got, []byte{42})):
			t.Fatalf("one refusal: %v %v", got, err)
		case refusals == 2 && (err == nil || status.Code(err) != codes.Unavailable):
			t.Fatalf("two refusals: %v", err)
		}
		if s.lean != nil {
			s.lean.Close()
		}
	}
}
