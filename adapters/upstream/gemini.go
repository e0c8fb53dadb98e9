package upstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/arr-dev/arr/adapters/upstream/translate/gemini"
	"github.com/arr-dev/arr/domain/routing"
)

// geminiEndpoint is the route of a Gemini API or Vertex AI call: the
// model and whether it streams are in the path, the body is a
// GenerateContentRequest (translate/gemini). A Vertex AI model without a
// project, a location or a credentials variable is not configured
// (skipped, retryable, no breaker).
func geminiEndpoint(m routing.Model, r Request) (endpoint, error) {
	method := ":generateContent"
	if r.Stream {
		method = ":streamGenerateContent?alt=sse"
	}
	model := url.PathEscape(strings.TrimPrefix(m.UpstreamModel, "models/"))
	if r.API == APIGemini {
		return endpoint{path: "/models/" + model + method, maxReply: maxChatReply, api: APIGemini}, nil
	}
	base, err := vertexModels(m, "google")
	if err != nil {
		return endpoint{}, err
	}
	return endpoint{path: base + model + method, maxReply: maxChatReply, api: APIGemini, vertex: true}, nil
}

// vertexModels is the path of a Vertex AI publisher's models in m's
// project and location, or the Error of a model without a project, a
// location or a credentials variable, or whose project or location is
// not one Google allows (validProject, validLocation): not configured
// (skipped, retryable, no breaker).
func vertexModels(m routing.Model, publisher string) (string, error) {
	notConfigured := func(why string) (string, error) {
		return "", &Error{Model: m.ID, Retryable: true, Err: fmt.Errorf("%w: %s", ErrNotConfigured, why)}
	}
	switch {
	case m.Project == "" || m.Location == "" || m.CredentialsEnv == "":
		return notConfigured("a Vertex AI model needs a project, a location and credentials_env")
	case !validProject(m.Project):
		return notConfigured("the project is not a Google Cloud project id (lower-case letters, digits and hyphens, or a project number)")
	case !validLocation(m.Location):
		return notConfigured("the location is not a Google Cloud region (lower-case letters, digits and hyphens: us-central1, global)")
	}
	return "/projects/" + url.PathEscape(m.Project) + "/locations/" + url.PathEscape(m.Location) + "/publishers/" + publisher + "/models/", nil
}

// geminiRefusal is the Error of a Gemini or Vertex AI answer with status
// other than 200: as refusal decides, and also retryable (the operator's,
// not the client's) a 401, 403 or 404 (key, project, model id) and a 400
// that says the API key is invalid or the deployment cannot serve
// (FAILED_PRECONDITION: a region the API is not offered in, billing). Its
// Type is Google's status (INVALID_ARGUMENT, RESOURCE_EXHAUSTED…), its
// Body Google's error body as it came.
func geminiRefusal(m routing.Model, status int, b []byte) *Error {
	e := refusal(m, APIOpenAI, status, b)
	ge, ok := gemini.ParseError(b)
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden || status == http.StatusNotFound:
		e.Retryable = true
	case ok && status == http.StatusBadRequest && (ge.Reason == "API_KEY_INVALID" || ge.Status == "FAILED_PRECONDITION"):
		e.Retryable = true
	}
	if ok && ge.Status != "" {
		e.Type = ge.Status
		e.Err = fmt.Errorf("%s (%s)", http.StatusText(status), ge.Status)
	}
	return e
}

// geminiState is what a Gemini stream keeps besides the SSE reader's.
type geminiState struct {
	// finished: an event finished the reply (a finishReason, or the
	// prompt blocked); the end of the body after it is the stream's end.
	finished bool
	err      error
}

// geminiEvents makes s read Gemini's events (data lines, no [DONE]). It
// is called before the first read.
func (s *Stream) geminiEvents() {
	s.gem = &geminiState{}
}

// geminiEvent takes ev in: an error object fails the stream (an
// *EventError whose Type is Google's status), a finishReason or a
// blocked prompt finishes it.
func (s *Stream) geminiEvent(ev Event) error {
	var e struct {
		Candidates []struct {
			FinishReason string `json:"finishReason"`
		} `json:"candidates"`
		PromptFeedback *struct {
			BlockReason string `json:"blockReason"`
		} `json:"promptFeedback"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return fmt.Errorf("%w: an event that is not a JSON object: %v", ErrCut, err)
	}
	if len(e.Error) > 0 && string(e.Error) != "null" {
		ee := &EventError{Body: append([]byte(nil), ev.Data...)}
		if ge, ok := gemini.ParseError(ev.Data); ok {
			ee.Type = ge.Status
		}
		return fmt.Errorf("%w: %w", ErrCut, ee)
	}
	for _, c := range e.Candidates {
		if c.FinishReason != "" {
			s.gem.finished = true
		}
	}
	if e.PromptFeedback != nil && e.PromptFeedback.BlockReason != "" {
		s.gem.finished = true
	}
	return nil
}

// geminiStart reads a Gemini stream's first event before the call counts
// as answered, as anthropicStart does: an error event first is a failed
// call (retryable), unless its code is the request's own 4xx (kept for
// the client, status and body). A 401 there drops a Vertex AI call's
// token as a 401 answer does (Client.startStream).
func geminiStart(m routing.Model, out *Response) (*Response, error) {
	out.Stream.geminiEvents()
	err := out.Stream.Peek()
	if err == nil {
		return out, nil
	}
	out.Stream.Close()
	ue := &Error{Model: m.ID, Status: out.Status, Retryable: true, Err: err}
	var ee *EventError
	if errors.As(err, &ee) {
		ue.Body, ue.Type = ee.Body, ee.Type
		if ge, ok := gemini.ParseError(ee.Body); ok && ge.Code >= 400 && ge.Code < 500 {
			if r := geminiRefusal(m, ge.Code, ee.Body); !r.Retryable {
				ue.Status, ue.Retryable = ge.Code, false
			}
		}
	}
	return nil, ue
}

// validProject: p is a Google Cloud project id (6 to 30 lower-case
// letters, digits and hyphens, from a letter, not ending in a hyphen), a
// project number (digits), or a legacy domain-scoped id
// ("example.com:my-project"); nothing that could step out of its path
// segment (/, .., %, ?) once in a Vertex AI URL.
func validProject(p string) bool {
	if domain, id, ok := strings.Cut(p, ":"); ok {
		return len(domain) <= 253 && domain != "" && strings.Trim(domain, "abcdefghijklmnopqrstuvwxyz0123456789-.") == "" &&
			!strings.Contains(domain, "..") && domain[0] != '.' && validProject(id)
	}
	if strings.Trim(p, "0123456789") == "" {
		return p != "" && len(p) <= 20
	}
	return len(p) >= 6 && len(p) <= 30 && p[0] >= 'a' && p[0] <= 'z' && p[len(p)-1] != '-' &&
		strings.Trim(p, "abcdefghijklmnopqrstuvwxyz0123456789-") == ""
}

// validLocation: l is a Google Cloud location name ("us-central1",
// "europe-west4", "global", "us"): lower-case letters, digits and
// hyphens, from a letter, at most 63.
func validLocation(l string) bool {
	return l != "" && len(l) <= 63 && l[0] >= 'a' && l[0] <= 'z' && strings.Trim(l, "abcdefghijklmnopqrstuvwxyz0123456789-") == ""
}

// unauthenticatedEvent: ee, a stream's error event, says the call's
// credentials were refused: Google's code 401 or status UNAUTHENTICATED,
// or Anthropic's authentication_error.
func unauthenticatedEvent(ee *EventError) bool {
	if ee.Type == "authentication_error" {
		return true
	}
	ge, ok := gemini.ParseError(ee.Body)
	return ok && (ge.Code == http.StatusUnauthorized || ge.Status == "UNAUTHENTICATED")
}
