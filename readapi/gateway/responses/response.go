package responses

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/arr-dev/arr/domain/chat"
)

// response is the Response object, fields in the official order. There
// is no output_text: the SDKs compute it from output.
type response struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	CreatedAt          int64             `json:"created_at"`
	Status             string            `json:"status"`
	Background         bool              `json:"background"`
	Error              *responseError    `json:"error"`
	IncompleteDetails  *incomplete       `json:"incomplete_details"`
	Instructions       *string           `json:"instructions"`
	MaxOutputTokens    *int64            `json:"max_output_tokens"`
	MaxToolCalls       *int64            `json:"max_tool_calls"`
	Model              string            `json:"model"`
	Output             []any             `json:"output"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	PreviousResponseID *string           `json:"previous_response_id"`
	PromptCacheKey     *string           `json:"prompt_cache_key,omitempty"`
	Reasoning          reasoningEcho     `json:"reasoning"`
	SafetyIdentifier   *string           `json:"safety_identifier,omitempty"`
	ServiceTier        string            `json:"service_tier"`
	Store              bool              `json:"store"`
	Temperature        *float64          `json:"temperature"`
	Text               textEcho          `json:"text"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	Tools              []functionTool    `json:"tools"`
	TopLogprobs        int               `json:"top_logprobs"`
	TopP               *float64          `json:"top_p"`
	Truncation         string            `json:"truncation"`
	Usage              *usage            `json:"usage"`
	User               *string           `json:"user"`
	Metadata           map[string]string `json:"metadata"`
	Routing            json.RawMessage   `json:"routing,omitempty"`
}

type responseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type incomplete struct {
	Reason string `json:"reason"`
}

type reasoningEcho struct {
	Effort  *string `json:"effort"`
	Summary *string `json:"summary"`
}

type textEcho struct {
	Format    json.RawMessage `json:"format"`
	Verbosity string          `json:"verbosity,omitempty"`
}

// usage is the Response's token counts.
type usage struct {
	InputTokens        int64 `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int64 `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int64 `json:"total_tokens"`
}

// usageOf is a chat usage in the Response's fields (nil: none).
func usageOf(c *chat.Usage) *usage {
	if c == nil {
		return nil
	}
	u := &usage{InputTokens: c.PromptTokens, OutputTokens: c.CompletionTokens, TotalTokens: c.TotalTokens}
	if u.TotalTokens == 0 {
		u.TotalTokens = c.PromptTokens + c.CompletionTokens
	}
	if c.PromptTokensDetails != nil {
		u.InputTokensDetails.CachedTokens = c.PromptTokensDetails.CachedTokens
	}
	if c.CompletionTokensDetails != nil {
		u.OutputTokensDetails.ReasoningTokens = c.CompletionTokensDetails.ReasoningTokens
	}
	return u
}

// Output items.
type messageItem struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Status  string `json:"status"`
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

type outputText struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
	Logprobs    []any  `json:"logprobs"`
}

type refusalPart struct {
	Type    string `json:"type"`
	Refusal string `json:"refusal"`
}

type callItem struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
}

func newText(s string) outputText {
	return outputText{Type: "output_text", Text: s, Annotations: []any{}, Logprobs: []any{}}
}

// itemID names the output item at index of response id: msg_... for a
// message, fc_... for a function call, sharing the response id's suffix.
func itemID(prefix, responseID string, index int) string {
	return fmt.Sprintf("%s_%s_%d", prefix, strings.TrimPrefix(responseID, "resp_"), index)
}

// skeleton is the Response with the request's echo fields set, in
// progress, without output.
func (r *Request) skeleton(id string, createdAt int64, model string) *response {
	if model == "" {
		model = r.model
	}
	parallel := r.parallel == nil || *r.parallel
	truncation := r.truncation
	if truncation == "" {
		truncation = "disabled"
	}
	meta := r.metadata
	if meta == nil {
		meta = map[string]string{}
	}
	tools := r.tools
	if tools == nil {
		tools = []functionTool{}
	}
	resp := &response{
		ID: id, Object: "response", CreatedAt: createdAt, Status: "in_progress", Instructions: r.instructions,
		MaxOutputTokens: r.maxOutput, Model: model, Output: []any{}, ParallelToolCalls: parallel,
		PromptCacheKey: r.promptCacheKey, SafetyIdentifier: r.safetyID, ServiceTier: "default",
		Temperature: r.temperature, Text: textEcho{Format: r.format, Verbosity: r.verbosity},
		ToolChoice: r.toolChoice, Tools: tools, TopP: r.topP, Truncation: truncation, User: r.user, Metadata: meta,
	}
	if r.effort != "" {
		e := r.effort
		resp.Reasoning.Effort = &e
	}
	return resp
}

// finishStatus maps a chat finish_reason to the Response's status.
func finishStatus(finish string) (string, *incomplete) {
	switch finish {
	case "length":
		return "incomplete", &incomplete{Reason: "max_output_tokens"}
	case "content_filter":
		return "incomplete", &incomplete{Reason: "content_filter"}
	}
	return "completed", nil
}

// FromChat turns a chat completion (with the gateway's routing object) into
// the Response object with id and created_at: a message item with the text
// (or refusal), then a function_call item per tool call; usage and routing
// carried over; status incomplete when the reply was cut by the token
// limit or the content filter.
func FromChat(completion []byte, req *Request, id string, createdAt int64) ([]byte, error) {
	cc, ch, err := chat.ReadCompletion(completion)
	if err != nil {
		return nil, err
	}
	resp := req.skeleton(id, createdAt, cc.Model)
	resp.Status, resp.IncompleteDetails = finishStatus(ch.FinishReason)
	msg := ch.Message
	hasText := msg.Content != nil && *msg.Content != ""
	hasRefusal := msg.Refusal != nil && *msg.Refusal != ""
	if hasText || hasRefusal || len(msg.ToolCalls) == 0 {
		item := messageItem{ID: itemID("msg", id, 0), Type: "message", Status: itemStatus(resp.Status), Role: "assistant", Content: []any{}}
		if hasText || !hasRefusal {
			text := ""
			if msg.Content != nil {
				text = *msg.Content
			}
			item.Content = append(item.Content, newText(text))
		}
		if hasRefusal {
			item.Content = append(item.Content, refusalPart{Type: "refusal", Refusal: *msg.Refusal})
		}
		resp.Output = append(resp.Output, item)
	}
	for i, tc := range msg.ToolCalls {
		idx := len(resp.Output)
		callID := tc.ID
		if callID == "" {
			callID = itemID("call", id, i)
		}
		resp.Output = append(resp.Output, callItem{ID: itemID("fc", id, idx), Type: "function_call", Status: "completed",
			Arguments: tc.Function.Arguments, CallID: callID, Name: tc.Function.Name})
	}
	resp.Usage = usageOf(cc.Usage)
	resp.Routing = cc.Routing
	return marshal(resp)
}

// marshal encodes v without escaping <, > and & (the text goes out as the
// model wrote it, as the chat route relays it).
func marshal(v any) ([]byte, error) { return chat.Marshal(v, chat.Verbatim) }

func itemStatus(responseStatus string) string {
	if responseStatus == "completed" {
		return "completed"
	}
	return "incomplete"
}
