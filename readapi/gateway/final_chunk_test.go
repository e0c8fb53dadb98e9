package gateway

import (
	"errors"
	"testing"

	"github.com/arr-dev/arr/commands/complete"
)

// TestFinalChunkBytes pins the stream's closing chunk: keys in sorted
// order, HTML escaped (a map through json.Marshal), usage only when asked
// for (its cached prompt tokens when there are any), a cut's
// finish_reason "error".
func TestFinalChunkBytes(t *testing.T) {
	end := complete.StreamEnd{ID: "c<1>", Created: 7, Model: "m&", Usage: complete.Usage{Prompt: 3, Completion: 4},
		Routing: complete.Routing{Tier: "nano", Model: "m&"}}
	routing := `{"tier":"nano","model":"m\u0026","vendor":"","difficulty_score":0,"audit_hash":"","cost_per_1k":0,"cost_usd":0,"cache_hit":false,"cache_read_tokens":0,"cache_write_tokens":0,"elapsed_sec":0,"attempts":0,"predicted_quality":0,"audit_position":0}`
	for _, tc := range []struct {
		name   string
		usage  bool
		cut    bool
		cached int64
		want   string
	}{
		{"plain", false, false, 0, `{"choices":[],"created":7,"id":"c\u003c1\u003e","model":"m\u0026","object":"chat.completion.chunk","routing":` + routing + `}`},
		{"usage", true, false, 0, `{"choices":[],"created":7,"id":"c\u003c1\u003e","model":"m\u0026","object":"chat.completion.chunk","routing":` + routing + `,"usage":{"completion_tokens":4,"prompt_tokens":3,"total_tokens":7}}`},
		{"cached prompt tokens", true, false, 2, `{"choices":[],"created":7,"id":"c\u003c1\u003e","model":"m\u0026","object":"chat.completion.chunk","routing":` + routing + `,"usage":{"completion_tokens":4,"prompt_tokens":3,"prompt_tokens_details":{"cached_tokens":2},"total_tokens":7}}`},
		{"cut", false, true, 0, `{"choices":[{"delta":{},"finish_reason":"error","index":0,"logprobs":null}],"created":7,"id":"c\u003c1\u003e","model":"m\u0026","object":"chat.completion.chunk","routing":` + routing + `}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := end
			e.Usage.CacheRead = tc.cached
			if tc.cut {
				e.Cut = &complete.StreamCut{Model: "m", Err: errors.New("x")}
			}
			if got := string(finalChunk(e, tc.usage)); got != tc.want {
				t.Errorf("\n got: %s\nwant: %s", got, tc.want)
			}
		})
	}
}
