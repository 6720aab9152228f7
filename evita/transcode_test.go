package evita_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/evita"
	"github.com/warmstat/warmstat/evita/pb"
	"github.com/warmstat/warmstat/internal/evitatest"
	"github.com/warmstat/warmstat/seed"
	"google.golang.org/protobuf/proto"
)

// The wire-level Transcoder must give exactly the upsert the message-level mapping it
// replaced gives (decode, build messages), on every entity of the test fixture and on
// the seeded production-shaped catalog (every collection, reflected references
// skipped, prices, localized data): the decoded requests are proto.Equal, and the
// bytes are those of a deterministic marshal of the message-level upsert.
func TestTranscoderMatchesMessageMapping(t *testing.T) {
	check := func(t *testing.T, e *pb.GrpcSealedEntity, plan evita.CopyPlan) {
		t.Helper()
		in, err := proto.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		tc := evita.Transcoder{Plan: plan}
		got, id, err := tc.Upsert([]byte("keep"), in) // appends to what dst holds
		if err != nil {
			t.Fatalf("%s %d: %v", e.GetEntityType(), e.GetPrimaryKey(), err)
		}
		if !bytes.HasPrefix(got, []byte("keep")) || string(id.Type) != e.GetEntityType() || id.PrimaryKey != e.GetPrimaryKey() {
			t.Fatalf("%s %d: dst prefix lost or wrong id %v", e.GetEntityType(), e.GetPrimaryKey(), id)
		}
		got = got[4:]
		var dec pb.GrpcSealedEntity // the oracle reads what went over the wire, as before
		if err := proto.Unmarshal(in, &dec); err != nil {
			t.Fatal(err)
		}
		want := &pb.GrpcUpsertEntityRequest{EntityMutation: &pb.GrpcEntityMutation{Mutation: &pb.GrpcEntityMutation_EntityUpsertMutation{
			EntityUpsertMutation: evita.BuildUpsertMessages(&dec, plan)}}}
		var gotReq pb.GrpcUpsertEntityRequest
		if err := proto.Unmarshal(got, &gotReq); err != nil {
			t.Fatalf("%s %d: the transcoded request does not parse: %v", e.GetEntityType(), e.GetPrimaryKey(), err)
		}
		if !proto.Equal(&gotReq, want) {
			t.Fatalf("%s %d: transcoded upsert differs\n got %v\nwant %v", e.GetEntityType(), e.GetPrimaryKey(), &gotReq, want)
		}
		wantBytes, err := proto.MarshalOptions{Deterministic: true}.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, wantBytes) {
			t.Fatalf("%s %d: same upsert, other bytes (%d vs %d)", e.GetEntityType(), e.GetPrimaryKey(), len(got), len(wantBytes))
		}
	}
	t.Run("fixture", func(t *testing.T) {
		_, schemas := evitatest.FixtureSchema()
		byName := map[string]*pb.GrpcEntitySchema{}
		for _, s := range schemas {
			byName[s.GetName()] = s
		}
		for _, e := range evitatest.FixtureEntities() {
			sch := byName[e.GetEntityType()]
			check(t, e, evita.CopyPlan{Reflected: evita.ReflectedNames(sch), WithPrices: sch.GetWithPrice()})
			check(t, e, evita.CopyPlan{}) // everything copied, prices left out
		}
	})
	t.Run("seeded", func(t *testing.T) {
		p := seed.DefaultProfile()
		_, schemas := seed.Schema(p)
		byName := map[string]*pb.GrpcEntitySchema{}
		for _, s := range schemas {
			byName[s.GetName()] = s
		}
		g := seed.NewGenerator(p, 0.002, 7)
		n := 0
		for _, col := range p.Collections {
			sch := byName[col.Name]
			plan := evita.CopyPlan{Reflected: evita.ReflectedNames(sch), WithPrices: sch.GetWithPrice()}
			for i := 0; i < g.Count(col.Name); i++ {
				check(t, g.Entity(col, i), plan)
				n++
			}
		}
		if n < 500 {
			t.Fatalf("only %d seeded entities checked", n)
		}
	})
}

// A damaged entity is an error naming what could not be read, never a panic or a
// silently partial upsert.
func TestTranscoderRejectsDamagedEntities(t *testing.T) {
	e := evitatest.FixtureEntities()[0]
	in, err := proto.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var tc evita.Transcoder
	for cut := 1; cut < len(in); cut++ {
		// every truncation either fails or (cut at a field boundary) still parses
		out, _, err := tc.Upsert(nil, in[:cut])
		if err == nil {
			var req pb.GrpcUpsertEntityRequest
			if perr := proto.Unmarshal(out, &req); perr != nil {
				t.Fatalf("cut at %d: no error, but the request does not parse: %v", cut, perr)
			}
		}
	}
	_, _, err = tc.Upsert(nil, append(append([]byte{}, in...), 0x6a, 0x05, 0x01)) // field 13 claims 5 bytes, 1 follows
	if err == nil || !strings.Contains(err.Error(), "field 13") {
		t.Fatalf("a truncated reference: %v", err)
	}
}
