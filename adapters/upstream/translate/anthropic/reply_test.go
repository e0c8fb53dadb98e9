package anthropic_test

import (
	"errors"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream/translate/anthropic"
	"github.com/arr-dev/arr/domain/chat"
	"github.com/arr-dev/arr/domain/routing"
)

func TestFinishReason(t *testing.T) {
	for stop, want := range map[string]string{
		"end_turn": "stop", "stop_sequence": "stop", "pause_turn": "stop", "": "stop", "something_new": "stop",
		"max_tokens": "length", "model_context_window_exceeded": "length", "tool_use": "tool_calls", "refusal": "content_filter",
	} {
		if got := anthropic.FinishReason(stop); got != want {
			t.Errorf("FinishReason(%q) = %q, want %q", stop, got, want)
		}
	}
}

// TestReplyUsage: every input token is a prompt token, the cache reads
// are cached_tokens, and Tokens carries the writes apart, so the cost is
// priced by cache reads, cache writes and plain input.
func TestReplyUsage(t *testing.T) {
	body := `{"id":"msg_1","type":"message","model":"m","content":[{"type":"text","text":"x"}],"stop_reason":"end_turn",
		"usage":{"input_tokens":10,"cache_read_input_tokens":1000,"cache_creation_input_tokens":200,"output_tokens":5}}`
	r, err := anthropic.Reply([]byte(body), 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := (routing.Tokens{Prompt: 1210, Completion: 5, CacheRead: 1000, CacheWrite: 200}); r.Tokens != want {
		t.Errorf("Tokens %+v, want %+v", r.Tokens, want)
	}
	// What commands/complete reads of a chat reply.
	c, ch, err := chat.ReadCompletion(r.Body)
	if err != nil || ch.FinishReason != "stop" || *ch.Message.Content != "x" || c.Usage.TotalTokens != 1215 ||
		c.Usage.PromptTokensDetails == nil || c.Usage.PromptTokensDetails.CachedTokens != 1000 {
		t.Fatalf("%s: %+v %v", r.Body, c, err)
	}
	m := routing.Model{InputPerM: 3_000_000_000, CachedInputPerM: 300_000_000, CacheWritePerM: 3_750_000_000, OutputPerM: 15_000_000_000}
	plain := routing.Tokens{Prompt: 1210, Completion: 5}
	if m.Cost(r.Tokens) >= m.Cost(plain) {
		t.Errorf("cached cost %d is not below the uncached %d", m.Cost(r.Tokens), m.Cost(plain))
	}
}

func TestReplyMalformed(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"not JSON", `{`},
		{"an error body", `{"type":"error","error":{"type":"api_error","message":"x"}}`},
		{"no usage", `{"type":"message","content":[]}`},
		{"negative usage", `{"type":"message","content":[],"usage":{"input_tokens":-1,"output_tokens":1}}`},
		{"content not an array", `{"type":"message","content":"x","usage":{"input_tokens":1,"output_tokens":1}}`},
		{"tool_use without a name", `{"type":"message","content":[{"type":"tool_use","id":"t"}],"usage":{"input_tokens":1,"output_tokens":1}}`},
		{"tool_use input not an object", `{"type":"message","content":[{"type":"tool_use","id":"t","name":"f","input":[1]}],"usage":{"input_tokens":1,"output_tokens":1}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := anthropic.Reply([]byte(tc.body), 1); !errors.Is(err, anthropic.ErrMalformed) {
				t.Errorf("err = %v, want ErrMalformed", err)
			}
		})
	}
}
