package eventstore_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/eventstore"
)

func TestStorableJSON(t *testing.T) {
	tests := []struct {
		name string
		data string
		ok   bool
	}{
		{"plain object", `{"a":"b"}`, true},
		{"escaped quote and backslash", `{"a":"x\"\\u0000"}`, true},
		{"escaped control other than NUL", `{"a":"\u0001\n"}`, true},
		{"surrogate pair", `{"a":"\ud83d\ude00"}`, true},
		{"NUL escape", `{"a":"bad\u0000name"}`, false},
		{"NUL escape in a key", `{"\u0000":1}`, false},
		{"upper-case hex NUL", `{"a":"\U0000"}`, true}, // \U is no escape (a syntax error the parser finds)
		{"lone high surrogate", `{"a":"\ud83d"}`, false},
		{"lone low surrogate", `{"a":"\ude00x"}`, false},
		{"high surrogate then a non-surrogate", `{"a":"\ud83d\u0041"}`, false},
		{"invalid UTF-8", "{\"a\":\"\xff\"}", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := eventstore.StorableJSON([]byte(tc.data))
			if (err == nil) != tc.ok {
				t.Fatalf("StorableJSON(%s) = %v, want ok=%v", tc.data, err, tc.ok)
			}
		})
	}
}

func TestValidateRefusesUnstorableEvents(t *testing.T) {
	data, _ := json.Marshal(map[string]string{"name": "bad\x00name"})
	tests := []struct {
		name string
		ev   eventstore.NewEvent
	}{
		{"NUL in data", eventstore.NewEvent{ID: uuid.New(), Type: "KeyIssued", Data: data}},
		{"NUL in the actor", eventstore.NewEvent{ID: uuid.New(), Type: "KeyIssued", Data: []byte(`{}`), Metadata: eventstore.Metadata{Actor: "a\x00"}}},
		{"invalid UTF-8 in the request id", eventstore.NewEvent{ID: uuid.New(), Type: "KeyIssued", Data: []byte(`{}`), Metadata: eventstore.Metadata{RequestID: "\xff"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, parse := range []bool{true, false} {
				err := eventstore.Append{StreamID: "s", Events: []eventstore.NewEvent{tc.ev}}.Validate(parse)
				if !errors.Is(err, eventstore.ErrNotStorable) || !errors.Is(err, domain.ErrInvalid) {
					t.Fatalf("Validate(parse=%v) = %v, want ErrNotStorable", parse, err)
				}
			}
		})
	}
	ok := eventstore.Append{StreamID: "s", Events: []eventstore.NewEvent{{ID: uuid.New(), Type: "T", Data: []byte(`{"a":"ü\n"}`)}}}
	if err := ok.Validate(true); err != nil {
		t.Fatalf("Validate of a storable event = %v", err)
	}
}

func FuzzStorableJSON(f *testing.F) {
	f.Add("plain")
	f.Add("bad\x00name")
	f.Add("\xff")
	f.Fuzz(func(t *testing.T, s string) {
		data, err := json.Marshal(map[string]string{"v": s})
		if err != nil {
			t.Fatal(err)
		}
		// encoding/json writes NUL as \u0000 and replaces invalid UTF-8,
		// so the check refuses exactly the strings that hold NUL.
		got := eventstore.StorableJSON(data) == nil
		want := true
		for i := 0; i < len(s); i++ {
			if s[i] == 0 {
				want = false
			}
		}
		if got != want {
			t.Fatalf("StorableJSON(%s) ok=%v, want %v", data, got, want)
		}
	})
}
