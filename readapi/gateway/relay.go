package gateway

import (
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/readapi/gateway/dialect"
)

// relay relays a completion's stream through tr: each chat chunk
// translated as it comes, then the routing chunk (with the usage when
// includeUsage) and the end; a cut stream, or one that could not be
// recorded in the audit chain, ends in tr's failure events.
func relay(c *gin.Context, st *complete.Stream, tr dialect.Stream, includeUsage bool) {
	defer st.Close()
	ri := st.Routing()
	trailers := ri.AuditHash == ""
	out := streamHeaders(c, ri, st.Deadline())
	defer out.end()
	for {
		data, err := st.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, commands.ErrOutcomeUnknown) {
			panic(http.ErrAbortHandler) // neither a failure nor a completion would be true
		}
		if err != nil {
			out.emit(tr.Fail("audit_unavailable", "the completion could not be recorded in the audit chain; it is not billed, retry it"))
			return
		}
		evs, err := tr.Chunk(data)
		if err != nil {
			out.emit(tr.Fail("invalid_upstream_stream", "the upstream's stream could not be translated: "+err.Error()))
			return
		}
		if out.emit(evs); out.failed() {
			return // closed: recorded and settled as a stream its client left
		}
	}
	end := st.End()
	if trailers {
		h := c.Writer.Header()
		h.Set("X-Arr-Audit-Hash", end.Routing.AuditHash)
		h.Set("X-Arr-Elapsed-Sec", strconv.FormatFloat(end.Routing.ElapsedSec, 'f', -1, 64))
	}
	evs, err := tr.Chunk(finalChunk(end, includeUsage))
	if err != nil {
		out.emit(tr.Fail("invalid_upstream_stream", "the completion's end could not be translated: "+err.Error()))
		return
	}
	out.emit(evs)
	if end.Cut != nil {
		out.emit(tr.Fail(end.Cut.Code(), end.Cut.Error()))
		return
	}
	out.emit(tr.Finish())
}
