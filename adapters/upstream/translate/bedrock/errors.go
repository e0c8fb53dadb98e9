package bedrock

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Failure is what the gateway makes of a Bedrock error: its kind, its
// message, whether another upstream is tried, and for an error that is
// the request's own the status and OpenAI-shaped body the client gets.
type Failure struct {
	// Type is the exception's name ("ValidationException").
	Type    string
	Message string
	// Retryable: the upstream's or the operator's fault (throttling,
	// 5xx, a model not ready or failing, the operator's credentials or
	// model id); the breaker counts it and the client never sees it.
	Retryable bool
	// Status and Body are what the client is answered, for an error
	// that is not retryable (the request's own: a ValidationException).
	Status int
	Body   []byte
}

// retryableTypes are the exceptions another upstream may not have: the
// service's or the model's state, or the operator's account.
var retryableTypes = map[string]bool{
	"ThrottlingException": true, "ServiceUnavailableException": true, "InternalServerException": true,
	"ModelNotReadyException": true, "ModelTimeoutException": true, "ModelErrorException": true,
	"ModelStreamErrorException": true, "ServiceQuotaExceededException": true,
	// The operator's credentials, region or catalog entry, not the
	// client's request.
	"AccessDeniedException": true, "UnrecognizedClientException": true, "InvalidSignatureException": true,
	"ExpiredTokenException": true, "IncompleteSignatureException": true, "MissingAuthenticationTokenException": true,
	"ResourceNotFoundException": true,
}

// Classify reads an error reply: its status, its X-Amzn-ErrorType
// header ("ValidationException:http://…") and its body ({"message":…}).
func Classify(status int, errorType string, body []byte) Failure {
	var b struct {
		Message  string `json:"message"`
		Message2 string `json:"Message"`
		Type     string `json:"__type"`
	}
	_ = json.Unmarshal(body, &b)
	typ, _, _ := strings.Cut(errorType, ":")
	if typ == "" && b.Type != "" {
		typ = b.Type[strings.LastIndex(b.Type, "#")+1:]
	}
	if typ == "" {
		typ = http.StatusText(status)
	}
	msg := b.Message
	if msg == "" {
		msg = b.Message2
	}
	retry := retryableTypes[typ] || status >= 500 || status < 400 || status == http.StatusTooManyRequests ||
		status == http.StatusRequestTimeout || status == http.StatusFailedDependency ||
		status == http.StatusUnauthorized || status == http.StatusForbidden || status == http.StatusNotFound
	f := Failure{Type: typ, Message: msg, Retryable: retry}
	if !retry {
		f.Status, f.Body = status, ClientError(typ, msg)
	}
	return f
}

// streamExceptions are ConverseStream's exception events, by their
// :exception-type, with the status their kind has as a reply.
var streamExceptions = map[string]struct {
	typ    string
	status int
}{
	"validationException":         {"ValidationException", http.StatusBadRequest},
	"throttlingException":         {"ThrottlingException", http.StatusTooManyRequests},
	"internalServerException":     {"InternalServerException", http.StatusInternalServerError},
	"modelStreamErrorException":   {"ModelStreamErrorException", http.StatusFailedDependency},
	"serviceUnavailableException": {"ServiceUnavailableException", http.StatusServiceUnavailable},
}

// StreamException reads a stream's exception event (its :exception-type
// and payload) as Classify reads the reply of that kind; an unknown kind
// is the upstream's failure.
func StreamException(exceptionType string, payload []byte) Failure {
	e, ok := streamExceptions[exceptionType]
	if !ok {
		e.typ, e.status = exceptionType, http.StatusInternalServerError
	}
	return Classify(e.status, e.typ, payload)
}

// ClientError is the OpenAI-shaped error body of a Bedrock error the
// client is answered with: invalid_request_error, its code the
// exception's name.
func ClientError(typ, msg string) []byte {
	if msg == "" {
		msg = typ
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": typ}})
	return b
}
