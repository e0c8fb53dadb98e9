package gateway

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/readapi/gateway/dialect"
)

// sse writes server-sent events and flushes after each. Every event is
// written under a write deadline: at most writeStall from now, and never
// past the request's own deadline (ARR_GATEWAY_MAX_REQUEST_DURATION), so
// a client that stops reading cannot hold the handler in a blocked write:
// the write fails, the stream is closed (its upstream call ended, what
// was relayed recorded and settled, its reservation and its body's bytes
// given back). After a failed write nothing more is written (failed).
type sse struct {
	w        gin.ResponseWriter
	rc       *http.ResponseController
	deadline time.Time
	err      error
}

// writeStall is the longest one event's write may wait for the client to
// read.
const writeStall = 30 * time.Second

// endGrace is how long the closing events of a stream cut at its
// deadline may take to write past it.
const endGrace = 2 * time.Second

// write writes the parts of one event and flushes them; last: a closing
// event, which may use endGrace past the request's deadline.
func (s *sse) write(last bool, parts ...[]byte) {
	if s.err != nil {
		return
	}
	now := time.Now()
	d := now.Add(writeStall)
	end := s.deadline
	if !end.IsZero() {
		// A write racing the cut, and the closing events of a cut
		// stream, may take endGrace past the deadline.
		end = end.Add(endGrace)
		if last {
			end = max64(s.deadline, now).Add(endGrace)
		}
	}
	if !end.IsZero() && end.Before(d) {
		d = end
	}
	if s.rc != nil {
		_ = s.rc.SetWriteDeadline(d) // a writer with no connection (a test recorder) has none
	}
	for _, p := range parts {
		if _, err := s.w.Write(p); err != nil {
			s.err = err
			return
		}
	}
	if s.rc != nil {
		if err := s.rc.Flush(); err != nil {
			s.err = err
		}
		return
	}
	s.w.Flush()
}

func max64(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// end lifts the write deadline of a stream whose writes all succeeded,
// so that a later request on the kept-alive connection is not cut by it;
// after a failed write the connection is done for and keeps it.
func (s *sse) end() {
	if s.err == nil && s.rc != nil {
		_ = s.rc.SetWriteDeadline(time.Time{})
	}
}

// failed reports whether a write failed (the client stopped reading past
// a deadline, or went away).
func (s *sse) failed() bool { return s.err != nil }

var (
	dataPrefix  = []byte("data: ")
	eventPrefix = []byte("event: ")
	eventData   = []byte("\ndata: ")
	eventEnd    = []byte("\n\n")
)

// emit writes events: a named one as "event:" and "data:" lines, one
// without a name as a "data:" line; a closing event may take endGrace
// past the deadline.
func (s *sse) emit(evs []dialect.Event) {
	for _, e := range evs {
		if e.Type == "" {
			s.write(e.Closing, dataPrefix, e.Data, eventEnd)
			continue
		}
		s.write(e.Closing, eventPrefix, []byte(e.Type), eventData, e.Data, eventEnd)
	}
}

// streamHeaders writes the status and headers of a stream. Without the
// audit hash yet (a relayed stream is recorded at its end) the hash and
// the elapsed time are announced as trailers.
func streamHeaders(c *gin.Context, ri complete.Routing, deadline time.Time) *sse {
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
	out := &sse{w: c.Writer, rc: http.NewResponseController(c.Writer), deadline: deadline}
	if out.rc.SetWriteDeadline(time.Now().Add(writeStall)) != nil {
		out.rc = nil // no connection under this writer (a test recorder)
	}
	c.Writer.WriteHeaderNow()
	return out
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
		m["usage"] = e.Usage.OpenAI()
	}
	b, _ := json.Marshal(m)
	return b
}
