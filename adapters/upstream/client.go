package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/sony/gobreaker/v2"
	"go.opentelemetry.io/otel/trace"

	"github.com/arr-dev/arr/domain/anthropic"
	"github.com/arr-dev/arr/domain/routing"
)

// Config configures a Client.
type Config struct {
	// Timeout bounds the wait for the response headers, and for a
	// non-streamed reply the whole body. Default 60s.
	Timeout time.Duration
	// StreamIdleTimeout bounds the gap between two chunks of a stream.
	// Default 60s.
	StreamIdleTimeout time.Duration
	// BreakerFailures is how many failures in a row open an upstream's
	// breaker. Default 5.
	BreakerFailures uint32
	// BreakerOpenFor is how long an open breaker refuses calls before it
	// lets one probe through. Default 30s.
	BreakerOpenFor time.Duration
	// APIKey returns the value of an API-key variable named in the
	// catalog; nil sends no key.
	APIKey func(env string) string
	// KeyRequired says whether a model whose API-key variable is empty is
	// not configured: it is skipped (a retryable failure, so failover goes
	// on) without a call that could only be refused. nil: never required.
	KeyRequired func(env string) bool
	// ServiceAccount returns the service-account JSON of a Vertex AI
	// model's credentials variable; nil reads the file the variable
	// names (its value read with APIKey).
	ServiceAccount func(env string) ([]byte, error)
	// Transport overrides the HTTP transport (tests).
	Transport http.RoundTripper
	// AWSCredentials signs Bedrock calls (APIBedrock); nil: the standard
	// AWS credential chain (environment, shared config and credentials
	// files, a profile's credential_process, SSO, web identity, container
	// credentials), loaded on the first Bedrock call and again after
	// Bedrock refused its credentials (a 403 for an unknown key, a wrong
	// signature, an expired token). Each retrieval is bounded by Timeout;
	// a failure is the call's ErrNotConfigured, named by its kind only
	// (the SDK's text, which may quote a credential_process's output, is
	// never kept).
	AWSCredentials aws.CredentialsProvider
	// AWSUseIMDS lets that chain ask the EC2 instance metadata service
	// (off by default: off EC2 it is a network call to a link-local
	// address on every miss).
	AWSUseIMDS bool
	// Tracer starts a client span per call and sends its W3C trace
	// context (traceparent) to the upstream (trace.go); nil: neither.
	Tracer trace.Tracer
	Logger *slog.Logger
}

// Validate fills in defaults and reports every setting out of range at
// once.
func (c *Config) Validate() error {
	if c.Timeout == 0 {
		c.Timeout = 60 * time.Second
	}
	if c.StreamIdleTimeout == 0 {
		c.StreamIdleTimeout = 60 * time.Second
	}
	if c.BreakerFailures == 0 {
		c.BreakerFailures = 5
	}
	if c.BreakerOpenFor == 0 {
		c.BreakerOpenFor = 30 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.APIKey == nil {
		c.APIKey = func(string) string { return "" }
	}
	if c.ServiceAccount == nil {
		c.ServiceAccount = readServiceAccount(c.APIKey)
	}
	var errs []error
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"Timeout", c.Timeout}, {"StreamIdleTimeout", c.StreamIdleTimeout}, {"BreakerOpenFor", c.BreakerOpenFor}} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("upstream: %s is negative (%s)", f.name, f.v))
		}
	}
	if c.BreakerFailures < 0 {
		errs = append(errs, fmt.Errorf("upstream: BreakerFailures is negative (%d)", c.BreakerFailures))
	}
	return errors.Join(errs...)
}

// Client calls upstreams. Safe for concurrent use.
type Client struct {
	cfg  Config
	http *http.Client

	mu       sync.Mutex
	breakers map[string]*gobreaker.TwoStepCircuitBreaker[struct{}]
	// auths hold the Vertex AI access tokens, by credentials variable
	// (vertexauth.go).
	auths map[string]*vertexAuth
	// awsChain is the AWS credential chain once loaded (bedrock.go).
	awsChain *awsChain
}

// New returns a Client.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	tr := cfg.Transport
	if tr == nil {
		tr = &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:          1024,
			MaxIdleConnsPerHost:   512,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: cfg.Timeout,
			ForceAttemptHTTP2:     true,
		}
	}
	// Redirects are never followed: a redirect would re-send the key
	// (net/http drops Authorization on another host, not x-api-key) and
	// the client's prompt wherever the Location names. A 3xx is the
	// upstream's failure (refusal).
	noRedirects := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Client{cfg: cfg, http: &http.Client{Transport: tr, CheckRedirect: noRedirects}, breakers: map[string]*gobreaker.TwoStepCircuitBreaker[struct{}]{}, auths: map[string]*vertexAuth{}}, nil
}

// Error is a failed upstream call.
type Error struct {
	Model string
	// Status is the upstream's HTTP status (0: no response).
	Status int
	// Body is the upstream's error body (for non-retryable errors, passed
	// on to the client).
	Body []byte
	// Retryable: try the next upstream.
	Retryable bool
	// Type is the kind the upstream's error body names, when it names one
	// (Anthropic's error.type: "overloaded_error", "invalid_request_error").
	Type string
	Err  error
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("upstream %s: HTTP %d: %v", e.Model, e.Status, e.Err)
	}
	return fmt.Sprintf("upstream %s: %v", e.Model, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrBreakerOpen is the Err of a call refused by an open breaker.
var ErrBreakerOpen = errors.New("circuit breaker open")

// Response is an upstream's successful answer. For a stream, Body is the
// SSE stream and must be closed; Next reads it.
type Response struct {
	Model  routing.Model
	Status int
	Header http.Header
	// Data is the whole body of a non-streamed reply.
	Data []byte
	// Stream is set for a streamed reply.
	Stream *Stream
	// FirstByte is the time from sending to the response headers.
	FirstByte time.Duration
	// Usage is an Anthropic reply's usage, read from Data, or a Bedrock
	// reply's, in the same terms (nil for other APIs and for streams,
	// whose Stream.Usage counts as it goes).
	Usage *anthropic.Usage
}

func (c *Client) breaker(m routing.Model) *gobreaker.TwoStepCircuitBreaker[struct{}] {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.breakers[m.ID]
	if !ok {
		failures := c.cfg.BreakerFailures
		log := c.cfg.Logger
		b = gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
			Name: m.ID, MaxRequests: 1, Timeout: c.cfg.BreakerOpenFor,
			ReadyToTrip: func(cn gobreaker.Counts) bool { return cn.ConsecutiveFailures >= failures },
			// A call its caller gave up on says nothing of the upstream.
			IsExcluded: func(err error) bool { return errors.Is(err, errCallerLeft) },
			OnStateChange: func(name string, from, to gobreaker.State) {
				log.Warn("upstream circuit breaker", "model", name, "from", from.String(), "to", to.String())
			},
		})
		c.breakers[m.ID] = b
	}
	return b
}

// BreakerStates returns each upstream model's breaker state ("closed",
// "open" or "half-open"); models never called are left out.
func (c *Client) BreakerStates() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]string, len(c.breakers))
	for id, b := range c.breakers {
		out[id] = b.State().String()
	}
	return out
}

// Complete sends body (an OpenAI chat-completion request, model already
// set to the upstream's id) to m. With stream it returns once the headers
// arrived and the caller reads Response.Stream. It is Do with an OpenAI
// Request.
func (c *Client) Complete(ctx context.Context, m routing.Model, body []byte, stream bool) (*Response, error) {
	return c.Do(ctx, m, Request{Body: body, Stream: stream})
}

// Do sends r to m in r's API: an OpenAI chat completion to
// {base_url}/chat/completions, an Anthropic message to {base_url}/messages
// (anthropic.go), a Gemini GenerateContentRequest to the Gemini API or
// Vertex AI (gemini.go), a chat completion to an Azure OpenAI deployment
// (azure.go) or to Bedrock (bedrock.go). Every API goes through m's one breaker, with the same
// key check and timeouts. With r.Stream it returns once the headers
// arrived and the caller reads Response.Stream.
func (c *Client) Do(ctx context.Context, m routing.Model, r Request) (*Response, error) {
	ep, err := chatEndpoint(m, r)
	if err != nil {
		return nil, err
	}
	if ep.vertex {
		ep.auth = c.vertexAuth(m.CredentialsEnv)
	}
	ctx, span := c.startAttempt(ctx, "chat", m, r.Stream)
	resp, err := c.send(ctx, m, ep, r)
	if span != nil {
		endAttempt(span, resp, err)
	}
	return resp, err
}

// The largest replies read: a longer one is a failed attempt. An
// embeddings reply of 2048 inputs of 3072 numbers as JSON text is about
// 75 MiB.
const (
	maxChatReply       = 32 << 20
	maxEmbeddingsReply = 128 << 20
	// openAIStreamReplies: an OpenAI chat stream may be this many times
	// the longest reply (each token a chunk of ~200 bytes of JSON: 256
	// MiB is over a million tokens); one event, at most the longest reply.
	openAIStreamReplies = 8
)

// endpoint is an upstream route, its API and the largest reply read from
// it.
type endpoint struct {
	path     string
	maxReply int64
	api      API
	// vertex: a Vertex AI call, authorized by an access token of auth
	// (no API key, the Anthropic version in the body).
	vertex bool
	auth   *vertexAuth
	// body replaces the Request's (nil: none): Anthropic's on Vertex AI.
	body []byte
	// bedrock is a Bedrock call's translated body and signing (nil for
	// other APIs).
	bedrock *bedrockCall
}

// Embed sends body (an OpenAI embeddings request, model already set to the
// upstream's id) to m's /embeddings, with the same key check, breaker and
// timeout as a completion, in an attempt span of its own; Response.Data is
// the whole reply.
func (c *Client) Embed(ctx context.Context, m routing.Model, body []byte) (*Response, error) {
	ctx, span := c.startAttempt(ctx, "embeddings", m, false)
	resp, err := c.send(ctx, m, endpoint{path: "/embeddings", maxReply: maxEmbeddingsReply, api: APIOpenAI}, Request{Body: body})
	if span != nil {
		endAttempt(span, resp, err)
	}
	return resp, err
}

// send posts body to path under m's base URL through m's breaker.
func (c *Client) send(ctx context.Context, m routing.Model, ep endpoint, r Request) (*Response, error) {
	if m.APIKeyEnv != "" && c.cfg.KeyRequired != nil && c.cfg.KeyRequired(m.APIKeyEnv) && c.cfg.APIKey(m.APIKeyEnv) == "" {
		return nil, &Error{Model: m.ID, Retryable: true, Err: fmt.Errorf("%w: %s is unset", ErrNotConfigured, m.APIKeyEnv)}
	}
	if m.API == routing.APIAzureOpenAI && m.CredentialsEnv != "" && c.cfg.KeyRequired != nil && c.cfg.KeyRequired(m.CredentialsEnv) &&
		c.cfg.APIKey(m.CredentialsEnv) == "" && (m.APIKeyEnv == "" || c.cfg.APIKey(m.APIKeyEnv) == "") {
		// No Entra ID token and no api-key: the call would carry no
		// credential at all.
		return nil, &Error{Model: m.ID, Retryable: true, Err: fmt.Errorf("%w: %s is unset", ErrNotConfigured, m.CredentialsEnv)}
	}
	if ep.bedrock != nil {
		if err := c.prepareBedrock(ctx, m, ep.bedrock); err != nil {
			return nil, err
		}
	}
	done, err := c.breaker(m).Allow()
	if err != nil {
		return nil, &Error{Model: m.ID, Retryable: true, Err: fmt.Errorf("%w: %v", ErrBreakerOpen, err)}
	}
	resp, err := c.call(ctx, m, ep, r)
	var ue *Error
	switch {
	case err != nil && ctx.Err() != nil:
		// The caller left (hung up, or its own deadline passed) before
		// the upstream answered: neither a failure nor a success of it.
		done(errCallerLeft)
	case errors.Is(err, ErrNotConfigured):
		// Found only once the call began (a Vertex AI service account
		// that cannot be read): the model is skipped, the upstream was
		// never asked.
		done(errCallerLeft)
	case err != nil && errors.As(err, &ue) && ue.Retryable:
		done(err)
	default:
		done(nil)
	}
	return resp, err
}

// transportError is a transport's failure told without the address it
// was sent to (the catalog's base_url, a proxy's host and port): its
// text names what failed only; errors.Is and As still see the cause.
type transportError struct{ err error }

func (e transportError) Unwrap() error { return e.err }

func (e transportError) Error() string {
	err := e.err
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return "the host name did not resolve"
	}
	var op *net.OpError
	if errors.As(err, &op) {
		if op.Err == nil {
			return op.Op + " failed"
		}
		return op.Op + ": " + transportError{op.Err}.Error()
	}
	return err.Error()
}

// errCallerLeft is what the breaker is told of a call whose caller's
// context ended first (excluded from its counts).
var errCallerLeft = errors.New("the caller left")

// ErrNotConfigured: the model's API-key variable is empty.
var ErrNotConfigured = errors.New("not configured")

func (c *Client) call(ctx context.Context, m routing.Model, ep endpoint, r Request) (*Response, error) {
	fail := func(status int, b []byte, retry bool, err error) (*Response, error) {
		return nil, &Error{Model: m.ID, Status: status, Body: b, Retryable: retry, Err: err}
	}
	var cancel context.CancelFunc
	var idle *time.Timer
	if r.Stream {
		ctx, cancel = context.WithCancel(ctx)
		idle = time.AfterFunc(c.cfg.Timeout, cancel)
	} else {
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
	}
	req, token, err := c.request(ctx, m, ep, r)
	if err != nil {
		cancel()
		return nil, err
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		cancel()
		return fail(0, nil, true, fmt.Errorf("no response: %w", transportError{err}))
	}
	firstByte := time.Since(start)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		cancel()
		if ep.auth != nil && resp.StatusCode == http.StatusUnauthorized {
			ep.auth.forget(token)
		}
		if ep.api == APIGemini {
			return nil, geminiRefusal(m, resp.StatusCode, b)
		}
		if ep.api == APIBedrock {
			return nil, c.bedrockRefusal(m, ep.bedrock, resp.StatusCode, resp.Header, b)
		}
		return nil, refusal(m, ep.api, resp.StatusCode, b)
	}
	out := &Response{Model: m, Status: resp.StatusCode, Header: resp.Header, FirstByte: firstByte}
	if (ep.api != APIOpenAI && ep.api != APIBedrock && isEventStream(resp.Header) != r.Stream) || (ep.api == APIBedrock && !hasType(resp.Header, bedrockReplyType(r.Stream))) {
		resp.Body.Close()
		cancel()
		return fail(resp.StatusCode, nil, true, fmt.Errorf("a reply of type %q to a request with stream %v", resp.Header.Get("Content-Type"), r.Stream))
	}
	if r.Stream {
		idle.Reset(c.cfg.StreamIdleTimeout)
		total := ep.maxReply * openAIStreamReplies
		if ep.api != APIOpenAI {
			total = ep.maxReply
		}
		out.Stream = newStream(resp.Body, ep.maxReply, total, func() { idle.Reset(c.cfg.StreamIdleTimeout) }, func() { idle.Stop(); cancel() })
		return startStream(m, ep, token, out)
	}
	defer cancel()
	defer resp.Body.Close()
	out.Data, err = io.ReadAll(io.LimitReader(resp.Body, ep.maxReply+1))
	if err != nil {
		return fail(resp.StatusCode, nil, true, fmt.Errorf("reading the reply: %w", err))
	}
	if int64(len(out.Data)) > ep.maxReply {
		return fail(resp.StatusCode, nil, true, fmt.Errorf("the reply is over %d MiB", ep.maxReply>>20))
	}
	if ep.api == APIAnthropic {
		u, err := anthropic.ReplyUsage(out.Data)
		if err != nil {
			return fail(resp.StatusCode, nil, true, err)
		}
		out.Usage = &u
	}
	if ep.api == APIBedrock {
		return bedrockReply(m, out, ep.bedrock)
	}
	return out, nil
}

// request is the HTTP request of a call to ep: its body, headers and
// authorization (a key, a Vertex AI token, a Bedrock signature), with
// the Vertex AI token it carries ("": none); an error is an *Error.
func (c *Client) request(ctx context.Context, m routing.Model, ep endpoint, r Request) (*http.Request, string, error) {
	body := r.Body
	if ep.body != nil {
		body = ep.body
	}
	url, streamType := m.BaseURL+ep.path, "text/event-stream"
	if ep.bedrock != nil {
		url, body, streamType = ep.bedrock.url+ep.path, ep.bedrock.body, bedrockEventStream
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, "", &Error{Model: m.ID, Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	if r.Stream {
		req.Header.Set("Accept", streamType)
	}
	c.inject(ctx, req.Header)
	c.authorize(req.Header, m, ep, r)
	token := ""
	if ep.auth != nil {
		if token, err = c.accessToken(ctx, m, ep.auth); err != nil {
			return nil, "", err
		}
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if ep.bedrock != nil {
		if err := ep.bedrock.sign(ctx, req); err != nil {
			return nil, "", &Error{Model: m.ID, Retryable: true, Err: err}
		}
	}
	return req, token, nil
}

// startStream reads the first event of an Anthropic, Gemini or Bedrock
// stream (anthropicStart, geminiStart, bedrockStart) before the call counts as answered; an
// error event there that says the access token of a Vertex AI call is
// refused (401, UNAUTHENTICATED, authentication_error) drops it, as a
// 401 answer does.
func startStream(m routing.Model, ep endpoint, token string, out *Response) (*Response, error) {
	var err error
	switch ep.api {
	case APIAnthropic:
		out, err = anthropicStart(m, out)
	case APIGemini:
		out, err = geminiStart(m, out)
	case APIBedrock:
		out, err = bedrockStart(m, out, ep.bedrock)
	}
	var ee *EventError
	if ep.auth != nil && errors.As(err, &ee) && unauthenticatedEvent(ee) {
		ep.auth.forget(token)
	}
	return out, err
}

// authorize sets the key (and, for Anthropic, the version and beta
// headers) of a call to ep. A Vertex AI call has no key (call sets its
// access token) and, for Anthropic, its version in the body.
func (c *Client) authorize(h http.Header, m routing.Model, ep endpoint, r Request) {
	api := ep.api
	if ep.vertex {
		if api == APIAnthropic && len(r.AnthropicBeta) > 0 {
			h.Set("Anthropic-Beta", strings.Join(r.AnthropicBeta, ","))
		}
		return
	}
	key := ""
	if m.APIKeyEnv != "" {
		key = c.cfg.APIKey(m.APIKeyEnv)
	}
	switch api {
	case APIGemini:
		if key != "" {
			h.Set("X-Goog-Api-Key", key)
		}
		return
	case APIBedrock:
		return // signed (bedrock.go)
	case APIAzureOpenAI:
		c.authorizeAzure(h, m, key)
		return
	case APIAnthropic:
	default:
		if key != "" {
			h.Set("Authorization", "Bearer "+key)
		}
		return
	}
	if key != "" {
		h.Set("X-Api-Key", key)
	}
	version := r.AnthropicVersion
	if version == "" {
		version = anthropic.DefaultVersion
	}
	h.Set("Anthropic-Version", version)
	if len(r.AnthropicBeta) > 0 {
		h.Set("Anthropic-Beta", strings.Join(r.AnthropicBeta, ","))
	}
}

// operatorsRefusal says whether an Anthropic 400 is about the operator's
// account, not the client's request: "Your credit balance is too low to
// access the Anthropic API" (invalid_request_error, as Anthropic sends
// it). It is retryable: another upstream is tried, the breaker counts
// it, and the client never sees the operator's billing state.
func operatorsRefusal(status int, b []byte) bool {
	body, ok := anthropic.ParseError(b)
	return ok && status == http.StatusBadRequest && strings.Contains(strings.ToLower(body.Error.Message), "credit balance")
}

// refusal is the Error of an answer with status other than 200 and body
// b: 5xx (Anthropic's 529 overloaded among them), 429, 408 and a 3xx
// (redirects are not followed) are retryable (another upstream is tried;
// the breaker counts them), as are 401, 403 and 404 in every API (the
// operator's key, its rights or the catalog's model id, Azure's
// deployment or api-version: never the client's request, so never passed
// on); any other status is the request's own fault, passed on with its
// body.
func refusal(m routing.Model, api API, status int, b []byte) *Error {
	retry := status >= 500 || status < 400 || status == http.StatusTooManyRequests || status == http.StatusRequestTimeout
	if api == APIAnthropic && operatorsRefusal(status, b) {
		retry = true
	}
	if status == http.StatusUnauthorized || status == http.StatusForbidden || status == http.StatusNotFound {
		// The operator's key or the catalog's upstream_model, not the
		// client's request: another upstream is tried, the breaker counts
		// it, and the client never sees the upstream's words.
		retry = true
	}
	e := &Error{Model: m.ID, Status: status, Body: b, Retryable: retry, Err: fmt.Errorf("%s", http.StatusText(status))}
	if api == APIAnthropic {
		text := http.StatusText(status)
		if status == anthropic.StatusOverloaded {
			text = "Overloaded"
		}
		if body, ok := anthropic.ParseError(b); ok {
			e.Type = body.Error.Type
			text += " (" + body.Error.Type + ")"
		}
		e.Err = errors.New(text)
	}
	return e
}
