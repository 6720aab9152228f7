package evita

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/warmstat/warmstat/evita/pb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

// Options configure a connection.
type Options struct {
	// CACertPEM, when set, switches to TLS trusting this certificate (the server's own
	// self-signed one, served at /system/server.crt). Plaintext otherwise.
	CACertPEM []byte
	// CallTimeout bounds every call except goLive (default 2 minutes). A call without a
	// deadline would get the server's 2 s default and be cut mid-upsert.
	CallTimeout time.Duration
}

// Client is a connection to one evitaDB server.
type Client struct {
	Addr        string
	Version     string // the server's version, sent back as clientversion
	conn        *grpc.ClientConn
	evita       pb.EvitaServiceClient
	mgmt        pb.EvitaManagementServiceClient
	sess        pb.EvitaSessionServiceClient
	callTimeout time.Duration
	plaintext   bool // UpsertUncancelled may use a lean connection
}

// Error is a failed call: the method, the gRPC status and the server's message.
type Error struct {
	Method string
	Code   codes.Code
	Msg    string
	// cause is the context's error when the call ended because its context did
	// (errors.Is(err, context.Canceled) then holds: an interrupt, not a failure).
	cause error
}

func (e *Error) Error() string { return fmt.Sprintf("evitaDB %s: %s: %s", e.Method, e.Code, e.Msg) }
func (e *Error) Unwrap() error { return e.cause }

// IsUnavailable reports whether err means the server could not be reached (gone,
// killed, not listening) rather than that it refused the request.
func IsUnavailable(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.Code == codes.Unavailable || e.Code == codes.DeadlineExceeded)
}

func wrap(method string, err error) error {
	if err == nil {
		return nil
	}
	e := &Error{Method: method, Code: codes.Unknown, Msg: err.Error()}
	if st, ok := status.FromError(err); ok {
		e.Code, e.Msg = st.Code(), st.Message()
	} else if errors.Is(err, context.DeadlineExceeded) {
		e.Code = codes.DeadlineExceeded
	}
	// grpc-go reports a call ended by its context as a status; keep the context's error
	switch {
	case errors.Is(err, context.Canceled) || e.Code == codes.Canceled:
		e.cause = context.Canceled
	case errors.Is(err, context.DeadlineExceeded) || e.Code == codes.DeadlineExceeded:
		e.cause = context.DeadlineExceeded
	}
	return e
}

// handshakeTimeout bounds Dial's first call when the per-call deadline is shorter.
const handshakeTimeout = 30 * time.Second

// Dial connects and reads the server's version (the first real call).
func Dial(ctx context.Context, addr string, o Options) (*Client, error) {
	creds := insecure.NewCredentials()
	if len(o.CACertPEM) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(o.CACertPEM) {
			return nil, errors.New("evita: the CA certificate is not PEM")
		}
		creds = credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12})
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds),
		// pings find a dead connection, but a live server that is slow to answer
		// (a long GC pause) must not be cut off by them: a generous ACK timeout; calls
		// have deadlines, and a server warmstat started is watched
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 30 * time.Second, Timeout: 5 * time.Minute, PermitWithoutStream: true}),
		// a 1,000-entity full-content batch exceeds grpc-go's 4 MB default
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20), grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		return nil, err
	}
	c := &Client{Addr: addr, conn: conn, evita: pb.NewEvitaServiceClient(conn), mgmt: pb.NewEvitaManagementServiceClient(conn),
		sess: pb.NewEvitaSessionServiceClient(conn), callTimeout: o.CallTimeout, plaintext: len(o.CACertPEM) == 0}
	if c.callTimeout == 0 {
		c.callTimeout = 2 * time.Minute
	}
	// The first call also establishes the connection, which on a busy machine takes
	// longer than a short per-call deadline meant for the calls that follow; the
	// caller's context still bounds it (a readiness probe passes a short one).
	hctx, cancel := context.WithTimeout(ctx, max(c.callTimeout, handshakeTimeout))
	defer cancel()
	st, err := c.mgmt.ServerStatus(hctx, &emptypb.Empty{})
	if err != nil {
		conn.Close()
		return nil, wrap("ServerStatus", err)
	}
	c.Version = st.GetVersion()
	return c, nil
}

// Probe is a readiness check for a starting server: a real ServerStatus call (Dial),
// then the server's own readiness flag.
func Probe(ctx context.Context, addr string) error {
	c, err := Dial(ctx, addr, Options{CallTimeout: 2 * time.Second})
	if err != nil {
		return err
	}
	defer c.Close()
	if ok, err := c.Ready(ctx); err != nil || !ok {
		return fmt.Errorf("%s is not ready yet (%v)", addr, err)
	}
	return nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

func (c *Client) timed(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.callTimeout)
}

// ServerStatus is the server's status (version, readiness).
func (c *Client) ServerStatus(ctx context.Context) (*pb.GrpcEvitaServerStatusResponse, error) {
	ctx, cancel := c.timed(ctx)
	defer cancel()
	r, err := c.mgmt.ServerStatus(ctx, &emptypb.Empty{})
	return r, wrap("ServerStatus", err)
}

// Ready reports the server's own readiness flag.
func (c *Client) Ready(ctx context.Context) (bool, error) {
	ctx, cancel := c.timed(ctx)
	defer cancel()
	r, err := c.evita.IsReady(ctx, &emptypb.Empty{})
	return r.GetReady(), wrap("IsReady", err)
}

// ErrCatalogExists: a catalog of that name exists and replacing it was not asked for.
var ErrCatalogExists = errors.New("it is dropped only when replacing it is asked for")

// CreateCatalog creates the catalog afresh in WARM_UP and replicates plan's schema into
// it. An existing catalog of that name is dropped only when replace is set (else
// ErrCatalogExists).
func (c *Client) CreateCatalog(ctx context.Context, name string, replace bool, plan ReplicationPlan) error {
	if _, known, err := c.CatalogState(ctx, name); err != nil {
		return err
	} else if known && !replace {
		return fmt.Errorf("catalog %q already exists on %s: %w", name, c.Addr, ErrCatalogExists)
	} else if known {
		if _, err := c.DeleteCatalogIfExists(ctx, name); err != nil {
			return err
		}
	}
	if err := c.DefineCatalog(ctx, name); err != nil {
		return err
	}
	s, err := c.Open(ctx, name, true)
	if err != nil {
		return err
	}
	if err := s.Replicate(ctx, plan); err != nil {
		s.Close(context.WithoutCancel(ctx))
		return fmt.Errorf("schema replication: %w", err)
	}
	return s.Close(ctx)
}

// DefineCatalog creates a catalog (in WARMING_UP); DeleteCatalogIfExists removes one.
func (c *Client) DefineCatalog(ctx context.Context, name string) error {
	ctx, cancel := c.timed(ctx)
	defer cancel()
	_, err := c.evita.DefineCatalog(ctx, &pb.GrpcDefineCatalogRequest{CatalogName: name})
	return wrap("DefineCatalog", err)
}

func (c *Client) DeleteCatalogIfExists(ctx context.Context, name string) (bool, error) {
	ctx, cancel := c.timed(ctx)
	defer cancel()
	r, err := c.evita.DeleteCatalogIfExists(ctx, &pb.GrpcDeleteCatalogIfExistsRequest{CatalogName: name})
	return r.GetSuccess(), wrap("DeleteCatalogIfExists", err)
}

// CatalogState is a catalog's state (CatalogWarmingUp, CatalogAlive, ...); ok false
// when the server does not know the catalog.
func (c *Client) CatalogState(ctx context.Context, name string) (int32, bool, error) {
	ctx, cancel := c.timed(ctx)
	defer cancel()
	r, err := c.evita.GetCatalogState(ctx, &pb.GrpcGetCatalogStateRequest{CatalogName: name})
	if err != nil {
		return 0, false, wrap("GetCatalogState", err)
	}
	return r.GetCatalogState(), r.CatalogState != nil, nil
}

// Session is an open session on one catalog.
type Session struct {
	c       *Client
	ID      string
	Catalog string
	State   int32
	lease   lease // for UpsertUncancelled
	// the lean connection of UpsertUncancelled and FetchRaw, opened by the first call
	lean        *leanConn
	leanHeaders map[string][]byte
}

// lease is a context with the session's metadata and a deadline, shared by calls
// until less than half of the call timeout remains: a call sent with it gets at least
// half the timeout, and no call pays for a context, a timer or metadata of its own.
type lease struct {
	ctx     context.Context
	cancel  context.CancelFunc
	renewAt time.Time
}

func (s *Session) leased() context.Context {
	if now := time.Now(); s.lease.ctx == nil || now.After(s.lease.renewAt) {
		if s.lease.cancel != nil {
			s.lease.cancel()
		}
		md := metadata.Pairs("sessionid", s.ID, "clientversion", s.c.Version)
		s.lease.ctx, s.lease.cancel = context.WithTimeout(metadata.NewOutgoingContext(context.Background(), md), s.c.callTimeout)
		s.lease.renewAt = now.Add(s.c.callTimeout / 2)
	}
	return s.lease.ctx
}

// Open starts a read-only or read-write session.
func (c *Client) Open(ctx context.Context, catalog string, readWrite bool) (*Session, error) {
	tctx, cancel := c.timed(ctx)
	defer cancel()
	req := &pb.GrpcEvitaSessionRequest{CatalogName: catalog}
	var r *pb.GrpcEvitaSessionResponse
	var err error
	if readWrite {
		r, err = c.evita.CreateReadWriteSession(tctx, req)
	} else {
		r, err = c.evita.CreateReadOnlySession(tctx, req)
	}
	if err != nil {
		return nil, wrap("CreateSession", err)
	}
	return &Session{c: c, ID: r.GetSessionId(), Catalog: catalog, State: r.GetCatalogState()}, nil
}

// Resume attaches to a session opened elsewhere (sessions live on the server and are
// found by their id), so that it can be driven through this client's settings.
func (c *Client) Resume(id, catalog string) *Session {
	return &Session{c: c, ID: id, Catalog: catalog}
}

// ctx adds the session id and the client version (which makes the server send
// associated data in its lossless structured form) to an outgoing call.
func (s *Session) ctx(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "sessionid", s.ID, "clientversion", s.c.Version)
}

func (s *Session) timed(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := s.c.timed(ctx)
	return s.ctx(ctx), cancel
}

// Close ends the session, waiting until its changes are visible (in WARM_UP this
// flushes the catalog to disk).
func (s *Session) Close(ctx context.Context) error {
	if s.lease.cancel != nil {
		s.lease.cancel()
	}
	s.closeLean()
	ctx, cancel := s.timed(ctx)
	defer cancel()
	_, err := s.c.sess.Close(ctx, &pb.GrpcCloseRequest{CommitBehaviour: WaitForChangesVisible, CatalogName: s.Catalog})
	return wrap("Close", err)
}

// CatalogSchema, EntityTypes and EntitySchema read the schema.
func (s *Session) CatalogSchema(ctx context.Context) (*pb.GrpcCatalogSchema, error) {
	ctx, cancel := s.timed(ctx)
	defer cancel()
	r, err := s.c.sess.GetCatalogSchema(ctx, &pb.GrpcGetCatalogSchemaRequest{})
	return r.GetCatalogSchema(), wrap("GetCatalogSchema", err)
}

func (s *Session) EntityTypes(ctx context.Context) ([]string, error) {
	ctx, cancel := s.timed(ctx)
	defer cancel()
	r, err := s.c.sess.GetAllEntityTypes(ctx, &emptypb.Empty{})
	return r.GetEntityTypes(), wrap("GetAllEntityTypes", err)
}

func (s *Session) EntitySchema(ctx context.Context, entityType string) (*pb.GrpcEntitySchema, error) {
	ctx, cancel := s.timed(ctx)
	defer cancel()
	r, err := s.c.sess.GetEntitySchema(ctx, &pb.GrpcEntitySchemaRequest{EntityType: entityType})
	if err == nil && r.GetEntitySchema() == nil {
		return nil, &Error{Method: "GetEntitySchema", Code: codes.NotFound, Msg: "no collection " + entityType}
	}
	return r.GetEntitySchema(), wrap("GetEntitySchema", err)
}

// Replicate applies a replication plan: global attributes, then entity bodies, plain
// references and reflected references, one UpdateEntitySchema per entity per pass.
func (s *Session) Replicate(ctx context.Context, p ReplicationPlan) error {
	return p.Apply(func(ms []*pb.GrpcLocalCatalogSchemaMutation) error {
		tctx, cancel := s.timed(ctx)
		defer cancel()
		_, err := s.c.sess.UpdateCatalogSchema(tctx, &pb.GrpcUpdateCatalogSchemaRequest{SchemaMutations: ms})
		return wrap("UpdateCatalogSchema", err)
	}, func(entityType string) error {
		tctx, cancel := s.timed(ctx)
		defer cancel()
		_, err := s.c.sess.DefineEntitySchema(tctx, &pb.GrpcDefineEntitySchemaRequest{EntityType: entityType})
		return wrap("DefineEntitySchema "+entityType, err)
	}, func(m *pb.GrpcModifyEntitySchemaMutation) error { return s.UpdateEntitySchema(ctx, m) })
}

// UpdateEntitySchema applies one entity's schema mutations.
func (s *Session) UpdateEntitySchema(ctx context.Context, m *pb.GrpcModifyEntitySchemaMutation) error {
	if len(m.GetEntitySchemaMutations()) == 0 {
		return nil
	}
	ctx, cancel := s.timed(ctx)
	defer cancel()
	_, err := s.c.sess.UpdateEntitySchema(ctx, &pb.GrpcUpdateEntitySchemaRequest{SchemaMutation: m})
	return wrap("UpdateEntitySchema "+m.GetEntityType(), err)
}

// Count is a collection's LIVE entity count.
func (s *Session) Count(ctx context.Context, entityType string) (int, error) {
	ctx, cancel := s.timed(ctx)
	defer cancel()
	r, err := s.c.sess.Query(ctx, CountQuery(entityType))
	return int(r.GetRecordPage().GetTotalRecordCount()), wrap("Query(count "+entityType+")", err)
}

// PrimaryKeys lists a collection's primary keys, ascending, in pages of 10,000.
func (s *Session) PrimaryKeys(ctx context.Context, entityType string, total int) ([]int32, error) {
	pks := make([]int32, 0, total)
	for page := int32(1); len(pks) < total; page++ {
		tctx, cancel := s.timed(ctx)
		r, err := s.c.sess.QueryList(tctx, PrimaryKeysQuery(entityType, page, 10000))
		cancel()
		if err != nil {
			return nil, wrap("QueryList(primary keys "+entityType+")", err)
		}
		if len(r.GetEntityReferences()) == 0 {
			break
		}
		for _, e := range r.GetEntityReferences() {
			pks = append(pks, e.GetPrimaryKey())
		}
	}
	return pks, nil
}

// Fetch reads entities by primary key with everything a copy needs.
func (s *Session) Fetch(ctx context.Context, schema *pb.GrpcEntitySchema, pks []int32) ([]*pb.GrpcSealedEntity, error) {
	ctx, cancel := s.timed(ctx)
	defer cancel()
	r, err := s.c.sess.QueryList(ctx, fetchQuery(schema, pks))
	return r.GetSealedEntities(), wrap("QueryList(fetch "+schema.GetName()+")", err)
}

// fetchQuery is the query Fetch and FetchRaw send.
func fetchQuery(schema *pb.GrpcEntitySchema, pks []int32) *pb.GrpcQueryRequest {
	var plain []string
	for _, n := range sortedKeys(schema.GetReferences()) {
		if schema.GetReferences()[n].GetReflectedReferenceName() == nil {
			plain = append(plain, n)
		}
	}
	hasReflected := len(plain) < len(schema.GetReferences())
	return FetchQuery(schema.GetName(), pks, plain, hasReflected, schema.GetWithPrice(), schema.GetWithHierarchy())
}

// CollectionSize is the stored entity count of a collection.
func (s *Session) CollectionSize(ctx context.Context, entityType string) (int, error) {
	ctx, cancel := s.timed(ctx)
	defer cancel()
	r, err := s.c.sess.GetEntityCollectionSize(ctx, &pb.GrpcEntityCollectionSizeRequest{EntityType: entityType})
	return int(r.GetSize()), wrap("GetEntityCollectionSize", err)
}

// GoLiveOutcome is what goLive achieved. One rule reads it (Alive): the catalog is
// live only when the call completed and the server then said ALIVE. A call that
// completed but whose result could not be read (StateKnown false) is not "ok".
type GoLiveOutcome struct {
	Err        error         // the goLive call itself failed (client side); nil when it completed
	Took       time.Duration // the call alone: to completion, or to failure
	State      int32         // the catalog's state afterwards, when StateKnown
	StateKnown bool
	StateErr   error // why the state could not be read
}

// Alive reports whether goLive completed and the catalog is ALIVE.
func (o GoLiveOutcome) Alive() bool { return o.Err == nil && o.StateKnown && o.State == CatalogAlive }

// Problem is nil when Alive; otherwise it says what went wrong.
func (o GoLiveOutcome) Problem() error {
	switch {
	case o.Alive():
		return nil
	case o.Err != nil:
		return o.Err
	case !o.StateKnown:
		return fmt.Errorf("goLive completed, but the catalog's state could not be read afterwards: %v", o.StateErr)
	}
	return fmt.Errorf("goLive completed, but the catalog is %s, not ALIVE", CatalogStateName(o.State))
}

// GoLive switches the WARM_UP catalog ALIVE and closes the session. The call has no
// short deadline (a production goLive takes 30 s and more): it is given up only when
// the server sends no progress for stall. Then the catalog's state is read, retried for
// up to confirm: after a failed call, to learn whether the server went ALIVE anyway;
// after a completed one, to prove it did.
func (s *Session) GoLive(ctx context.Context, stall, confirm time.Duration, progress func(pct int32)) GoLiveOutcome {
	s.closeLean() // goLive ends the session: its upserts are over
	// the deadline only bounds the call as a whole; a day outlasts any real goLive
	lctx, cancel := context.WithTimeout(s.ctx(ctx), 24*time.Hour)
	defer cancel()
	var o GoLiveOutcome
	begin := time.Now()
	stream, err := s.c.sess.GoLiveAndCloseWithProgress(lctx, &emptypb.Empty{})
	if err == nil {
		err = s.follow(stream, stall, cancel, progress)
	}
	o.Took = time.Since(begin)
	if err != nil {
		o.Err = wrap("GoLiveAndCloseWithProgress", err)
	}
	deadline := time.Now().Add(confirm)
	for {
		// an interrupted goLive still gets one look at the state: whether the server
		// completed it anyway is part of what happened
		sctx, scancel := ctx, context.CancelFunc(func() {})
		if ctx.Err() != nil {
			sctx, scancel = context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		}
		state, ok, serr := s.c.CatalogState(sctx, s.Catalog)
		scancel()
		switch {
		case serr != nil:
			o.StateErr = serr
		case !ok:
			o.StateErr = fmt.Errorf("the server reports no state for catalog %s", s.Catalog)
		default:
			o.State, o.StateKnown, o.StateErr = state, true, nil
			// after a completed call any settled state is the answer; after a failed
			// one, keep looking for a late ALIVE
			if (o.Err == nil && state != CatalogGoingAlive) || state == CatalogAlive {
				return o
			}
		}
		if !time.Now().Before(deadline) || ctx.Err() != nil {
			return o
		}
		select {
		case <-ctx.Done():
			return o
		case <-time.After(time.Second):
		}
	}
}

func (s *Session) follow(stream pb.EvitaSessionService_GoLiveAndCloseWithProgressClient, stall time.Duration, cancel context.CancelFunc, progress func(int32)) error {
	msgs := make(chan *pb.GrpcGoLiveAndCloseWithProgressResponse)
	errs := make(chan error, 1)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			m, err := stream.Recv()
			if err != nil {
				errs <- err
				return
			}
			select {
			case msgs <- m:
			case <-done: // the caller gave up; cancel() ends the stream
				return
			}
		}
	}()
	for {
		select {
		case m := <-msgs:
			if progress != nil {
				progress(m.GetProgressInPercent())
			}
		case err := <-errs:
			if err == io.EOF {
				return nil
			}
			return err
		case <-time.After(stall):
			cancel()
			return fmt.Errorf("no goLive progress for %s", stall)
		}
	}
}

// WaitSettled waits until the catalog has left its transitional states (a server that
// opens stored catalogs activates them in the background: BEING_ACTIVATED), and returns
// the settled state. progress, if set, is told the state every few seconds. A catalog
// still transitional at the deadline, or in a state that cannot be read from
// (CORRUPTED, INACTIVE, MISSING), is an error naming the state.
func (c *Client) WaitSettled(ctx context.Context, catalog string, deadline time.Duration, progress func(state string, waited time.Duration)) (int32, error) {
	begin := time.Now()
	last := begin
	for {
		state, ok, err := c.CatalogState(ctx, catalog)
		if err != nil {
			return 0, err
		}
		if !ok {
			return 0, fmt.Errorf("catalog %s: the server reports no state for it", catalog)
		}
		switch state {
		case CatalogAlive, CatalogWarmingUp:
			return state, nil
		case 3, 4, 10: // CORRUPTED, INACTIVE, MISSING
			return state, fmt.Errorf("catalog %s is %s: it cannot be read", catalog, CatalogStateName(state))
		}
		waited := time.Since(begin)
		if waited > deadline {
			return state, fmt.Errorf("catalog %s is still %s after %s", catalog, CatalogStateName(state), waited.Round(time.Second))
		}
		if progress != nil && time.Since(last) >= 5*time.Second {
			last = time.Now()
			progress(CatalogStateName(state), waited)
		}
		select {
		case <-ctx.Done():
			return state, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// closeLean closes the session's lean connection, if it has one.
func (s *Session) closeLean() {
	if s.lean != nil {
		s.lean.Close()
		s.lean = nil
	}
}
