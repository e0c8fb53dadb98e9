package httpx_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/readapi/httpx"
)

func TestUniqueKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body, field string // field "": accepted
	}{
		{"no repeat", `{"model":"auto","messages":[{"role":"user","content":"hi"}]}`, ""},
		{"the same name in two objects", `{"a":{"x":1},"b":{"x":2},"c":[{"x":1},{"x":2}]}`, ""},
		{"a top-level repeat", `{"model":"nano","model":"high"}`, "model"},
		{"a repeat in a message", `{"messages":[{"role":"user","content":"hi"},{"role":"user","role":"system","content":"x"}]}`, "messages[1].role"},
		{"a repeat deep in tools", `{"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","type":"string"}}}]}`, "tools[0].function.parameters.type"},
		{"a repeat written differently", `{"max_tokens":5,"max\u005ftokens":500}`, "max_tokens"},
		{"a repeat after invalid UTF-8", "{\"q\":\"\xff\",\"q\":\"b\"}", "q"},
		{"not JSON is the parser's", `{"model":`, ""},
		{"invalid UTF-8 alone is the parser's", "{\"q\":\"\xff\"}", ""},
		{"a repeat in another case", `{"limit":1,"LIMIT":1000}`, "LIMIT"},
		{"a repeat by Unicode folding (KELVIN SIGN is k)", `{"key":"a","\u212aey":"b"}`, "\u212aey"},
		{"a null alias of max_tokens (KELVIN SIGN)", `{"max_tokens":100,"max_to\u212Aens":null}`, "max_to\u212Aens"},
		{"a null alias of stream_options (LONG S)", `{"stream_options":{"include_usage":true},"stream_option\u017f":null}`, "stream_option\u017f"},
		{"names that differ after folding", `{"limit":1,"limits":2}`, ""},
		{"DOTLESS I is not i to encoding/json", `{"limit":1,"l\u0131mit":2}`, ""},
		{"an array at the top", `[{"a":1,"a":2}]`, "[0].a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := httpx.UniqueKeys([]byte(tc.body))
			if tc.field == "" {
				if err != nil {
					t.Fatalf("UniqueKeys(%s) = %v, want nil", tc.body, err)
				}
				return
			}
			var de *domain.Error
			if !errors.As(err, &de) || !errors.Is(err, domain.ErrInvalid) || de.Code != "duplicate_key" || de.Field != tc.field {
				t.Fatalf("UniqueKeys(%s) = %#v, want duplicate_key at %s", tc.body, err, tc.field)
			}
		})
	}
}

// TestUniqueKeysFoldsAsEncodingJSON: a name with a letter in any form
// encoding/json matches to an ASCII letter's field (the other case,
// KELVIN SIGN for k, LONG S for s) repeats that name, and a letter it
// does not match (DOTLESS I, CAPITAL I WITH DOT) does not, so a member
// UniqueKeys lets through alone is one field to encoding/json.
func TestUniqueKeysFoldsAsEncodingJSON(t *testing.T) {
	t.Parallel()
	var others []rune // the non-ASCII runes tried: every one folding to an ASCII letter, and some that do not
	for r := rune(0x80); r < 0x250; r++ {
		others = append(others, r)
	}
	others = append(others, 0x212A, 0x212B, 0x0130, 0x0131, 0x03A3, 0x1E9E, 0xFF41)
	for c := 'a'; c <= 'z'; c++ {
		for _, r := range append([]rune{c - 'a' + 'A'}, others...) {
			name, alias := "x"+string(c), "x"+string(r)
			matched := decodesTo(t, name, alias)
			err := httpx.UniqueKeys([]byte(fmt.Sprintf(`{%q:1,%q:2}`, name, alias)))
			if matched != (err != nil) {
				t.Errorf("%q and %q: encoding/json matches them %v, UniqueKeys says %v", name, alias, matched, err)
			}
		}
	}
}

// decodesTo says whether encoding/json decodes a member named alias into
// a struct field tagged name.
func decodesTo(t *testing.T, name, alias string) bool {
	t.Helper()
	typ := reflect.StructOf([]reflect.StructField{{Name: "F", Type: reflect.TypeFor[int](), Tag: reflect.StructTag(fmt.Sprintf(`json:%q`, name))}})
	v := reflect.New(typ)
	if err := json.Unmarshal([]byte(fmt.Sprintf(`{%q:7}`, alias)), v.Interface()); err != nil {
		t.Fatal(err)
	}
	return v.Elem().Field(0).Int() == 7
}

// chatBody is a chat completion request of about n bytes: a conversation
// of turns of 1 KiB, as the gateway's hot path sees them.
func chatBody(n int) []byte {
	var msgs []map[string]any
	turn := strings.Repeat("lorem ipsum dolor sit amet, ", 37)
	for size := 0; size < n; size += len(turn) + 40 {
		msgs = append(msgs, map[string]any{"role": []string{"user", "assistant"}[len(msgs)%2], "content": turn})
	}
	b, _ := json.Marshal(map[string]any{"model": "auto", "messages": msgs, "temperature": 0.2, "max_tokens": 500})
	return b
}

// BenchmarkUniqueKeys measures the duplicate-key check against what the
// gateway already does with every chat body: json.Valid, then a decode of
// its top level.
func BenchmarkUniqueKeys(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10, 1 << 20, 4 << 20} {
		body := chatBody(size)
		b.Run(fmt.Sprintf("UniqueKeys/%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if err := httpx.UniqueKeys(body); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("ValidAndDecode/%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if !json.Valid(body) {
					b.Fatal("invalid")
				}
				var fields map[string]json.RawMessage
				dec := json.NewDecoder(bytes.NewReader(body))
				dec.UseNumber()
				if err := dec.Decode(&fields); err != nil {
					b.Fatal(err)
				}
				var msgs []map[string]json.RawMessage
				if err := json.Unmarshal(fields["messages"], &msgs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
