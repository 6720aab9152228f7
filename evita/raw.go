package evita

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/warmstat/warmstat/evita/pb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// The load's two hot calls travel as bytes: the fetched entities are read and the
// upserts written by the Transcoder, so grpc-go is given encoded messages (rawCodec)
// instead of Go messages to marshal and unmarshal.

const (
	methodQueryList    = "/io.evitadb.externalApi.grpc.generated.EvitaSessionService/QueryList"
	methodUpsertEntity = "/io.evitadb.externalApi.grpc.generated.EvitaSessionService/UpsertEntity"
)

// rawCodec passes encoded protobuf through: a request is a *[]byte sent as it is, a
// response is copied into a *[]byte (reusing its capacity), or dropped into discard.
// Its name is "proto", so the call is an ordinary gRPC protobuf call on the wire.
type rawCodec struct{}

type discard struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	b, ok := v.(*[]byte)
	if !ok {
		return nil, fmt.Errorf("evita: raw codec cannot send %T", v)
	}
	return mem.BufferSlice{mem.SliceBuffer(*b)}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	switch p := v.(type) {
	case *discard:
		return nil
	case *[]byte:
		*p = slices.Grow((*p)[:0], data.Len()) // at once: growing by append copies many times
		for _, b := range data {
			*p = append(*p, b.ReadOnlyData()...)
		}
		return nil
	}
	return fmt.Errorf("evita: raw codec cannot read into %T", v)
}

var rawCall = []grpc.CallOption{grpc.ForceCodecV2(rawCodec{})}

// FetchRaw is Fetch for the load: the GrpcQueryListResponse's bytes are kept in *buf
// (reused from call to call) and its sealed entities returned as sub-slices of it, to
// be read by a Transcoder; they are valid until the next FetchRaw with the same buf.
// On a plaintext server it goes over the session's lean connection, the answer read
// from the socket straight into *buf. Not safe for concurrent use on one session.
func (s *Session) FetchRaw(ctx context.Context, schema *pb.GrpcEntitySchema, pks []int32, buf *[]byte) ([][]byte, error) {
	req, err := proto.Marshal(fetchQuery(schema, pks))
	if err != nil {
		return nil, err
	}
	var answer []byte
	if s.c.plaintext {
		if answer, err = s.leanCall(ctx, methodQueryList, req, buf); err != nil {
			return nil, wrap("QueryList(fetch "+schema.GetName()+")", err)
		}
	} else {
		ctx, cancel := s.timed(ctx)
		defer cancel()
		if err := s.c.conn.Invoke(ctx, methodQueryList, &req, buf, rawCall...); err != nil {
			return nil, wrap("QueryList(fetch "+schema.GetName()+")", err)
		}
		answer = *buf
	}
	ents, err := SealedEntities(answer)
	if err != nil {
		return nil, fmt.Errorf("QueryList(fetch %s): the response does not parse: %w", schema.GetName(), err)
	}
	return ents, nil
}

// UpsertUncancelled sends one encoded GrpcUpsertEntityRequest (the Transcoder's) for
// the measured load: it cannot be cancelled (WARM_UP has no rollback, an upsert in
// flight is never cut; the call timeout still bounds it) and, on a plaintext server,
// travels over the session's own lean connection (lean.go), which costs no allocation
// per call. The request's bytes are not kept. Not safe for concurrent use.
func (s *Session) UpsertUncancelled(req []byte, entityType string) error {
	if s.c.plaintext { // the lean connection (lean.go); TLS goes through grpc-go
		if _, err := s.leanCall(context.Background(), methodUpsertEntity, req, nil); err != nil {
			return wrap("UpsertEntity "+entityType, err)
		}
		return nil
	}
	if err := s.c.conn.Invoke(s.leased(), methodUpsertEntity, &req, &discard{}, rawCall...); err != nil {
		return wrap("UpsertEntity "+entityType, err)
	}
	return nil
}

// Upsert writes the entity e describes (UpsertRequest's mapping: MUST_NOT_EXIST, its
// own primary key) under ctx: for entities made as messages (the seed generator, tests).
func (s *Session) Upsert(ctx context.Context, e *pb.GrpcSealedEntity, plan CopyPlan) error {
	req, err := UpsertRequest(e, plan)
	if err != nil {
		return err
	}
	entityType := e.GetEntityType()
	ctx, cancel := s.timed(ctx)
	defer cancel()
	if err := s.c.conn.Invoke(ctx, methodUpsertEntity, &req, &discard{}, rawCall...); err != nil {
		return wrap("UpsertEntity "+entityType, err)
	}
	return nil
}

// UpsertRequest is the encoded upsert that recreates e (the Transcoder's mapping, for
// entities made as messages: the seed generator, tests).
func UpsertRequest(e *pb.GrpcSealedEntity, plan CopyPlan) ([]byte, error) {
	b, err := proto.Marshal(e)
	if err != nil {
		return nil, err
	}
	t := Transcoder{Plan: plan}
	req, _, err := t.Upsert(nil, b)
	return req, err
}

// leanIdle is how long a lean connection may sit unused before a call opens a new one:
// a server may close an idle HTTP/2 connection (evitaDB's default idle timeout is
// 2 s), and its PINGs are only answered while a call reads. A batch of upserts leaves
// the source's connection idle for seconds; opening one costs a loopback connect.
const leanIdle = time.Second

// leanCall makes a call over the session's lean connection, opened by the first call
// and again after a failure, a GOAWAY (a server frozen for a minute sends one when it
// wakes) or when it sat idle; the header blocks (the session's id,
// the call timeout as grpc-timeout) are made once per method. A call the server
// proved it did not take (GOAWAY before its stream) is sent once more on a new
// connection.
func (s *Session) leanCall(ctx context.Context, method string, req []byte, resp *[]byte) ([]byte, error) {
	h, ok := s.leanHeaders[method]
	if !ok {
		if s.leanHeaders == nil {
			s.leanHeaders = map[string][]byte{}
		}
		h = leanHeaders(s.c.Addr, method, "grpc-timeout", grpcTimeout(s.c.callTimeout),
			"sessionid", s.ID, "clientversion", s.c.Version)
		s.leanHeaders[method] = h
	}
	for attempt := 0; ; attempt++ {
		if s.lean != nil && (s.lean.broken != nil || s.lean.goAway || time.Since(s.lean.lastUsed) > leanIdle) {
			s.closeLean()
		}
		if s.lean == nil {
			l, err := dialLean(s.c.Addr, s.c.callTimeout)
			if err != nil {
				return nil, status.Error(codes.Unavailable, "connecting: "+err.Error())
			}
			s.lean = l
		}
		answer, err := s.lean.call(ctx, h, req, resp)
		if err != nil && s.lean.untaken && attempt == 0 {
			continue
		}
		return answer, err
	}
}

// grpcTimeout is a duration as a grpc-timeout header value (at most 8 digits).
func grpcTimeout(d time.Duration) string {
	if ms := d.Milliseconds(); ms < 1e8 {
		return strconv.FormatInt(max(ms, 1), 10) + "m"
	}
	return strconv.FormatInt(min(int64(d/time.Second), 1e8-1), 10) + "S"
}
