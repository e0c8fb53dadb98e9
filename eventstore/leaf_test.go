package eventstore_test

import (
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

// AppendMetadataJSON writes exactly what encoding/json writes for Metadata:
// the bytes `arr events export` hands an auditor.
func TestMetadataJSONIsEncodingJSON(t *testing.T) {
	cases := []struct {
		name string
		md   eventstore.Metadata
	}{
		{"empty", eventstore.Metadata{}},
		{"all fields", eventstore.Metadata{CorrelationID: "c", CausationID: "d", Actor: "key:1", RequestID: "r"}},
		{"some fields", eventstore.Metadata{Actor: "a", RequestID: "r"}},
		{"escapes", eventstore.Metadata{CorrelationID: "\"q\" \\ <b> & \t\n\r\b\f \x01\x1f \x7f", Actor: "\u2028\u2029 é 😀"}},
		{"invalid UTF-8", eventstore.Metadata{Actor: "a\xffb\xc3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want, _ := json.Marshal(tc.md)
			if got := eventstore.AppendMetadataJSON(nil, tc.md); string(got) != string(want) {
				t.Fatalf("got %s, want %s", got, want)
			}
		})
	}
	alphabet := []rune("ab\"\\<>&\t\n\r\b\f\x00\x01\x1f\x7f é\u2028\u2029😀")
	r := rand.New(rand.NewPCG(1, 2))
	str := func() string {
		n := r.IntN(12)
		out := make([]rune, n)
		for i := range out {
			out[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(out)
	}
	for range 2000 {
		md := eventstore.Metadata{CorrelationID: str(), CausationID: str(), Actor: str(), RequestID: str()}
		want, _ := json.Marshal(md)
		if got := eventstore.AppendMetadataJSON(nil, md); string(got) != string(want) {
			t.Fatalf("%+v: got %s, want %s", md, got, want)
		}
	}
}

// The hasher agrees with the verifier's reference encoding.
func TestLeafHasherIsVerifierLeaf(t *testing.T) {
	e := eventstore.Event{
		ID: uuid.MustParse("0190a3b4-c5d6-7e8f-9a0b-1c2d3e4f5061"), StreamID: "key-7", Type: "KeyIssued", SchemaVersion: 1,
		Data: json.RawMessage(`{"a":1}`), Metadata: eventstore.Metadata{Actor: "op <x>"},
		RecordedAt: time.UnixMicro(1700000000123456).UTC(), StreamVersion: 3, Position: 42,
	}
	var h eventstore.LeafHasher
	got, err := h.HashEvent(e)
	if err != nil {
		t.Fatal(err)
	}
	want, err := verifier.EventLeafHash(eventstore.Leaf(e))
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("LeafHasher %x, verifier %x", got, want)
	}
	// Metadata {} is what the documented example hashes.
	e.Metadata = eventstore.Metadata{}
	got, _ = h.HashEvent(e)
	if hexGot := hex.EncodeToString(got[:]); hexGot != "a93a9a69e9817565c66a163ab9551f38fefa4b83683cb5ce63257b124fee5ba2" {
		t.Fatalf("the example event of docs/transparency.md hashes to %s", hexGot)
	}
}
