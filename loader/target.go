package loader

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/warmstat/warmstat/embedded"
	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evita/pb"
	"github.com/warmstat/warmstat/runfmt"
)

// target is the writer under test as the load uses it: a remote server over gRPC
// (Config.Target) or warmstat's embedded writer (Config.Embedded), which receives the
// very same request bytes.
type target interface {
	createCatalog(ctx context.Context, name string, replace bool, plan evita.ReplicationPlan) error
	open(ctx context.Context, catalog string, write bool) (targetSession, error)
	deleteCatalog(ctx context.Context, name string) error
}

type targetSession interface {
	// upsert applies one request and returns how long it took: the remote call as this
	// process timed it (its other figures unknown), or the engine's own clocks in
	// embedded mode
	upsert(req []byte, entityType string) (embedded.Cost, error)
	updateEntitySchema(ctx context.Context, m *pb.GrpcModifyEntitySchemaMutation) error
	goLive(ctx context.Context, stall, confirm time.Duration, progress func(int32)) evita.GoLiveOutcome
	count(ctx context.Context, entityType string) (int, error)
	close(ctx context.Context) error
}

func (c Config) target() target {
	if c.Embedded != nil {
		return embeddedTarget{c.Embedded}
	}
	return remoteTarget{c.Target, c.Now}
}

type remoteTarget struct {
	c   *evita.Client
	now func() time.Time
}

func (t remoteTarget) createCatalog(ctx context.Context, name string, replace bool, plan evita.ReplicationPlan) error {
	return t.c.CreateCatalog(ctx, name, replace, plan)
}

func (t remoteTarget) deleteCatalog(ctx context.Context, name string) error {
	_, err := t.c.DeleteCatalogIfExists(ctx, name)
	return err
}

func (t remoteTarget) open(ctx context.Context, catalog string, write bool) (targetSession, error) {
	s, err := t.c.Open(ctx, catalog, write)
	if err != nil {
		return nil, err
	}
	return remoteSession{s, t.now}, nil
}

type remoteSession struct {
	s   *evita.Session
	now func() time.Time
}

func (s remoteSession) upsert(req []byte, ty string) (embedded.Cost, error) {
	begin := s.now()
	err := s.s.UpsertUncancelled(req, ty) // never cut in flight: WARM_UP has no rollback
	return embedded.Cost{WallNs: s.now().Sub(begin).Nanoseconds(), CPUNs: runfmt.Unknown, AllocBytes: runfmt.Unknown, WaitNs: runfmt.Unknown}, err
}

func (s remoteSession) updateEntitySchema(ctx context.Context, m *pb.GrpcModifyEntitySchemaMutation) error {
	return s.s.UpdateEntitySchema(ctx, m)
}

func (s remoteSession) goLive(ctx context.Context, stall, confirm time.Duration, progress func(int32)) evita.GoLiveOutcome {
	return s.s.GoLive(ctx, stall, confirm, progress)
}

func (s remoteSession) count(ctx context.Context, ty string) (int, error) { return s.s.Count(ctx, ty) }
func (s remoteSession) close(ctx context.Context) error                   { return s.s.Close(ctx) }

// embeddedTarget replicates the schema as a remote server's session receives it: the
// same walk (evita.ReplicationPlan.Apply), message for message.
type embeddedTarget struct{ w *embedded.Writer }

func (t embeddedTarget) createCatalog(_ context.Context, name string, replace bool, plan evita.ReplicationPlan) error {
	state, err := t.w.CatalogState(name)
	if err != nil {
		return err
	}
	if state != "" && !replace {
		return fmt.Errorf("catalog %q already exists in the embedded writer: %w", name, evita.ErrCatalogExists)
	} else if state != "" {
		if err := t.w.DeleteCatalog(name); err != nil {
			return err
		}
	}
	if err := t.w.DefineCatalog(name); err != nil {
		return err
	}
	if err := t.w.Open(name, true); err != nil {
		return err
	}
	if err := t.replicate(plan); err != nil {
		t.w.CloseSession()
		return fmt.Errorf("schema replication: %w", err)
	}
	return t.w.CloseSession()
}

func (t embeddedTarget) replicate(p evita.ReplicationPlan) error {
	return p.Apply(func(ms []*pb.GrpcLocalCatalogSchemaMutation) error {
		req, err := proto.Marshal(&pb.GrpcUpdateCatalogSchemaRequest{SchemaMutations: ms})
		if err != nil {
			return err
		}
		return t.w.UpdateCatalogSchema(req)
	}, t.w.DefineEntitySchema, func(m *pb.GrpcModifyEntitySchemaMutation) error {
		return (embeddedSession{w: t.w}).updateEntitySchema(context.Background(), m)
	})
}

func (t embeddedTarget) deleteCatalog(_ context.Context, name string) error {
	return t.w.DeleteCatalog(name)
}

func (t embeddedTarget) open(_ context.Context, catalog string, write bool) (targetSession, error) {
	if err := t.w.Open(catalog, write); err != nil {
		return nil, err
	}
	return embeddedSession{t.w, catalog}, nil
}

type embeddedSession struct {
	w       *embedded.Writer
	catalog string
}

func (s embeddedSession) upsert(req []byte, _ string) (embedded.Cost, error) { return s.w.Upsert(req) }

func (s embeddedSession) updateEntitySchema(_ context.Context, m *pb.GrpcModifyEntitySchemaMutation) error {
	if len(m.GetEntitySchemaMutations()) == 0 {
		return nil
	}
	req, err := proto.Marshal(&pb.GrpcUpdateEntitySchemaRequest{SchemaMutation: m})
	if err != nil {
		return err
	}
	return s.w.UpdateEntitySchema(m.GetEntityType(), req)
}

// goLive is the engine's goLiveAndClose, then the catalog's state read back: the
// outcome means what a remote one means (stall and confirmation do not apply: the
// call returns when the engine is done).
func (s embeddedSession) goLive(context.Context, time.Duration, time.Duration, func(int32)) evita.GoLiveOutcome {
	var o evita.GoLiveOutcome
	o.Took, o.Err = s.w.GoLive()
	name, err := s.w.CatalogState(s.catalog)
	switch {
	case err != nil:
		o.StateErr = err
	case name == "":
		o.StateErr = fmt.Errorf("the engine no longer knows catalog %s", s.catalog)
	default:
		o.State, o.StateKnown = evita.CatalogStateByName(name)
		if !o.StateKnown {
			o.StateErr = fmt.Errorf("the engine names an unknown catalog state %q", name)
		}
	}
	return o
}

func (s embeddedSession) count(_ context.Context, ty string) (int, error) { return s.w.Count(ty) }
func (s embeddedSession) close(context.Context) error                     { return s.w.CloseSession() }
