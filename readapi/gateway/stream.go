package gateway

import (
	"errors"
	"io"
	"net/http"
	"strconv"

	"encoding/json"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/complete"
)

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

// event writes a named server-sent event (the Responses API's response.*
// events).
func (s sse) event(name string, b []byte) {
	_, _ = s.w.WriteString("event: ")
	_, _ = s.w.WriteString(name)
	_, _ = s.w.WriteString("\ndata: ")
	_, _ = s.w.Write(b)
	_, _ = s.w.WriteString("\n\n")
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

// streamHeaders writes the status and headers of a stream. Without the
// audit hash yet (a relayed stream is recorded at its end) the hash and
// the elapsed time are announced as trailers.
func streamHeaders(c *gin.Context, ri complete.Routing) sse {
	h := c.Writer.Header()
	setRoutingHeaders(h, ri)
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	if ri.AuditHash == "" {
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
func finalChunk(e complete.StreamEnd, includeUsage bool) []byte {
	m := map[string]any{"id": e.ID, "object": "chat.completion.chunk", "created": e.Created, "model": e.Model, "choices": []any{}, "routing": e.Routing}
	if e.Cut != nil {
		m["choices"] = []any{map[string]any{"index": 0, "delta": map[string]any{}, "logprobs": nil, "finish_reason": "error"}}
	}
	if includeUsage {
		u := e.Usage
		m["usage"] = map[string]any{"prompt_tokens": u.Prompt, "completion_tokens": u.Completion, "total_tokens": u.Prompt + u.Completion}
	}
	b, _ := json.Marshal(m)
	return b
}

// writeStream relays a stream chunk by chunk and ends it with the routing
// chunk and [DONE] — or, if the upstream broke off, with a chunk whose
// finish_reason is "error" and an SSE error event; or, if the completion
// could not be recorded, with an error event alone.
func writeStream(c *gin.Context, st *complete.Stream, includeUsage bool) {
	defer st.Close()
	ri := st.Routing()
	trailers := ri.AuditHash == ""
	out := streamHeaders(c, ri)
	for {
		data, err := st.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, commands.ErrOutcomeUnknown) {
			panic(http.ErrAbortHandler) // neither an error event nor [DONE] would be true
		}
		if err != nil {
			out.errorEvent("audit_unavailable", "the completion could not be recorded in the audit chain; it is not billed, retry it")
			return
		}
		out.data(data)
	}
	end := st.End()
	if trailers {
		h := c.Writer.Header()
		h.Set("X-Arr-Audit-Hash", end.Routing.AuditHash)
		h.Set("X-Arr-Elapsed-Sec", strconv.FormatFloat(end.Routing.ElapsedSec, 'f', -1, 64))
	}
	out.data(finalChunk(end, includeUsage))
	if end.Cut != nil {
		out.errorEvent(end.Cut.Code(), end.Cut.Error())
		return
	}
	out.done()
}
