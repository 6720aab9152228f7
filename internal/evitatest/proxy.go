package evitatest

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// Proxy is a transparent gRPC proxy in front of a real evitaDB server that injects faults
// the real server cannot be made to show on demand (a call failing at one exact moment,
// a reply naming a state the server would not be in, a call that hangs). Everything
// else passes through unchanged, byte for byte, with its metadata.
type Proxy struct {
	Addr string
	// Fault, when set, is asked for every call (full method name, e.g.
	// "/io.evitadb.externalApi.grpc.generated.EvitaService/GetCatalogState"). A non-nil
	// error fails the call with it; a non-nil reply is sent instead of forwarding;
	// both nil forwards. It may block (a hung call) until ctx ends.
	Fault func(ctx context.Context, method string) (reply proto.Message, err error)
	mu    sync.Mutex
}

// StartProxy starts a proxy to the server at backend, stopped when the test ends.
func StartProxy(t testing.TB, backend string) *Proxy {
	t.Helper()
	conn, err := grpc.NewClient(backend, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20), grpc.MaxCallSendMsgSize(256<<20)))
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: l.Addr().String()}
	srv := grpc.NewServer(grpc.ForceServerCodec(rawCodec{}), grpc.MaxRecvMsgSize(256<<20), grpc.MaxSendMsgSize(256<<20),
		grpc.UnknownServiceHandler(func(_ any, ss grpc.ServerStream) error { return p.forward(conn, ss) }))
	go srv.Serve(l)
	t.Cleanup(func() { srv.Stop(); conn.Close() })
	return p
}

// SetFault replaces the fault function while calls are in flight.
func (p *Proxy) SetFault(f func(ctx context.Context, method string) (proto.Message, error)) {
	p.mu.Lock()
	p.Fault = f
	p.mu.Unlock()
}

// Short is a method's short name ("GetCatalogState").
func Short(method string) string { return method[strings.LastIndexByte(method, '/')+1:] }

func (p *Proxy) forward(conn *grpc.ClientConn, ss grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(ss)
	ctx := ss.Context()
	p.mu.Lock()
	fault := p.Fault
	p.mu.Unlock()
	if fault != nil {
		reply, err := fault(ctx, method)
		if err != nil {
			return err
		}
		if reply != nil {
			var req []byte
			if err := ss.RecvMsg(&req); err != nil {
				return err
			}
			b, err := proto.Marshal(reply)
			if err != nil {
				return err
			}
			return ss.SendMsg(&b)
		}
	}
	md, _ := metadata.FromIncomingContext(ctx)
	cctx, cancel := context.WithCancel(metadata.NewOutgoingContext(ctx, md.Copy()))
	defer cancel()
	cs, err := conn.NewStream(cctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method, grpc.ForceCodec(rawCodec{}))
	if err != nil {
		return err
	}
	go func() { // client -> server
		for {
			var m []byte
			if err := ss.RecvMsg(&m); err != nil {
				cs.CloseSend()
				return
			}
			if err := cs.SendMsg(&m); err != nil {
				return
			}
		}
	}()
	if h, err := cs.Header(); err == nil {
		ss.SendHeader(h)
	}
	for { // server -> client
		var m []byte
		if err := cs.RecvMsg(&m); err != nil {
			ss.SetTrailer(cs.Trailer())
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := ss.SendMsg(&m); err != nil {
			return err
		}
	}
}

// rawCodec passes messages through as bytes.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*(v.(*[]byte)) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }
