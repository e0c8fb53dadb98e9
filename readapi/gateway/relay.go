package gateway

import (
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/complete"
)

// eventTranslator turns a completion's chat chunks into another API's
// server-sent events (the Responses API's, the Messages API's).
type eventTranslator[E any] interface {
	// Chunk translates one chat chunk (the last one carries the routing
	// object and the usage).
	Chunk(data []byte) ([]E, error)
	// Fail is the events that end a failed stream.
	Fail(code, msg string) []E
	// Finish is the events that end a complete one.
	Finish() []E
	// sse is an event's name and data.
	sse(e E) (string, []byte)
}

// relayEvents relays a completion's stream through tr: each chat chunk
// translated as it comes, then the routing chunk (with usage) and the
// end; a cut stream, or one that could not be recorded in the audit
// chain, ends in tr's failure events.
func relayEvents[E any](c *gin.Context, st *complete.Stream, tr eventTranslator[E]) {
	defer st.Close()
	ri := st.Routing()
	trailers := ri.AuditHash == ""
	out := streamHeaders(c, ri, st.Deadline())
	defer out.end()
	emit := func(evs []E) {
		for _, e := range evs {
			out.event(tr.sse(e))
		}
	}
	for {
		data, err := st.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, commands.ErrOutcomeUnknown) {
			panic(http.ErrAbortHandler) // neither a failure nor a completion would be true
		}
		if err != nil {
			emit(tr.Fail("audit_unavailable", "the completion could not be recorded in the audit chain; it is not billed, retry it"))
			return
		}
		evs, err := tr.Chunk(data)
		if err != nil {
			emit(tr.Fail("invalid_upstream_stream", "the upstream's stream could not be translated: "+err.Error()))
			return
		}
		if emit(evs); out.failed() {
			return // closed: recorded and settled as a stream its client left
		}
	}
	end := st.End()
	if trailers {
		h := c.Writer.Header()
		h.Set("X-Arr-Audit-Hash", end.Routing.AuditHash)
		h.Set("X-Arr-Elapsed-Sec", strconv.FormatFloat(end.Routing.ElapsedSec, 'f', -1, 64))
	}
	evs, err := tr.Chunk(finalChunk(end, true))
	if err != nil {
		emit(tr.Fail("invalid_upstream_stream", "the completion's end could not be translated: "+err.Error()))
		return
	}
	emit(evs)
	if end.Cut != nil {
		emit(tr.Fail(end.Cut.Code(), end.Cut.Error()))
		return
	}
	emit(tr.Finish())
}
