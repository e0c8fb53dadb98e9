package answerapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/answer"
)

// Event names of a streamed answer (text/event-stream).
const (
	eventSources = "sources" // data: the sources, a JSON array
	eventDelta   = "delta"   // data: {"text": "..."}
	eventDone    = "done"    // data: the whole response object
	eventError   = "error"   // data: {"error": {...}}, the error body
)

// delta is the data of a delta event.
type delta struct {
	Text string `json:"text"`
}

// wantsStream reports whether the request asks for server-sent events:
// "stream": true in the body (bodyStream) or an Accept header that names
// text/event-stream (with a q above 0).
func wantsStream(c *gin.Context, bodyStream bool) bool {
	if bodyStream {
		return true
	}
	for _, v := range c.Request.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err == nil && mt == "text/event-stream" && !refused(params["q"]) {
				return true
			}
		}
	}
	return false
}

// refused reports whether an Accept entry's q value refuses its type
// (q=0, RFC 9110 section 12.4.2).
func refused(q string) bool {
	f, err := strconv.ParseFloat(q, 64)
	return err == nil && f == 0
}

// parseStream reads the body's stream field: absent, true or false.
func parseStream(raw json.RawMessage) (bool, error) {
	switch strings.TrimSpace(string(raw)) {
	case "", "null", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, domain.Invalid("invalid_stream", "stream", "stream must be true or false (a JSON boolean), got %s", raw)
}

// sse writes one streamed answer. Nothing is sent until its first event:
// an error before that is answered with its own status.
type sse struct {
	c       *gin.Context
	started bool
	// sources and deltas count the events of each kind sent.
	sources, deltas int
}

// start sends the status and headers of the stream.
func (s *sse) start() {
	if s.started {
		return
	}
	s.started = true
	h := s.c.Writer.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // no proxy buffering
	s.c.Status(http.StatusOK)
	s.c.Writer.WriteHeaderNow()
}

// begun reports whether the stream began.
func (s *sse) begun() bool { return s.started }

// send writes one event and flushes it.
func (s *sse) send(name string, data []byte) {
	s.start()
	switch name {
	case eventSources:
		s.sources++
	case eventDelta:
		s.deltas++
	}
	_, _ = fmt.Fprintf(s.c.Writer, "event: %s\ndata: %s\n\n", name, data)
	s.c.Writer.Flush()
}

// sendJSON writes one event whose data is v as JSON (as c.JSON encodes
// it, so that done carries the bytes of the plain response body).
func (s *sse) sendJSON(name string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(gin.H{"error": gin.H{"status": 500, "code": "internal", "message": "encoding the event failed"}})
		name = eventError
	}
	s.send(name, b)
}

// whole streams what the stream lacks of an answer that is whole (a
// cached one, or one whose synthesis sent no text while this asker
// watched): its sources unless some were sent, its sentences as deltas
// unless text was.
func (s *sse) whole(sources []answer.Source, text string) {
	if s.sources == 0 {
		if sources == nil {
			sources = []answer.Source{}
		}
		s.sendJSON(eventSources, sources)
	}
	if s.deltas == 0 {
		for _, d := range answer.Deltas(text) {
			s.sendJSON(eventDelta, delta{Text: d})
		}
	}
}

// fail ends a started stream with the error event: the body the plain
// request would have had.
func (s *sse) fail(err error) {
	status, body := problem(s.c, err)
	if status < 500 && status != http.StatusTooManyRequests {
		// As for a plain request refused so: no answer was served.
		markNotServed(s.c)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // as fail's PureJSON
	if err := enc.Encode(body); err != nil {
		s.sendJSON(eventError, gin.H{"error": gin.H{"status": 500, "code": "internal", "message": "encoding the error failed"}})
		return
	}
	s.send(eventError, bytes.TrimRight(b.Bytes(), "\n"))
}
