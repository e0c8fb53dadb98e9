package llm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
)

// Stream sends one chat completion with stream:true and calls delta with
// the content of each chunk as it arrives (server-sent events, "data:
// {...}" lines up to "data: [DONE]"). It returns the whole completion as
// Complete would: the content is every delta joined; the usage and cost
// are those of the chunk that carries them (stream_options.include_usage).
// A completion that fails before its first delta fails like Complete; one
// that fails after it returns the error (wrapping domain.ErrUnavailable)
// and the deltas delivered stay delivered.
func (c *Client) Stream(ctx context.Context, r Request, delta func(string)) (Response, error) {
	ctx, span := c.startSpan(ctx, r)
	resp, err := c.stream(ctx, r, delta)
	if span != nil {
		endSpan(span, resp, err)
	}
	return resp, err
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireStreamRequest struct {
	wireRequest
	Stream        bool          `json:"stream"`
	StreamOptions streamOptions `json:"stream_options"`
}

type wireChunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
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

func (c *Client) stream(ctx context.Context, r Request, delta func(string)) (Response, error) {
	resp, err := c.post(ctx, wireStreamRequest{
		wireRequest: r.wire(),
		Stream:      true, StreamOptions: streamOptions{IncludeUsage: true},
	}, "text/event-stream")
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return c.oneBody(resp, delta) // an error, or a server that answered with one JSON body
	}
	var (
		content            strings.Builder
		model              string
		prompt, completion int64
		total              int64
		routing            *struct {
			CostPer1K float64 `json:"cost_per_1k"`
		}
	)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	done := false
	for !done && sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data:")
		if !ok {
			continue // event names, ids, comments, blank separators
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			done = true
			break
		}
		var ch wireChunk
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			return Response{}, unavailable(fmt.Errorf("a chunk is not JSON: %w", err))
		}
		if ch.Error != nil {
			return Response{}, unavailable(fmt.Errorf("the stream failed: %s", ch.Error.Message))
		}
		if ch.Model != "" {
			model = ch.Model
		}
		if ch.Usage != nil {
			prompt, completion, total = ch.Usage.PromptTokens, ch.Usage.CompletionTokens, ch.Usage.TotalTokens
		}
		if ch.Routing != nil {
			routing = ch.Routing
		}
		if len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
			content.WriteString(ch.Choices[0].Delta.Content)
			delta(ch.Choices[0].Delta.Content)
		}
	}
	if err := sc.Err(); err != nil {
		return Response{}, unavailable(err)
	}
	if !done {
		return Response{}, unavailable(errors.New("the stream ended before [DONE]"))
	}
	if strings.TrimSpace(content.String()) == "" {
		return Response{}, unavailable(errors.New("no content in the completion"))
	}
	return c.response(content.String(), model, prompt, completion, total, routing), nil
}

// oneBody reads a response that is not a stream: an error status, or a
// server that answered with one JSON completion (passed on as one delta).
func (c *Client) oneBody(resp *http.Response, delta func(string)) (Response, error) {
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return Response{}, unavailable(err)
	}
	var w wireResponse
	if err := json.Unmarshal(raw, &w); err != nil {
		return Response{}, unavailable(fmt.Errorf("status %d, body is not JSON: %w", resp.StatusCode, err))
	}
	if resp.StatusCode != http.StatusOK {
		msg := ""
		if w.Error != nil {
			msg = w.Error.Message
		}
		return Response{}, unavailable(fmt.Errorf("status %d: %s", resp.StatusCode, msg))
	}
	if len(w.Choices) == 0 || strings.TrimSpace(w.Choices[0].Message.Content) == "" {
		return Response{}, unavailable(errors.New("no choices in the completion"))
	}
	delta(w.Choices[0].Message.Content)
	return c.response(w.Choices[0].Message.Content, w.Model, w.Usage.PromptTokens, w.Usage.CompletionTokens, w.Usage.TotalTokens, w.Routing), nil
}

// response is a completion's Response; its cost comes from the gateway's
// routing.cost_per_1k.
func (c *Client) response(content, model string, prompt, completion, total int64, routing *struct {
	CostPer1K float64 `json:"cost_per_1k"`
}) Response {
	out := Response{Content: content, Model: model, PromptTokens: prompt, CompletionTokens: completion}
	if routing != nil && routing.CostPer1K > 0 {
		if total == 0 {
			total = prompt + completion
		}
		out.CostMicroUSD = int64(math.Round(float64(total) / 1000 * routing.CostPer1K * 1e6))
	}
	return out
}
