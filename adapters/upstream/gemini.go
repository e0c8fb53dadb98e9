package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/arr-dev/arr/adapters/upstream/translate/gemini"
	"github.com/arr-dev/arr/domain/routing"
)

// cloudPlatformScope is the OAuth2 scope of a Vertex AI call.
const cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

// ErrToken: no access token could be had for a Vertex AI call (the token
// server failed or refused the service account). Retryable, and counted
// by the model's breaker.
var ErrToken = errors.New("no Vertex AI access token")

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
// location or a credentials variable (not configured: skipped,
// retryable, no breaker).
func vertexModels(m routing.Model, publisher string) (string, error) {
	if m.Project == "" || m.Location == "" || m.CredentialsEnv == "" {
		return "", &Error{Model: m.ID, Retryable: true, Err: fmt.Errorf("%w: a Vertex AI model needs a project, a location and credentials_env", ErrNotConfigured)}
	}
	return "/projects/" + url.PathEscape(m.Project) + "/locations/" + url.PathEscape(m.Location) + "/publishers/" + publisher + "/models/", nil
}

// readServiceAccount is the default Config.ServiceAccount: the file the
// variable env names (its value read with key).
func readServiceAccount(key func(string) string) func(string) ([]byte, error) {
	return func(env string) ([]byte, error) {
		path := key(env)
		if path == "" {
			return nil, fmt.Errorf("%s is unset", env)
		}
		return os.ReadFile(path)
	}
}

// vertexToken is the token source of m's service account, made once per
// credentials variable: the account's JSON read with Config.ServiceAccount
// and taken as a service account only (google.CredentialsFromJSONWithType:
// no other credential kind, no metadata server, no default-credentials
// lookup), its tokens fetched from the JSON's token_uri through the
// client's transport, with the call timeout and without redirects. One
// it cannot read leaves the model not configured (skipped, no breaker).
func (c *Client) vertexToken(m routing.Model) (oauth2.TokenSource, error) {
	c.mu.Lock()
	ts, ok := c.tokens[m.CredentialsEnv]
	c.mu.Unlock()
	if ok {
		return ts, nil
	}
	notConfigured := func(err error) (oauth2.TokenSource, error) {
		return nil, &Error{Model: m.ID, Retryable: true, Err: fmt.Errorf("%w: the service account %s: %v", ErrNotConfigured, m.CredentialsEnv, err)}
	}
	data, err := c.cfg.ServiceAccount(m.CredentialsEnv)
	if err != nil {
		return notConfigured(err)
	}
	hc := &http.Client{Transport: c.http.Transport, CheckRedirect: c.http.CheckRedirect, Timeout: c.cfg.Timeout}
	// The source keeps this context for every refresh: it carries the
	// HTTP client only, never a call's deadline.
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, hc)
	creds, err := google.CredentialsFromJSONWithType(ctx, data, google.ServiceAccount, cloudPlatformScope)
	if err != nil {
		return notConfigured(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ts, ok := c.tokens[m.CredentialsEnv]; ok {
		return ts, nil
	}
	c.tokens[m.CredentialsEnv] = creds.TokenSource
	return creds.TokenSource, nil
}

// forgetToken drops the token source ts of credentials variable env
// (Vertex AI refused its token: revoked, or the account's key rotated),
// so the next call reads the account again and fetches a new token.
func (c *Client) forgetToken(env string, ts oauth2.TokenSource) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tokens[env] == ts {
		delete(c.tokens, env)
	}
}

// bearer sets the Authorization of a Vertex AI call from ts: the token
// server's failure is a retryable failure of the call.
func bearer(h http.Header, m routing.Model, ts oauth2.TokenSource) error {
	tok, err := ts.Token()
	if err != nil {
		return &Error{Model: m.ID, Retryable: true, Err: fmt.Errorf("%w: %v", ErrToken, err)}
	}
	h.Set("Authorization", "Bearer "+tok.AccessToken)
	return nil
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
// the client, status and body).
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
