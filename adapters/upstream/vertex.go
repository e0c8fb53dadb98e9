package upstream

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	"github.com/arr-dev/arr/domain/anthropic"
	"github.com/arr-dev/arr/domain/chat"
	"github.com/arr-dev/arr/domain/routing"
)

// VertexAnthropicVersion is the anthropic_version of a Messages request
// to Claude on Vertex AI.
const VertexAnthropicVersion = "vertex-2023-10-16"

// vertexAnthropicEndpoint is the route of a Messages request to Claude on
// Vertex AI: the model in the path (…:rawPredict, a stream
// …:streamRawPredict), the body without it and with anthropic_version
// (the body's own when it has one, else VertexAnthropicVersion), as
// Anthropic's SDK sends it, its other fields as they came; replies and
// streams are Anthropic's.
func vertexAnthropicEndpoint(m routing.Model, r Request) (endpoint, error) {
	base, err := vertexModels(m, "anthropic")
	if err != nil {
		return endpoint{}, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &fields); err != nil {
		msg := "the body is not a JSON object: " + err.Error()
		return endpoint{}, &Error{Model: m.ID, Status: http.StatusBadRequest,
			Body: anthropic.NewError(anthropic.ErrorInvalidRequest, msg), Type: anthropic.ErrorInvalidRequest, Err: errors.New(msg)}
	}
	delete(fields, "model")
	if _, ok := fields["anthropic_version"]; !ok {
		fields["anthropic_version"], _ = json.Marshal(VertexAnthropicVersion)
	}
	body, err := chat.Marshal(fields, chat.Verbatim)
	if err != nil {
		return endpoint{}, &Error{Model: m.ID, Err: err}
	}
	method := ":rawPredict"
	if r.Stream {
		method = ":streamRawPredict"
	}
	return endpoint{path: base + url.PathEscape(m.UpstreamModel) + method, maxReply: maxChatReply, api: APIAnthropic, vertex: true, body: body}, nil
}
