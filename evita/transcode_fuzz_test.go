package evita

import (
	"bytes"
	"strings"
	"testing"

	"github.com/warmstat/warmstat/evita/pb"
	"google.golang.org/protobuf/proto"
)

// FuzzTranscoder: any bytes give an error or a request that parses, never a panic; and
// an entity as the server encodes it (canonical: decoded and encoded again) gives the
// very bytes of the message-level mapping.
func FuzzTranscoder(f *testing.F) {
	for _, plan := range []CopyPlan{{}, {WithPrices: true, Reflected: map[string]bool{"productsInCategory": true}}} {
		b, err := proto.Marshal(richEntity())
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, plan.WithPrices)
	}
	f.Fuzz(func(t *testing.T, in []byte, prices bool) {
		plan := CopyPlan{WithPrices: prices, Reflected: map[string]bool{"productsInCategory": true}}
		tc := Transcoder{Plan: plan}
		out, _, err := tc.Upsert(nil, in)
		if err == nil {
			var req pb.GrpcUpsertEntityRequest
			// strings are copied as they came: invalid UTF-8 in is invalid UTF-8 out
			if err := proto.Unmarshal(out, &req); err != nil && !strings.Contains(err.Error(), "UTF-8") {
				t.Fatalf("no error, but the request does not parse: %v", err)
			}
		}
		var e pb.GrpcSealedEntity
		if proto.Unmarshal(in, &e) != nil {
			return
		}
		canon, err := proto.MarshalOptions{Deterministic: true}.Marshal(&e)
		if err != nil {
			return
		}
		got, _, err := tc.Upsert(nil, canon)
		if err != nil {
			t.Fatalf("a canonical entity is refused: %v", err)
		}
		want, err := proto.MarshalOptions{Deterministic: true}.Marshal(&pb.GrpcUpsertEntityRequest{EntityMutation: &pb.GrpcEntityMutation{
			Mutation: &pb.GrpcEntityMutation_EntityUpsertMutation{EntityUpsertMutation: buildUpsert(&e, plan)}}})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("transcoded %x\nmessage-level %x", got, want)
		}
	})
}
