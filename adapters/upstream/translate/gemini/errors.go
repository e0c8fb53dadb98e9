package gemini

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
)

// Error is Google's error body, {"error":{"code","message","status",
// "details"}}, as read by ParseError.
type Error struct {
	Code    int
	Message string
	// Status is the canonical code's name: INVALID_ARGUMENT,
	// RESOURCE_EXHAUSTED, UNAVAILABLE…
	Status string
	// Reason is the first ErrorInfo reason of the details
	// (API_KEY_INVALID), "" when none.
	Reason string
}

// ParseError reads Google's error body (Vertex AI's may come as a list
// of one); false when b is not one.
func ParseError(b []byte) (Error, bool) {
	var body struct {
		Error *googleError `json:"error"`
	}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
		var list []json.RawMessage
		if json.Unmarshal(t, &list) != nil || len(list) == 0 {
			return Error{}, false
		}
		b = list[0]
	}
	if json.Unmarshal(b, &body) != nil || body.Error == nil || (body.Error.Message == "" && body.Error.Status == "") {
		return Error{}, false
	}
	e := Error{Code: body.Error.Code, Message: body.Error.Message, Status: body.Error.Status}
	for _, d := range body.Error.Details {
		if d.Reason != "" {
			e.Reason = d.Reason
			break
		}
	}
	return e, true
}

// ChatError is Google's error body b of an answer with status as
// OpenAI's error body, {"error":{"message","type","param","code"}}: the
// message as Google wrote it, the type for the status, the code Google's
// status in lower case ("invalid_argument").
func ChatError(status int, b []byte) []byte {
	e, ok := ParseError(b)
	if !ok {
		e = Error{Message: http.StatusText(status)}
	}
	typ := "invalid_request_error"
	switch {
	case status == http.StatusUnauthorized:
		typ = "authentication_error"
	case status == http.StatusForbidden:
		typ = "permission_error"
	case status == http.StatusNotFound:
		typ = "not_found_error"
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case status >= 500:
		typ = "server_error"
	}
	var code any
	if e.Status != "" {
		code = strings.ToLower(e.Status)
	}
	out, _ := json.Marshal(map[string]any{"error": map[string]any{"message": e.Message, "type": typ, "param": nil, "code": code}})
	return out
}
