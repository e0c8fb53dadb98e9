package gemini

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/arr-dev/arr/domain/chat"
	"github.com/arr-dev/arr/domain/routing"
)

// ErrNoCandidates: a reply with neither a candidate nor a blocked prompt.
var ErrNoCandidates = errors.New("gemini: a reply with no candidates")

// Completion is a GenerateContentResponse as a chat completion named
// model (the reply's modelVersion when ""), created at created (Unix
// seconds): one choice per candidate, its text parts (thoughts left out)
// as content, its functionCall parts as tool_calls, its finishReason as
// finish_reason; a prompt Gemini blocked is one empty choice with
// finish_reason content_filter.
func Completion(body []byte, model string, created int64) (chat.Completion, error) {
	var r response
	if err := json.Unmarshal(body, &r); err != nil {
		return chat.Completion{}, fmt.Errorf("gemini: reading the reply: %w", err)
	}
	if r.Error != nil {
		return chat.Completion{}, fmt.Errorf("gemini: the reply is an error: %s", r.Error.Message)
	}
	if model == "" {
		model = r.ModelVersion
	}
	c := chat.Completion{ID: completionID(r.ResponseID), Created: created, Model: model, Usage: usage(r.UsageMetadata)}
	if len(r.Candidates) == 0 {
		if r.PromptFeedback == nil || r.PromptFeedback.BlockReason == "" {
			return chat.Completion{}, ErrNoCandidates
		}
		empty := ""
		c.Choices = []chat.Choice{{Message: chat.ReplyMessage{Content: &empty}, FinishReason: "content_filter"}}
		return c, nil
	}
	for _, cand := range r.Candidates {
		text, calls := candidateParts(cand, r.ResponseID, 0)
		msg := chat.ReplyMessage{ToolCalls: calls}
		if text != "" || len(calls) == 0 {
			msg.Content = &text
		}
		c.Choices = append(c.Choices, chat.Choice{Index: cand.Index, Message: msg, FinishReason: finishReason(cand.FinishReason, len(calls) > 0)})
	}
	return c, nil
}

// CompletionBody is Completion encoded as OpenAI's chat.completion body.
func CompletionBody(body []byte, model string, created int64) ([]byte, error) {
	c, err := Completion(body, model, created)
	if err != nil {
		return nil, err
	}
	out := wireCompletion{ID: c.ID, Object: "chat.completion", Created: c.Created, Model: c.Model, Usage: c.Usage}
	for _, ch := range c.Choices {
		out.Choices = append(out.Choices, wireChoice{Index: ch.Index, FinishReason: ch.FinishReason,
			Message: wireMessage{Role: "assistant", Content: ch.Message.Content, ToolCalls: ch.Message.ToolCalls}})
	}
	return chat.Marshal(out, chat.Verbatim)
}

// OpenAI's chat.completion, as CompletionBody writes it.
type wireCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []wireChoice `json:"choices"`
	Usage   *chat.Usage  `json:"usage,omitempty"`
}

type wireChoice struct {
	Index        int         `json:"index"`
	Message      wireMessage `json:"message"`
	FinishReason string      `json:"finish_reason"`
}

type wireMessage struct {
	Role      string          `json:"role"`
	Content   *string         `json:"content"`
	ToolCalls []chat.ToolCall `json:"tool_calls,omitempty"`
}

// candidateParts is a candidate's text (thoughts left out) and its
// function calls as tool calls, numbered from first (a stream's calls so
// far).
func candidateParts(c candidate, responseID string, first int) (string, []chat.ToolCall) {
	if c.Content == nil {
		return "", nil
	}
	var text strings.Builder
	var calls []chat.ToolCall
	for _, p := range c.Content.Parts {
		switch {
		case p.FunctionCall != nil:
			args := "{}"
			var b bytes.Buffer
			if json.Compact(&b, p.FunctionCall.Args) == nil && b.Len() > 0 && b.String() != "null" {
				args = b.String()
			}
			id := p.FunctionCall.ID
			if !idSafe(id) {
				id = callID(responseID, c.Index, first+len(calls), p.FunctionCall.Name, args)
			}
			id += idSignature(p.ThoughtSignature)
			calls = append(calls, chat.ToolCall{ID: id, Type: "function", Function: chat.FunctionCall{Name: p.FunctionCall.Name, Arguments: args}})
		case p.Text != nil && !p.Thought:
			text.WriteString(*p.Text)
		}
	}
	return text.String(), calls
}

// callID is a tool call id made from the call: the same call of the same
// reply has the same id.
func callID(responseID string, candidate, n int, name, args string) string {
	h := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d\x00%s\x00%s", responseID, candidate, n, name, args))
	return "call_" + hex.EncodeToString(h[:12])
}

func completionID(responseID string) string {
	if responseID == "" {
		return "chatcmpl-gemini"
	}
	return "chatcmpl-" + responseID
}

// finishReason is a Gemini finishReason as a chat finish_reason: STOP is
// stop (tool_calls when the candidate calls a function), MAX_TOKENS is
// length, a safety, recitation or blocklist stop is content_filter, and
// any other (MALFORMED_FUNCTION_CALL, OTHER, …) is stop.
func finishReason(r string, calls bool) string {
	switch r {
	case "MAX_TOKENS":
		return "length"
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		return "content_filter"
	}
	if calls {
		return "tool_calls"
	}
	return "stop"
}

// usage is Gemini's usageMetadata as chat usage (nil: none): the prompt
// counts the tool-use prompt tokens too, the completion the thinking
// tokens (billed as output; reasoning_tokens tells them), and
// cached_tokens the cached content's tokens (part of the prompt's, as
// OpenAI counts them). Every count is clamped to [0,
// routing.MaxTokenCount] as routing.Tokens.Clamped does, and every sum
// of them saturates there too: an upstream's huge or negative counts
// never wrap a sum negative (a reply that credits the account).
func usage(u *usageMetadata) *chat.Usage {
	if u == nil {
		return nil
	}
	prompt := tokenSum(u.PromptTokenCount, u.ToolUsePromptTokenCount)
	thoughts := tokenSum(u.ThoughtsTokenCount)
	completion := tokenSum(u.CandidatesTokenCount, thoughts)
	return &chat.Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: tokenSum(prompt, completion),
		PromptTokensDetails:     &chat.PromptTokensDetails{CachedTokens: min(tokenSum(u.CachedContentTokenCount), prompt)},
		CompletionTokensDetails: &chat.CompletionTokensDetails{ReasoningTokens: thoughts}}
}

// tokenSum is the sum of counts, each clamped to [0,
// routing.MaxTokenCount], saturating at routing.MaxTokenCount (clamped,
// no two counts' sum can overflow).
func tokenSum(counts ...int64) int64 {
	var sum int64
	for _, n := range counts {
		sum = min(sum+min(max(n, 0), routing.MaxTokenCount), routing.MaxTokenCount)
	}
	return sum
}
