package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// emptySchema is the input_schema of a function declared without
// parameters.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// translateTools: function tools as Anthropic's client tools.
func translateTools(in *chatIn, out *messagesRequest) error {
	seen := map[string]bool{}
	for i, t := range in.Tools {
		tp := fmt.Sprintf("tools[%d]", i)
		if t.Type != "function" {
			return invalid("unsupported_value", tp+".type", "tools of type %q are not supported for this model: function only", t.Type)
		}
		name := t.Function.Name
		if name == "" {
			return invalid("invalid_value", tp+".function.name", "a tool needs a name")
		}
		if seen[name] {
			return invalid("invalid_value", tp+".function.name", "tool names must be unique: %q appears twice", name)
		}
		seen[name] = true
		schema := bytes.TrimSpace(t.Function.Parameters)
		switch {
		case len(schema) == 0 || string(schema) == "null":
			schema = emptySchema
		case schema[0] != '{':
			return invalid("invalid_value", tp+".function.parameters", "parameters must be a JSON Schema object")
		}
		var c bytes.Buffer
		_ = json.Compact(&c, schema)
		out.Tools = append(out.Tools, tool{Name: name, Description: t.Function.Description, InputSchema: c.Bytes(), Strict: t.Function.Strict})
	}
	return nil
}

// translateToolChoice: auto, none, required (any) and a named function
// (tool); parallel_tool_calls false as disable_parallel_tool_use. A
// choice without tools is dropped (auto, none) or refused.
func translateToolChoice(in *chatIn, out *messagesRequest) error {
	var tc *toolChoice
	raw := bytes.TrimSpace(in.ToolChoice)
	switch {
	case len(raw) == 0 || string(raw) == "null":
	case raw[0] == '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		typ, ok := map[string]string{"auto": "auto", "none": "none", "required": "any"}[s]
		if !ok {
			return invalid("invalid_value", "tool_choice", "tool_choice must be auto, none, required or a named function, not %q", s)
		}
		tc = &toolChoice{Type: typ}
	default:
		var named struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if json.Unmarshal(raw, &named) != nil || named.Type != "function" || named.Function.Name == "" {
			return invalid("unsupported_value", "tool_choice", `tool_choice must be auto, none, required or {"type":"function","function":{"name":…}} for this model (allowed_tools and custom tools are not supported)`)
		}
		if !hasTool(out.Tools, named.Function.Name) {
			return invalid("invalid_value", "tool_choice.function.name", "tool_choice names %q, which is not one of tools", named.Function.Name)
		}
		tc = &toolChoice{Type: "tool", Name: named.Function.Name}
	}
	if len(out.Tools) == 0 {
		if tc != nil && tc.Type != "auto" && tc.Type != "none" {
			return invalid("invalid_value", "tool_choice", "tool_choice %s needs tools", tc.Type)
		}
		return nil
	}
	if in.ParallelToolCalls != nil && !*in.ParallelToolCalls {
		if tc == nil {
			tc = &toolChoice{Type: "auto"}
		}
		tc.DisableParallelToolUse = tc.Type != "none"
	}
	out.ToolChoice = tc
	return nil
}

func hasTool(tools []tool, name string) bool {
	for _, t := range tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// translateResponseFormat: text is the default; json_schema is
// Anthropic's structured output (output_config.format); json_object has
// no equivalent (Anthropic's JSON output needs a schema) and is refused.
func translateResponseFormat(in *chatIn, out *messagesRequest) error {
	raw := bytes.TrimSpace(in.ResponseFormat)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	if json.Unmarshal(raw, &rf) != nil {
		return invalid("invalid_type", "response_format", "response_format must be an object with a type")
	}
	switch rf.Type {
	case "text":
		return nil
	case "json_object":
		return invalid("unsupported_value", "response_format.type", "response_format json_object is not supported for this model (Anthropic's JSON output needs a schema): send json_schema with the schema")
	case "json_schema":
		if rf.JSONSchema == nil || len(bytes.TrimSpace(rf.JSONSchema.Schema)) == 0 || bytes.TrimSpace(rf.JSONSchema.Schema)[0] != '{' {
			return invalid("invalid_value", "response_format.json_schema.schema", "response_format json_schema needs json_schema.schema, a JSON Schema object")
		}
		var c bytes.Buffer
		_ = json.Compact(&c, rf.JSONSchema.Schema)
		out.OutputConfig = &outputConfig{Format: outputFormat{Type: "json_schema", Schema: c.Bytes()}}
		return nil
	}
	return invalid("invalid_value", "response_format.type", "response_format.type must be text, json_schema or json_object, not %q", rf.Type)
}

// toolTurnWithoutThinking says whether the last assistant turn has a
// tool_use block: chat carries no thinking blocks (nor their signatures)
// back, so that turn starts with none, and with thinking enabled
// Anthropic refuses a final assistant turn with tool_use that does not
// start with a thinking block; nor may thinking be turned on in the middle
// of an assistant turn (a tool loop). Such a request is sent without
// thinking: the tool loop's turn ends as it began, and the next user
// turn thinks again.
func toolTurnWithoutThinking(turns []turn) bool {
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].Role != "assistant" {
			continue
		}
		for _, b := range turns[i].Content {
			if b.Type == "tool_use" {
				return true
			}
		}
		return false
	}
	return false
}

// thinkingBudgets are the thinking budgets of the reasoning efforts
// (none and minimal: no thinking).
var thinkingBudgets = map[string]int64{"none": 0, "minimal": 0, "low": 1024, "medium": 4096, "high": 16384, "xhigh": 32768}

// minThinking is Anthropic's smallest thinking budget.
const minThinking = 1024

// translateReasoning: reasoning_effort as extended thinking, its budget
// at most half of max_tokens (and at least 1024, below max_tokens), with
// the settings thinking refuses refused here. A conversation whose last
// assistant turn has tool_use gets no thinking (toolTurnWithoutThinking).
func translateReasoning(in *chatIn, out *messagesRequest) error {
	if in.ReasoningEffort == nil {
		return nil
	}
	budget, ok := thinkingBudgets[*in.ReasoningEffort]
	if !ok {
		return invalid("invalid_value", "reasoning_effort", "reasoning_effort must be none, minimal, low, medium, high or xhigh, not %q", *in.ReasoningEffort)
	}
	if budget == 0 || toolTurnWithoutThinking(out.Messages) {
		return nil
	}
	// Thinking counts in max_tokens: half of it at most is thought, so
	// that the answer has room (but never less than Anthropic's least).
	budget = min(budget, max(out.MaxTokens/2, minThinking))
	switch {
	case budget >= out.MaxTokens:
		return invalid("invalid_value", "reasoning_effort", "reasoning_effort needs max_completion_tokens above %d for this model (its thinking budget is at least %d tokens and below max_tokens)", minThinking, minThinking)
	case out.Temperature != nil && *out.Temperature != 1:
		return invalid("unsupported_value", "temperature", "temperature must be 1 or unset with reasoning_effort for this model (Anthropic's extended thinking)")
	case out.TopP != nil && *out.TopP < 0.95:
		return invalid("unsupported_value", "top_p", "top_p must be at least 0.95 or unset with reasoning_effort for this model (Anthropic's extended thinking)")
	case out.ToolChoice != nil && (out.ToolChoice.Type == "any" || out.ToolChoice.Type == "tool"):
		return invalid("unsupported_value", "tool_choice", "tool_choice must be auto or none with reasoning_effort for this model (Anthropic's extended thinking cannot be forced to a tool)")
	}
	out.Thinking = &thinking{Type: "enabled", BudgetTokens: budget}
	return nil
}
