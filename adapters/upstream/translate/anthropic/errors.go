package anthropic

import (
	"fmt"
	"net/http"

	wire "github.com/arr-dev/arr/domain/anthropic"
	"github.com/arr-dev/arr/domain/chat"
)

// Error is an Anthropic error (an HTTP error reply or a stream's error
// event) as the chat client is to see it.
type Error struct {
	// Status is the status to answer with: the upstream's, but 529
	// (overloaded, not an IANA status) as 503; for a stream's error
	// event, the status of its kind.
	Status int
	// UpstreamStatus is the status the upstream answered (0: an error
	// event of a stream).
	UpstreamStatus int
	// Type is Anthropic's error.type ("" when the body was not an
	// Anthropic error).
	Type string
	// Message is the upstream's message.
	Message string
	// Body is OpenAI's error shape: {"error":{"message","type","param",
	// "code"}}, code Anthropic's error.type.
	Body []byte
}

func (e *Error) Error() string {
	if e.UpstreamStatus == 0 {
		return fmt.Sprintf("anthropic upstream: stream error %s: %s", e.Type, e.Message)
	}
	return fmt.Sprintf("anthropic upstream: HTTP %d %s: %s", e.UpstreamStatus, e.Type, e.Message)
}

// statusOf is the status of each Anthropic error kind (for stream
// error events, which have none).
var statusOf = map[string]int{
	wire.ErrorInvalidRequest: http.StatusBadRequest, wire.ErrorAuthentication: http.StatusUnauthorized,
	"billing_error": http.StatusPaymentRequired, wire.ErrorPermission: http.StatusForbidden, wire.ErrorNotFound: http.StatusNotFound,
	wire.ErrorRequestTooLarge: http.StatusRequestEntityTooLarge, wire.ErrorRateLimit: http.StatusTooManyRequests,
	wire.ErrorAPI: http.StatusInternalServerError, wire.ErrorOverloaded: wire.StatusOverloaded, "timeout_error": http.StatusGatewayTimeout,
}

// TranslateError turns an Anthropic error reply (status and body) into
// the chat client's Error. A body that is not an Anthropic error keeps
// the status with a message saying so.
func TranslateError(status int, body []byte) *Error {
	e := &Error{UpstreamStatus: status}
	if eb, ok := wire.ParseError(body); ok {
		e.Type, e.Message = eb.Error.Type, eb.Error.Message
	} else {
		e.Message = fmt.Sprintf("the Anthropic upstream answered HTTP %d", status)
	}
	e.Status = chatStatus(status)
	e.Body = errorBody(e.Status, e.Type, e.Message)
	return e
}

// streamError is a stream's error event as an Error.
func streamError(data []byte) *Error {
	eb, ok := wire.ParseError(data)
	if !ok {
		eb.Error = wire.ErrorDetail{Type: wire.ErrorAPI, Message: "the Anthropic upstream's stream failed"}
	}
	st, ok := statusOf[eb.Error.Type]
	if !ok {
		st = http.StatusInternalServerError
	}
	e := &Error{Status: chatStatus(st), Type: eb.Error.Type, Message: eb.Error.Message}
	e.Body = errorBody(e.Status, e.Type, e.Message)
	return e
}

// chatStatus: 529 (overloaded) as 503, a status outside 400-599 as 502;
// the rest as they are.
func chatStatus(status int) int {
	switch {
	case status == wire.StatusOverloaded:
		return http.StatusServiceUnavailable
	case status < 400 || status > 599:
		return http.StatusBadGateway
	}
	return status
}

// openAIType is the OpenAI error type of a status, as the gateway names
// them (readapi/gateway's openAIType).
func openAIType(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusRequestTimeout, http.StatusRequestEntityTooLarge, http.StatusRequestHeaderFieldsTooLarge,
		http.StatusUnprocessableEntity:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusPaymentRequired:
		return "insufficient_quota"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusServiceUnavailable:
		return "service_unavailable_error"
	}
	return "api_error"
}

// errorOut is OpenAI's error shape.
type errorOut struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func errorBody(status int, typ, msg string) []byte {
	var e errorOut
	e.Error.Message, e.Error.Type = msg, openAIType(status)
	if typ != "" {
		e.Error.Code = &typ
	}
	b, _ := chat.Marshal(&e, chat.EscapeHTML)
	return b
}
