package complete

import (
	"strings"

	"encoding/json"

	"github.com/arr-dev/arr/domain/chat"
)

// assembler rebuilds the non-streamed reply of a stream (choice 0), for
// the cache and for counting tokens when the upstream reports none.
type assembler struct {
	id      string
	created int64
	model   string
	content strings.Builder
	tools   []chat.ToolCall
	finish  string
	choices int
	bytes   int
}

func (a *assembler) add(ch *chat.ChunkSummary) {
	if a.id == "" {
		a.id, a.created, a.model = ch.ID, ch.Created, ch.Model
	}
	for _, c := range ch.Choices {
		a.choices = max(a.choices, c.Index+1)
		if c.Delta.Content != nil {
			a.bytes += len(*c.Delta.Content)
		}
		for _, t := range c.Delta.ToolCalls {
			a.bytes += len(t.Function.Arguments) + len(t.Function.Name)
		}
		if c.Index != 0 {
			continue
		}
		if c.Delta.Content != nil {
			a.content.WriteString(*c.Delta.Content)
		}
		for _, t := range c.Delta.ToolCalls {
			for len(a.tools) <= t.Index {
				a.tools = append(a.tools, chat.ToolCall{Type: "function"})
			}
			tc := &a.tools[t.Index]
			if t.ID != "" {
				tc.ID = t.ID
			}
			if t.Type != "" {
				tc.Type = t.Type
			}
			tc.Function.Name += t.Function.Name
			tc.Function.Arguments += t.Function.Arguments
		}
		if c.FinishReason != nil {
			a.finish = *c.FinishReason
		}
	}
}

// reply is the assembled non-streamed body. Its envelope is a map, so
// its keys go out sorted, HTML-escaped (json.Marshal), as the cache has
// always served them.
func (a *assembler) reply(u Usage) []byte {
	msg := map[string]any{"role": "assistant", "content": a.content.String(), "refusal": nil}
	if len(a.tools) > 0 {
		msg["tool_calls"] = a.tools
		if a.content.Len() == 0 {
			msg["content"] = nil
		}
	}
	b, _ := json.Marshal(map[string]any{
		"id": a.id, "object": "chat.completion", "created": a.created, "model": a.model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": a.finish}},
		"usage":   u.OpenAI(),
	})
	return b
}
