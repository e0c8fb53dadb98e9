package gateway

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	json "github.com/goccy/go-json"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/routing"
)

// chunkShape is what the gateway reads of a stream chunk.
type chunkShape struct {
	ID      string `json:"id"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// assembler rebuilds the non-streamed reply of a stream (choice 0), for
// the cache and for counting tokens when the upstream reports none.
type assembler struct {
	id      string
	created int64
	model   string
	content strings.Builder
	tools   []toolCall
	finish  string
	choices int
	bytes   int
}

func (a *assembler) add(ch *chunkShape) {
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
				a.tools = append(a.tools, toolCall{Type: "function"})
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

// reply is the assembled non-streamed body.
func (a *assembler) reply(u usage) []byte {
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
		"usage":   map[string]any{"prompt_tokens": u.Prompt, "completion_tokens": u.Completion, "total_tokens": u.Prompt + u.Completion},
	})
	return b
}

// sse writes server-sent events and flushes after each.
type sse struct {
	w gin.ResponseWriter
}

func (s sse) data(b []byte) {
	_, _ = s.w.WriteString("data: ")
	_, _ = s.w.Write(b)
	_, _ = s.w.WriteString("\n\n")
	s.w.Flush()
}

func (s sse) done() {
	_, _ = s.w.WriteString("data: [DONE]\n\n")
	s.w.Flush()
}

// errorEvent ends a stream that did not complete: an SSE "error" event in
// the OpenAI error shape (and no [DONE]).
func (s sse) errorEvent(code, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "upstream_error", "param": nil, "code": code}})
	_, _ = s.w.WriteString("event: error\ndata: ")
	_, _ = s.w.Write(b)
	_, _ = s.w.WriteString("\n\n")
	s.w.Flush()
}

func streamHeaders(c *gin.Context, ri routingInfo, trailers bool) sse {
	h := c.Writer.Header()
	setRoutingHeaders(h, ri)
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	if trailers {
		h.Set("Trailer", "X-Arr-Audit-Hash, X-Arr-Elapsed-Sec")
	} else {
		h.Set("X-Arr-Audit-Hash", ri.AuditHash)
		h.Set("X-Arr-Elapsed-Sec", strconv.FormatFloat(ri.ElapsedSec, 'f', -1, 64))
	}
	c.Status(http.StatusOK)
	c.Writer.WriteHeaderNow()
	return sse{w: c.Writer}
}

// finalChunk is the stream's last chunk: no choices (or choice 0 finishing
// with "error" after a cut), the usage when the client asked for it, and
// the routing object.
func finalChunk(a *assembler, k *call, u usage, ri routingInfo, cut bool) []byte {
	m := map[string]any{"id": a.id, "object": "chat.completion.chunk", "created": a.created, "model": a.model, "choices": []any{}, "routing": ri}
	if cut {
		m["choices"] = []any{map[string]any{"index": 0, "delta": map[string]any{}, "logprobs": nil, "finish_reason": "error"}}
	}
	if k.req.includeUsage {
		m["usage"] = map[string]any{"prompt_tokens": u.Prompt, "completion_tokens": u.Completion, "total_tokens": u.Prompt + u.Completion}
	}
	b, _ := json.Marshal(m)
	return b
}

// stream relays an upstream stream chunk by chunk, then records the
// completion with the upstream's usage and ends with the routing chunk
// and [DONE] — or, if the upstream broke off, with a chunk whose
// finish_reason is "error" and an SSE error event.
func (s *completer) stream(c *gin.Context, k *call, resp *upstream.Response, attempts int) {
	defer resp.Stream.Close()
	cand := k.dec.Candidates[0]
	out := streamHeaders(c, k.info(cand.Model, commands.Recorded{}, 0, false, attempts, cand.Predicted), true)
	var a assembler
	hash := s.rt.HashKey.New() // response_hash: keyed, over each data line and a newline
	var up *usage
	var cut error
	for {
		data, err := resp.Stream.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			cut = err
			break
		}
		hash.Write(data)
		hash.Write([]byte{'\n'})
		var ch chunkShape
		if json.Unmarshal(data, &ch) != nil {
			out.data(data)
			continue
		}
		a.add(&ch)
		if ch.Usage != nil {
			up = &usage{Prompt: ch.Usage.PromptTokens, Completion: ch.Usage.CompletionTokens}
			if len(ch.Choices) == 0 {
				continue // the upstream's usage chunk: ours comes last
			}
		}
		out.data(data)
	}
	if a.id == "" {
		a.id, a.created, a.model = "chatcmpl-arr", time.Now().Unix(), cand.Model.UpstreamModel
	}
	u := usage{Prompt: routing.EstimateTokens(k.req.messages, k.req.extraBytes()), Completion: int64(a.bytes+3) / 4, Estimated: true}
	if up != nil {
		u = *up
	}
	outcome := "ok"
	if cut != nil {
		outcome = "cut"
		if c.Request.Context().Err() != nil {
			outcome = "canceled"
		}
	}
	rec, cost, err := s.record(c, k, cand.Model, u, hex.EncodeToString(hash.Sum(nil)), false, outcome, attempts, resp.FirstByte)
	if err != nil {
		s.d.Logger.Error("recording a streamed completion failed", "err", err, "request_id", k.md.RequestID)
		out.errorEvent("audit_unavailable", "the completion could not be recorded in the audit chain; it is not billed, retry it")
		return
	}
	ri := k.info(cand.Model, rec, cost, false, attempts, cand.Predicted)
	h := c.Writer.Header()
	h.Set("X-Arr-Audit-Hash", ri.AuditHash)
	h.Set("X-Arr-Elapsed-Sec", strconv.FormatFloat(ri.ElapsedSec, 'f', -1, 64))
	if cut != nil {
		out.data(finalChunk(&a, k, u, ri, true))
		out.errorEvent("upstream_stream_cut", fmt.Sprintf("the upstream %s broke the stream off mid-way (%v); the reply above is incomplete", cand.Model.ID, cut))
		return
	}
	out.data(finalChunk(&a, k, u, ri, false))
	out.done()
	if k.cacheOn && a.choices <= 1 && (a.finish == "stop" || a.finish == "length") {
		s.cache.put(k.key, cached{body: a.reply(u), model: cand.Model.ID, tier: cand.Model.Tier, usage: u, stored: time.Now()})
	}
}

// replay streams a cached reply: the role, the content, the tool calls,
// the finish, the routing chunk and [DONE].
func (s *completer) replay(c *gin.Context, k *call, hit cached, ri routingInfo) {
	var doc struct {
		ID      string `json:"id"`
		Created int64  `json:"created"`
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content   *string    `json:"content"`
				ToolCalls []toolCall `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(hit.body, &doc); err != nil || len(doc.Choices) == 0 {
		fail(c, fmt.Errorf("cached reply unreadable: %v", err))
		return
	}
	out := streamHeaders(c, ri, false)
	a := &assembler{id: doc.ID, created: doc.Created, model: doc.Model}
	chunk := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{"id": doc.ID, "object": "chat.completion.chunk", "created": doc.Created, "model": doc.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}})
		out.data(b)
	}
	ch := doc.Choices[0]
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	if ch.Message.Content != nil && *ch.Message.Content != "" {
		chunk(map[string]any{"content": *ch.Message.Content}, nil)
	}
	for i, t := range ch.Message.ToolCalls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": t.ID, "type": t.Type,
			"function": map[string]any{"name": t.Function.Name, "arguments": t.Function.Arguments}}}}, nil)
	}
	chunk(map[string]any{}, ch.FinishReason)
	out.data(finalChunk(a, k, hit.usage, ri, false))
	out.done()
}
