package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/routing"
	"github.com/arr-dev/arr/readapi/gateway/dialect"
	"github.com/arr-dev/arr/readapi/gateway/messages"
)

// passthrough lets req go as it came to the models of its own API (a
// Messages request to Anthropic's, with the client's anthropic-version
// and anthropic-beta), preferred within a tier before the chat models
// it is translated for.
func passthrough(c *gin.Context, req *complete.Request, p dialect.Passthrough) {
	api, drop, _ := p.Native()
	if api != routing.APIAnthropic {
		return
	}
	n := &complete.Native{API: api, Body: req.Body, Drop: drop, AnthropicVersion: c.GetHeader("anthropic-version")}
	for _, h := range c.Request.Header.Values("anthropic-beta") {
		for _, b := range strings.Split(h, ",") {
			if b = strings.TrimSpace(b); b != "" {
				n.AnthropicBeta = append(n.AnthropicBeta, b)
			}
		}
	}
	req.Native = n
	req.APIs = []string{api}
	for _, a := range complete.ChatAPIs() {
		if a != api {
			req.APIs = append(req.APIs, a)
		}
	}
	if _, _, only := p.Native(); only != nil {
		req.APIs = []string{api}
		n.Untranslated = true
	}
}

// nativeOnly is the refusal of a request only models of its own API can
// take when routing found none: the translation's own refusal, saying so.
func nativeOnly(ex dialect.Exchange, err error) error {
	p, ok := ex.(dialect.Passthrough)
	if !ok {
		return err
	}
	api, _, only := p.Native()
	var de *domain.Error
	if only == nil || !errors.As(err, &de) || de.Code != "model_api_unsupported" || !errors.As(only, &de) {
		return err
	}
	out := *de
	out.Message += fmt.Sprintf("; only models of the %s API take such a request as it is, and none that this request may use can (name one, a tier with one, or auto)", api)
	return &out
}

// relayNative relays a pass-through stream: the upstream's events as
// they came, then its message_delta with the routing object (once the
// completion is recorded) and its message_stop; a cut stream ends in
// the upstream's error event (or arr's, with its code), one that could
// not be recorded in arr's audit_unavailable error event.
func relayNative(c *gin.Context, st *complete.Stream) {
	defer st.Close()
	ri := st.Routing()
	trailers := ri.AuditHash == ""
	out := streamHeaders(c, ri, st.Deadline())
	defer out.end()
	for {
		raw, err := st.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, commands.ErrOutcomeUnknown) {
			panic(http.ErrAbortHandler) // neither a failure nor a completion would be true
		}
		if err != nil {
			out.emit([]dialect.Event{messages.FailEvent("api_error", "audit_unavailable", "the completion could not be recorded in the audit chain; it is not billed, retry it")})
			return
		}
		if out.write(false, raw); out.failed() {
			return // closed: recorded and settled as a stream its client left
		}
	}
	end := st.End()
	if trailers {
		h := c.Writer.Header()
		h.Set("X-Arr-Audit-Hash", end.Routing.AuditHash)
		h.Set("X-Arr-Elapsed-Sec", strconv.FormatFloat(end.Routing.ElapsedSec, 'f', -1, 64))
	}
	if end.Cut != nil {
		ev := messages.FailEvent("api_error", end.Cut.Code(), end.Cut.Error())
		if end.UpstreamError != nil {
			ev.Data = end.UpstreamError
		}
		ev.Closing = true
		out.emit([]dialect.Event{ev})
		return
	}
	delta := end.Delta
	if delta == nil {
		delta = []byte(`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":` +
			strconv.FormatInt(end.Usage.Completion, 10) + `}}`)
	}
	withRI, err := withRouting(delta, bytes.Contains(delta, []byte(`"routing"`)), end.Routing)
	if err != nil {
		out.emit([]dialect.Event{messages.FailEvent("api_error", "invalid_upstream_stream", "the upstream's message_delta could not take the routing object: "+err.Error())})
		return
	}
	out.emit([]dialect.Event{{Type: "message_delta", Data: withRI, Closing: true}})
	out.write(true, end.Stop)
}
