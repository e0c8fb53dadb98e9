package verifier_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

func testEvent() verifier.Event {
	return verifier.Event{
		Position:      42,
		ID:            [16]byte(dh("0190a3b4c5d67e8f9a0b1c2d3e4f5061")),
		StreamID:      "key-7",
		StreamVersion: 3,
		Type:          "KeyIssued",
		SchemaVersion: 1,
		Data:          []byte(`{"a":1}`),
		Metadata:      []byte(`{}`),
		RecordedAt:    1700000000123456,
	}
}

// TestLeafDataLayout spells out the encoding of one event field by field,
// as the package comment documents it.
func TestLeafDataLayout(t *testing.T) {
	want := strings.Join([]string{
		"01",                               // format version
		"000000000000002a",                 // position 42
		"0190a3b4c5d67e8f9a0b1c2d3e4f5061", // event id
		"00000005" + hex.EncodeToString([]byte("key-7")),
		"0000000000000003", // stream version
		"00000009" + hex.EncodeToString([]byte("KeyIssued")),
		"00000001", // schema version
		"00000007" + hex.EncodeToString([]byte(`{"a":1}`)),
		"00000002" + hex.EncodeToString([]byte(`{}`)),
		"00060a2418202240", // recorded at, 1700000000123456 µs
	}, "")
	got, err := verifier.LeafData(testEvent())
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(got) != want {
		t.Fatalf("LeafData =\n%x\nwant\n%s", got, want)
	}
	h, err := verifier.EventLeafHash(testEvent())
	if err != nil || h != verifier.LeafHash(got) {
		t.Fatalf("EventLeafHash = %x, %v; want LeafHash(LeafData)", h, err)
	}
}

func TestLeafDataNegativeTime(t *testing.T) {
	e := testEvent()
	e.RecordedAt = -1
	got, err := verifier.LeafData(e)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(got, dh("ffffffffffffffff")) {
		t.Fatalf("recorded at -1 encodes as %x, want two's complement", got[len(got)-8:])
	}
}

// TestLeafDataUnambiguous checks that changes which keep the concatenated
// text the same still change the leaf: the length prefixes separate fields.
func TestLeafDataUnambiguous(t *testing.T) {
	base := testEvent()
	tests := []struct {
		name string
		edit func(*verifier.Event)
	}{
		{"byte moved from stream to type", func(e *verifier.Event) { e.StreamID, e.Type = "key-", "7KeyIssued" }},
		{"byte moved from data to metadata", func(e *verifier.Event) { e.Data, e.Metadata = []byte(`{"a":1`), []byte(`}{}`) }},
		{"data and metadata swapped", func(e *verifier.Event) { e.Data, e.Metadata = e.Metadata, e.Data }},
		{"position", func(e *verifier.Event) { e.Position++ }},
		{"id", func(e *verifier.Event) { e.ID[15] ^= 1 }},
		{"stream version", func(e *verifier.Event) { e.StreamVersion++ }},
		{"schema version", func(e *verifier.Event) { e.SchemaVersion++ }},
		{"recorded at", func(e *verifier.Event) { e.RecordedAt++ }},
		{"data whitespace", func(e *verifier.Event) { e.Data = []byte(`{"a": 1}`) }},
		{"empty metadata", func(e *verifier.Event) { e.Metadata = nil }},
	}
	want, _ := verifier.EventLeafHash(base)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := base
			tc.edit(&e)
			got, err := verifier.EventLeafHash(e)
			if err != nil {
				t.Fatal(err)
			}
			if got == want {
				t.Fatalf("leaf hash unchanged")
			}
		})
	}
}

func TestLeafDataRejects(t *testing.T) {
	for _, v := range []int{-1, math.MaxUint32 + 1} {
		e := testEvent()
		e.SchemaVersion = v
		if _, err := verifier.LeafData(e); !errors.Is(err, verifier.ErrInvalid) {
			t.Errorf("schema version %d: err = %v, want ErrInvalid", v, err)
		}
	}
}
