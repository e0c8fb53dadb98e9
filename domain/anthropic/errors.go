package anthropic

import "encoding/json"

// ErrorBody is Anthropic's error body, as answered with a 4xx or 5xx and
// as the data of a stream's error event:
// {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}.
type ErrorBody struct {
	Type  string      `json:"type"`
	Error ErrorDetail `json:"error"`
	// RequestID is the upstream's id of the request, when it sent one.
	RequestID string `json:"request_id,omitempty"`
}

// ErrorDetail is an error's kind and message.
type ErrorDetail struct {
	// Type is the kind: invalid_request_error, authentication_error,
	// permission_error, not_found_error, request_too_large,
	// rate_limit_error, api_error, overloaded_error.
	Type    string `json:"type"`
	Message string `json:"message"`
}

// The error kinds with a status of their own.
const (
	ErrorInvalidRequest  = "invalid_request_error"
	ErrorAuthentication  = "authentication_error"
	ErrorPermission      = "permission_error"
	ErrorNotFound        = "not_found_error"
	ErrorRequestTooLarge = "request_too_large"
	ErrorRateLimit       = "rate_limit_error"
	ErrorAPI             = "api_error"
	ErrorOverloaded      = "overloaded_error"
)

// StatusOverloaded is the status of an overloaded_error (not an IANA one).
const StatusOverloaded = 529

// ParseError reads an error body; ok is false when b is not one.
func ParseError(b []byte) (e ErrorBody, ok bool) {
	if json.Unmarshal(b, &e) != nil || e.Type != "error" || e.Error.Type == "" {
		return ErrorBody{}, false
	}
	return e, true
}

// NewError is the error body of kind typ with message msg.
func NewError(typ, msg string) []byte {
	b, _ := json.Marshal(ErrorBody{Type: "error", Error: ErrorDetail{Type: typ, Message: msg}})
	return b
}
