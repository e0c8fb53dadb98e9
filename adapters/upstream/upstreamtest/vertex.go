package upstreamtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// vertexAnthropic answers POST /v1/projects/{p}/locations/{l}/publishers/anthropic/models/{call}:
// Claude on Vertex AI. Authorized by an access token the token endpoint
// granted (else 401), ":rawPredict" for a message and ":streamRawPredict"
// for a stream, the body a Messages request without model (the path's)
// and with anthropic_version vertex-2023-10-16 (else 400); then answered
// as the Messages stand-in answers, the model the path's.
func (s *Server) vertexAnthropic(w http.ResponseWriter, r *http.Request) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || !s.tok.validToken(tok) {
		writeGoogleError(w, http.StatusUnauthorized, "Request had invalid authentication credentials.")
		return
	}
	model, method, _ := strings.Cut(r.PathValue("call"), ":")
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeAnthropicError(w, http.StatusBadRequest, err.Error())
		return
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		writeAnthropicError(w, http.StatusBadRequest, "body is not JSON: "+err.Error())
		return
	}
	var version string
	var stream bool
	_ = json.Unmarshal(fields["anthropic_version"], &version)
	_ = json.Unmarshal(fields["stream"], &stream)
	switch {
	case method != "rawPredict" && method != "streamRawPredict":
		writeGoogleError(w, http.StatusNotFound, fmt.Sprintf("method %q is not served here", method))
		return
	case version != "vertex-2023-10-16":
		writeAnthropicError(w, http.StatusBadRequest, fmt.Sprintf("anthropic_version: %q is not vertex-2023-10-16", version))
		return
	case fields["model"] != nil:
		writeAnthropicError(w, http.StatusBadRequest, "model: Extra inputs are not permitted")
		return
	case stream != (method == "streamRawPredict"):
		writeAnthropicError(w, http.StatusBadRequest, fmt.Sprintf("stream %v on %s", stream, method))
		return
	}
	delete(fields, "anthropic_version")
	fields["model"], _ = json.Marshal(model)
	body, _ = json.Marshal(fields)
	s.message(w, r, body)
}
