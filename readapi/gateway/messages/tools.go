package messages

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/arr-dev/arr/domain/chat"
)

// parseTools reads tools: client tools ({name, description,
// input_schema}, type absent or "custom") become function tools, but for
// those marked defer_loading (loaded by a tool search, which chat
// completions do not have), which are left out. Anthropic's
// server tools (web search, code execution, …) and its client tools with
// a versioned type (bash_…, text_editor_…, computer_…) are refused: arr
// does not run them and no chat upstream knows their schemas.
func (r *Request) parseTools(raw map[string]json.RawMessage) error {
	v, ok := raw["tools"]
	if !ok || isNull(v) {
		return nil
	}
	var tools []struct {
		Type         *string         `json:"type"`
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"input_schema"`
		DeferLoading bool            `json:"defer_loading"`
	}
	if err := json.Unmarshal(v, &tools); err != nil {
		return invalid("invalid_type", "tools", "tools must be an array of {name, description, input_schema}")
	}
	seen := map[string]bool{}
	for i, t := range tools {
		tp := fmt.Sprintf("tools[%d]", i)
		if t.Type != nil && *t.Type != "custom" {
			if r.lenient {
				continue // a server tool: the upstream runs it
			}
			return invalid("unsupported_value", tp+".type", "tools of type %q are not supported: arr runs no server tools; declare a client tool ({name, description, input_schema}) and run it yourself", *t.Type)
		}
		if t.Name == "" {
			return invalid("invalid_value", tp+".name", "a tool needs a name")
		}
		if seen[t.Name] {
			return invalid("invalid_value", tp+".name", "tool names must be unique: %q appears twice", t.Name)
		}
		seen[t.Name] = true
		if t.DeferLoading {
			// A deferred tool is loaded only when a tool search finds it;
			// chat completions have no tool search: it is left out.
			continue
		}
		schema := bytes.TrimSpace(t.InputSchema)
		if len(schema) == 0 || schema[0] != '{' {
			return invalid("invalid_value", tp+".input_schema", "a tool needs input_schema, a JSON Schema object")
		}
		ct := chat.Tool{Type: "function", Function: chat.Function{Name: t.Name, Parameters: schema}}
		if t.Description != "" {
			d := t.Description
			ct.Function.Description = &d
		}
		r.tools = append(r.tools, ct)
	}
	return nil
}

// parseToolChoice reads tool_choice: auto, any (chat's required), tool
// with a name (chat's named function) or none; disable_parallel_tool_use
// becomes parallel_tool_calls false.
func (r *Request) parseToolChoice(raw map[string]json.RawMessage) error {
	v, ok := raw["tool_choice"]
	if !ok || isNull(v) {
		return nil
	}
	var tc struct {
		Type                   string `json:"type"`
		Name                   string `json:"name"`
		DisableParallelToolUse *bool  `json:"disable_parallel_tool_use"`
	}
	if err := json.Unmarshal(v, &tc); err != nil {
		return invalid("invalid_type", "tool_choice", "tool_choice must be an object: {\"type\": \"auto\" | \"any\" | \"tool\" | \"none\"}")
	}
	switch tc.Type {
	case "auto":
		r.toolChoice = "auto"
	case "any":
		r.toolChoice = "required"
	case "none":
		r.toolChoice = "none"
	case "tool":
		if tc.Name == "" {
			return invalid("invalid_value", "tool_choice.name", "tool_choice of type tool needs the tool's name")
		}
		found := false
		for _, t := range r.tools {
			found = found || t.Function.Name == tc.Name
		}
		if !found && r.lenient {
			return nil // a tool left out of the translation
		}
		if !found {
			return invalid("invalid_value", "tool_choice.name", "tool_choice names %q, which is not one of tools", tc.Name)
		}
		r.toolChoice = map[string]any{"type": "function", "function": map[string]string{"name": tc.Name}}
	default:
		return invalid("invalid_value", "tool_choice.type", "tool_choice.type must be auto, any, tool or none")
	}
	if tc.DisableParallelToolUse != nil && *tc.DisableParallelToolUse {
		f := false
		r.parallel = &f
	}
	return nil
}
