package upstreamtest

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/arr-dev/arr/domain/anthropic"
	"github.com/arr-dev/arr/domain/wait"
)

// converseAnswer is a Converse reply: "Hello from <model>: <last user
// text>" (and "[image <format> <n> bytes]" for each image of that
// message), a toolUse of the tool the toolChoice names or else the first
// tool offered (unless the last message brings tool results, then they
// are echoed), cut at maxTokens words.
type converseAnswer struct {
	text  string
	tool  string
	id    string
	input string
	stop  string
	usage anthropic.Usage
}

func bedrockAnswer(model string, in *bedrockruntime.ConverseInput) converseAnswer {
	last := in.Messages[len(in.Messages)-1]
	var text, results []string
	for _, c := range last.Content {
		switch v := c.(type) {
		case *types.ContentBlockMemberText:
			text = append(text, v.Value)
		case *types.ContentBlockMemberImage:
			n := 0
			if src, ok := v.Value.Source.(*types.ImageSourceMemberBytes); ok {
				n = len(src.Value)
			}
			text = append(text, fmt.Sprintf("[image %s %d bytes]", v.Value.Format, n))
		case *types.ContentBlockMemberToolResult:
			for _, rc := range v.Value.Content {
				if t, ok := rc.(*types.ToolResultContentBlockMemberText); ok {
					results = append(results, t.Value)
				}
			}
		}
	}
	lastUser := strings.Join(text, " ")
	if len(lastUser) > 200 {
		lastUser = lastUser[:200]
	}
	a := converseAnswer{stop: "end_turn"}
	if tool := chosenTool(in.ToolConfig); tool != "" && len(results) == 0 {
		in, _ := json.Marshal(map[string]string{"input": lastUser})
		a.tool, a.id, a.input, a.stop = tool, "tooluse_test1", string(in), "tool_use"
		return a
	}
	a.text = "Hello from " + model + ": " + lastUser
	if len(results) > 0 {
		a.text = "Tool results: " + strings.Join(results, "; ")
	}
	if ic := in.InferenceConfig; ic != nil && ic.MaxTokens != nil {
		if words := strings.SplitAfter(a.text, " "); len(words) > int(*ic.MaxTokens) {
			a.text, a.stop = strings.Join(words[:*ic.MaxTokens], ""), "max_tokens"
		}
	}
	return a
}

// chosenTool is the tool a reply calls: the one the toolChoice names,
// else the first offered ("": none).
func chosenTool(tc *types.ToolConfiguration) string {
	if tc == nil {
		return ""
	}
	if named, ok := tc.ToolChoice.(*types.ToolChoiceMemberTool); ok {
		return aws.ToString(named.Value.Name)
	}
	for _, t := range tc.Tools {
		if spec, ok := t.(*types.ToolMemberToolSpec); ok {
			return aws.ToString(spec.Value.Name)
		}
	}
	return ""
}

// outputTokens is the reply's length in words (10 for a tool call).
func (a converseAnswer) outputTokens() int64 {
	if a.tool != "" {
		return 10
	}
	return int64(len(strings.SplitAfter(a.text, " ")))
}

func (a converseAnswer) block() map[string]any {
	if a.tool != "" {
		return map[string]any{"toolUse": map[string]any{"toolUseId": a.id, "name": a.tool, "input": json.RawMessage(a.input)}}
	}
	return map[string]any{"text": a.text}
}

// usage is the reply's usage as Bedrock writes it.
func (a converseAnswer) usageJSON() map[string]any {
	u := a.usage
	out := a.outputTokens()
	m := map[string]any{"inputTokens": u.InputTokens, "outputTokens": out, "totalTokens": u.PromptTokens() + out}
	if u.CacheReadInputTokens > 0 || u.CacheCreationInputTokens > 0 {
		m["cacheReadInputTokens"], m["cacheWriteInputTokens"] = u.CacheReadInputTokens, u.CacheCreationInputTokens
	}
	return m
}

// reply is the whole Converse reply.
func (a converseAnswer) reply() map[string]any {
	return map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": []any{a.block()}}},
		"stopReason": a.stop, "usage": a.usageJSON(), "metrics": map[string]any{"latencyMs": 1},
	}
}

// cacheStats counts the request's input tokens (its JSON bytes / 4) as
// the Messages stand-in does, with Converse's cachePoint blocks (in the
// tools, then the system, then the messages) for breakpoints.
func (b *bedrockServer) cacheStats(model string, raw map[string]any) anthropic.Usage {
	h := sha256.New()
	size := 0
	var marks []prefix
	add := func(v any) {
		if m, ok := v.(map[string]any); ok && m["cachePoint"] != nil {
			marks = append(marks, prefix{key: fmt.Sprintf("%s\x00%x", model, h.Sum(nil)), size: size, mark: true})
			return
		}
		j, _ := json.Marshal(v)
		h.Write(j)
		size += len(j)
	}
	list := func(v any) []any { l, _ := v.([]any); return l }
	if tc, ok := raw["toolConfig"].(map[string]any); ok {
		for _, t := range list(tc["tools"]) {
			add(t)
		}
	}
	for _, s := range list(raw["system"]) {
		add(s)
	}
	for _, m := range list(raw["messages"]) {
		mm, _ := m.(map[string]any)
		for _, c := range list(mm["content"]) {
			add(c)
		}
	}
	return b.cache.account(marks, size)
}

// converseStream sends the reply as ConverseStream's event-stream frames:
// messageStart, the block's start (a toolUse), deltas and stop,
// messageStop, metadata (usage).
func (s *Server) converseStream(w http.ResponseWriter, r *http.Request, a converseAnswer, b Behavior, bb BedrockBehavior) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeBedrockError(w, 500, "no flusher")
		return
	}
	w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	w.Header().Set("X-Amzn-Requestid", "req-stream")
	w.WriteHeader(http.StatusOK)
	enc := eventstream.NewEncoder()
	frame := func(kind, name string, payload any) {
		p, _ := json.Marshal(payload)
		var hs eventstream.Headers
		hs.Set(":message-type", eventstream.StringValue(kind))
		if kind == "exception" {
			hs.Set(":exception-type", eventstream.StringValue(name))
		} else {
			hs.Set(":event-type", eventstream.StringValue(name))
		}
		hs.Set(":content-type", eventstream.StringValue("application/json"))
		_ = enc.Encode(w, eventstream.Message{Headers: hs, Payload: p})
		fl.Flush()
	}
	event := func(name string, payload any) { frame("event", name, payload) }
	exception := func() { frame("exception", bb.Exception, map[string]string{"message": "injected " + bb.Exception}) }
	if bb.Exception != "" && bb.ExceptionAfter == 0 {
		exception()
		return
	}
	event("messageStart", map[string]any{"role": "assistant", "p": "abcdefgh"})
	if a.tool != "" {
		event("contentBlockStart", map[string]any{"contentBlockIndex": 0, "start": map[string]any{"toolUse": map[string]any{"toolUseId": a.id, "name": a.tool}}})
	}
	parts := strings.SplitAfter(a.text, " ")
	if a.tool != "" {
		parts = []string{a.input[:len(a.input)/2], a.input[len(a.input)/2:]}
	}
	for i, part := range parts {
		if b.CutAfter > 0 && i >= b.CutAfter {
			panic(http.ErrAbortHandler) // breaks the connection off mid-stream
		}
		if bb.Exception != "" && i >= bb.ExceptionAfter {
			exception()
			return
		}
		if b.ChunkDelay > 0 && !wait.Sleep(r.Context(), b.ChunkDelay) {
			return
		}
		d := map[string]any{"text": part}
		if a.tool != "" {
			d = map[string]any{"toolUse": map[string]any{"input": part}}
		}
		event("contentBlockDelta", map[string]any{"contentBlockIndex": 0, "delta": d})
	}
	event("contentBlockStop", map[string]any{"contentBlockIndex": 0})
	if bb.NoStop {
		return
	}
	event("messageStop", map[string]any{"stopReason": a.stop})
	event("metadata", map[string]any{"usage": a.usageJSON(), "metrics": map[string]any{"latencyMs": 1}})
}
