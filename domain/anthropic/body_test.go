package anthropic_test

import (
	"testing"

	"github.com/arr-dev/arr/domain/anthropic"
)

// TestUpstreamGolden: the bytes sent on for a client's body: every member
// but model, max_tokens (when capped) and the gateway's own kept as it
// came, in order, <, > and & unescaped, unknown fields and cache_control,
// thinking and document blocks included.
func TestUpstreamGolden(t *testing.T) {
	in := `{ "model": "claude-sonnet-4-5-20250929", "max_tokens": 1024,
  "quality_floor": 0.8, "system": [{"type":"text","text":"be <brief> & kind","cache_control":{"type":"ephemeral"}}],
  "thinking": {"type":"enabled","budget_tokens":512},
  "messages": [{"role":"user","content":[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"x"},"citations":{"enabled":true}}]},
    {"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"c2ln"},{"type":"text","text":"ok"}]},
    {"role":"user","content":"go on\u00e9"}],
  "brand_pref": "anthropic", "future_field": {"a": [1, 2.50]}, "stream": true }`
	cases := []struct {
		name string
		max  int64
		want string
	}{
		{name: "as sent", want: `{"model":"claude-sonnet-4-0","max_tokens":1024,"system":[{"type":"text","text":"be <brief> & kind","cache_control":{"type":"ephemeral"}}],"thinking":{"type":"enabled","budget_tokens":512},"messages":[{"role":"user","content":[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"x"},"citations":{"enabled":true}}]},
    {"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"c2ln"},{"type":"text","text":"ok"}]},
    {"role":"user","content":"go on\u00e9"}],"future_field":{"a": [1, 2.50]},"stream":true}`},
		{name: "capped", max: 300, want: `{"model":"claude-sonnet-4-0","max_tokens":300,"system":[{"type":"text","text":"be <brief> & kind","cache_control":{"type":"ephemeral"}}],"thinking":{"type":"enabled","budget_tokens":512},"messages":[{"role":"user","content":[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"x"},"citations":{"enabled":true}}]},
    {"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"c2ln"},{"type":"text","text":"ok"}]},
    {"role":"user","content":"go on\u00e9"}],"future_field":{"a": [1, 2.50]},"stream":true}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := anthropic.Upstream([]byte(in), "claude-sonnet-4-0", tc.max, []string{"quality_floor", "max_cost_usd", "brand_pref"})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("sent\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestUpstreamAddsModel(t *testing.T) {
	got, err := anthropic.Upstream([]byte(`{"max_tokens":5,"messages":[]}`), "m", 0, nil)
	if err != nil || string(got) != `{"max_tokens":5,"messages":[],"model":"m"}` {
		t.Fatalf("%s %v", got, err)
	}
	if _, err := anthropic.Upstream([]byte(`[1]`), "m", 0, nil); err == nil {
		t.Fatal("an array accepted")
	}
}
