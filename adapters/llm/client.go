package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/arr-dev/arr/domain"
)

// Config configures a Client.
type Config struct {
	// BaseURL ends before /chat/completions, e.g. http://127.0.0.1:8082/v1.
	BaseURL string
	APIKey  string
	// Timeout bounds one completion. Default 60s.
	Timeout time.Duration
	// Tracer starts a client span per completion and sends its W3C trace
	// context (traceparent) to the endpoint, so the answer service's
	// traces join the gateway's (trace.go); nil: neither.
	Tracer trace.Tracer
}

// Client calls one OpenAI-compatible endpoint.
type Client struct {
	cfg    Config
	client *http.Client
}

// New returns a Client.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(cfg.BaseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("LLM base URL must be an absolute http(s) URL, got %q", cfg.BaseURL)
	}
	cfg.BaseURL = u.String()
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	return &Client{cfg: cfg, client: &http.Client{Timeout: cfg.Timeout}}, nil
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is one chat completion.
type Request struct {
	Model       string
	Messages    []Message
	Temperature float64
	MaxTokens   int
	// QualityFloor is sent as quality_floor (arr's gateway's routing
	// extension) when positive.
	QualityFloor float64
	// ResponseFormat, when set, is sent as response_format: the reply is
	// asked to be JSON against a schema (OpenAI's structured outputs).
	ResponseFormat *ResponseFormat
}

// ResponseFormat is OpenAI's response_format of type json_schema.
type ResponseFormat struct {
	// Type is "json_schema".
	Type       string     `json:"type"`
	JSONSchema JSONSchema `json:"json_schema"`
}

// JSONSchema is response_format.json_schema.
type JSONSchema struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Schema is the JSON Schema's JSON text, sent as it is.
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict,omitempty"`
}

// Response is the first choice of a completion and what it cost.
type Response struct {
	Content          string
	Model            string
	PromptTokens     int64
	CompletionTokens int64
	// CostMicroUSD comes from the gateway's routing.cost_per_1k; 0 from
	// other servers.
	CostMicroUSD int64
}

type wireRequest struct {
	Model        string    `json:"model"`
	Messages     []Message `json:"messages"`
	Temperature  float64   `json:"temperature"`
	MaxTokens    int       `json:"max_tokens,omitempty"`
	QualityFloor float64   `json:"quality_floor,omitempty"`
	// ResponseFormat is response_format, absent when nil.
	ResponseFormat *ResponseFormat `json:"response_format,omitempty"`
}

type wireResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
		TotalTokens      int64 `json:"total_tokens"`
	} `json:"usage"`
	Routing *struct {
		CostPer1K float64 `json:"cost_per_1k"`
	} `json:"routing"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Complete sends one chat completion.
func (c *Client) Complete(ctx context.Context, r Request) (Response, error) {
	ctx, span := c.startSpan(ctx, r)
	resp, err := c.complete(ctx, r)
	if span != nil {
		endSpan(span, resp, err)
	}
	return resp, err
}

func (c *Client) complete(ctx context.Context, r Request) (Response, error) {
	resp, err := c.post(ctx, r.wire(), "application/json")
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	return c.oneBody(resp, func(string) {})
}

// wire is r as the endpoint reads it.
func (r Request) wire() wireRequest {
	return wireRequest{Model: r.Model, Messages: r.Messages, Temperature: r.Temperature, MaxTokens: r.MaxTokens, QualityFloor: r.QualityFloor,
		ResponseFormat: r.ResponseFormat}
}

// post sends a chat completion request (body, JSON) asking for accept and
// returns the response; the caller closes its body.
func (c *Client) post(ctx context.Context, body any, accept string) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.BaseURL+"/chat/completions", bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	c.inject(ctx, req.Header)
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, unavailable(err)
	}
	return resp, nil
}

func unavailable(err error) error {
	return fmt.Errorf("language model: %w: %w", domain.ErrUnavailable, err)
}
