package anthropic_test

import (
	"errors"
	"testing"

	"github.com/arr-dev/arr/domain/anthropic"
)

func TestReplyUsage(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply string
		want  anthropic.Usage
		err   error
	}{
		{"all counts", `{"type":"message","usage":{"input_tokens":3,"output_tokens":4,"cache_read_input_tokens":5,"cache_creation_input_tokens":6}}`,
			anthropic.Usage{InputTokens: 3, OutputTokens: 4, CacheReadInputTokens: 5, CacheCreationInputTokens: 6}, nil},
		{"null cache counts", `{"type":"message","usage":{"input_tokens":3,"output_tokens":4,"cache_read_input_tokens":null}}`,
			anthropic.Usage{InputTokens: 3, OutputTokens: 4}, nil},
		{"no usage", `{"type":"message"}`, anthropic.Usage{}, anthropic.ErrNoUsage},
		{"usage without counts", `{"type":"message","usage":{}}`, anthropic.Usage{}, anthropic.ErrNoUsage},
		{"no input_tokens", `{"type":"message","usage":{"output_tokens":500}}`, anthropic.Usage{}, anthropic.ErrNoUsage},
		{"null output_tokens", `{"type":"message","usage":{"input_tokens":3,"output_tokens":null}}`, anthropic.Usage{}, anthropic.ErrNoUsage},
		{"an error body", `{"type":"error","error":{"type":"api_error","message":"x"}}`, anthropic.Usage{}, anthropic.ErrNoUsage},
		{"not JSON", `{"type":`, anthropic.Usage{}, anthropic.ErrNoUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := anthropic.ReplyUsage([]byte(tc.reply))
			if got != tc.want || !errors.Is(err, tc.err) {
				t.Fatalf("%+v, %v", got, err)
			}
		})
	}
}

func TestAddEvent(t *testing.T) {
	var u anthropic.Usage
	for _, ev := range []struct{ name, data string }{
		{anthropic.EventMessageStart, `{"type":"message_start","message":{"usage":{"input_tokens":10,"output_tokens":1,"cache_read_input_tokens":20,"cache_creation_input_tokens":30}}}`},
		{anthropic.EventPing, `{"type":"ping"}`},
		{anthropic.EventContentBlockDelta, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`},
		{anthropic.EventMessageDelta, `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}`},
	} {
		if err := u.AddEvent(ev.name, []byte(ev.data)); err != nil {
			t.Fatal(err)
		}
	}
	want := anthropic.Usage{InputTokens: 10, OutputTokens: 7, CacheReadInputTokens: 20, CacheCreationInputTokens: 30}
	if u != want || u.PromptTokens() != 60 {
		t.Fatalf("%+v", u)
	}
	// Cumulative counts never go down: a later 0 keeps message_start's.
	if err := u.AddEvent(anthropic.EventMessageDelta, []byte(`{"type":"message_delta","usage":{"input_tokens":0,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"output_tokens":3}}`)); err != nil || u != want {
		t.Fatalf("%+v, %v: a message_delta lowered the counts", u, err)
	}
	for _, d := range []string{`{"type":"message_delta"}`, `{"type":"message_delta","usage":{"input_tokens":10}}`} {
		if err := u.AddEvent(anthropic.EventMessageDelta, []byte(d)); err == nil {
			t.Fatalf("%s was read", d)
		}
	}
	for _, d := range []string{`{"type":"message_start","message":{"usage":{}}}`, `{"type":"message_start","message":{"usage":{"output_tokens":1}}}`} {
		var v anthropic.Usage
		if err := v.AddEvent(anthropic.EventMessageStart, []byte(d)); err == nil {
			t.Fatalf("%s was read as %+v", d, v)
		}
	}
	if err := u.AddEvent(anthropic.EventMessageStart, []byte(`not json`)); err == nil {
		t.Fatal("an unreadable message_start was read")
	}
}

func TestParseError(t *testing.T) {
	e, ok := anthropic.ParseError(anthropic.NewError(anthropic.ErrorOverloaded, "Overloaded"))
	if !ok || e.Error.Type != anthropic.ErrorOverloaded || e.Error.Message != "Overloaded" {
		t.Fatalf("%+v %v", e, ok)
	}
	for _, b := range []string{`{"error":{"message":"x","type":"server_error"}}`, `[]`, `{"type":"error","error":{}}`} {
		if _, ok := anthropic.ParseError([]byte(b)); ok {
			t.Fatalf("%s read as an Anthropic error", b)
		}
	}
}
