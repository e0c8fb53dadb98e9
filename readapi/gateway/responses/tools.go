package responses

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/arr-dev/arr/domain/chat"
)

// functionTool is a function tool as the Response echoes it.
type functionTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description *string         `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict"`
}

// validName: 1 to 64 letters, digits, _ or - (OpenAI's rule for tool and
// schema names).
func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func (r *Request) parseTools(raw map[string]json.RawMessage) error {
	v, ok := raw["tools"]
	if !ok || isNull(v) {
		return nil
	}
	var tools []map[string]json.RawMessage
	if err := json.Unmarshal(v, &tools); err != nil {
		return invalid("invalid_type", "tools", "tools must be an array of function tools: {\"type\":\"function\",\"name\",\"parameters\",...}")
	}
	seen := map[string]bool{}
	for i, t := range tools {
		param := fmt.Sprintf("tools[%d]", i)
		var typ string
		if err := json.Unmarshal(t["type"], &typ); err != nil {
			return invalid("invalid_type", param+".type", "each tool needs a type (arr serves \"function\")")
		}
		if typ != "function" {
			return invalid("unsupported_tool", param+".type", "tools of type %q are not supported: arr serves function tools only (type \"function\"); OpenAI's hosted tools (web_search, file_search, code_interpreter, computer_use, image_generation, mcp, shell, ...) run on OpenAI's servers, so define a function tool and run it yourself", typ)
		}
		ft := functionTool{Type: "function"}
		if err := json.Unmarshal(t["name"], &ft.Name); err != nil || !validName(ft.Name) {
			return invalid("invalid_value", param+".name", "a function tool needs a name of 1 to 64 letters, digits, _ or -")
		}
		if seen[ft.Name] {
			return invalid("invalid_value", param+".name", "two tools are named %q; tool names must be unique", ft.Name)
		}
		seen[ft.Name] = true
		if d, ok := t["description"]; ok && !isNull(d) {
			var s string
			if err := json.Unmarshal(d, &s); err != nil {
				return invalid("invalid_type", param+".description", "description must be a string")
			}
			ft.Description = &s
		}
		if p, ok := t["parameters"]; ok && !isNull(p) {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(p, &obj); err != nil {
				return invalid("invalid_type", param+".parameters", "parameters must be a JSON Schema object")
			}
			ft.Parameters = compact(p)
		}
		if s, ok := t["strict"]; ok && !isNull(s) {
			var b bool
			if err := json.Unmarshal(s, &b); err != nil {
				return invalid("invalid_type", param+".strict", "strict must be a boolean")
			}
			ft.Strict = &b
		}
		r.tools = append(r.tools, ft)
	}
	return nil
}

func (r *Request) hasTool(name string) bool {
	for _, t := range r.tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// parseToolChoice reads tool_choice: none, auto, required, a function
// {"type":"function","name"} or allowed_tools over function tools.
func (r *Request) parseToolChoice(raw map[string]json.RawMessage) error {
	r.toolChoice = json.RawMessage(`"auto"`)
	v, ok := raw["tool_choice"]
	if !ok || isNull(v) {
		return nil
	}
	if v[0] == '"' {
		var s string
		_ = json.Unmarshal(v, &s)
		switch s {
		case "none", "auto":
		case "required":
			if len(r.tools) == 0 {
				return invalid("invalid_value", "tool_choice", "tool_choice \"required\" needs tools")
			}
		default:
			return invalid("invalid_value", "tool_choice", "tool_choice must be none, auto, required or {\"type\":\"function\",\"name\":...}")
		}
		r.toolChoice = compact(v)
		if len(r.tools) > 0 {
			r.chatToolChoice = s
		}
		return nil
	}
	var tc struct {
		Type  string `json:"type"`
		Name  string `json:"name"`
		Mode  string `json:"mode"`
		Tools []struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(v, &tc); err != nil {
		return invalid("invalid_type", "tool_choice", "tool_choice must be none, auto, required or {\"type\":\"function\",\"name\":...}")
	}
	switch tc.Type {
	case "function":
		if !r.hasTool(tc.Name) {
			return invalid("invalid_value", "tool_choice.name", "tool_choice names the function %q, which is not among tools", tc.Name)
		}
		r.toolChoice, _ = json.Marshal(map[string]string{"type": "function", "name": tc.Name})
		r.chatToolChoice = chat.NamedToolChoice{Type: "function", Function: chat.FunctionName{Name: tc.Name}}
	case "allowed_tools":
		if tc.Mode != "auto" && tc.Mode != "required" {
			return invalid("invalid_value", "tool_choice.mode", "allowed_tools needs mode auto or required")
		}
		var allowed []chat.NamedToolChoice
		for i, t := range tc.Tools {
			if t.Type != "function" || !r.hasTool(t.Name) {
				return invalid("invalid_value", fmt.Sprintf("tool_choice.tools[%d]", i), "allowed_tools may list only function tools among tools ({\"type\":\"function\",\"name\":...})")
			}
			allowed = append(allowed, chat.NamedToolChoice{Type: "function", Function: chat.FunctionName{Name: t.Name}})
		}
		if len(allowed) == 0 {
			return invalid("invalid_value", "tool_choice.tools", "allowed_tools needs at least one tool")
		}
		r.toolChoice = compact(v)
		r.chatToolChoice = map[string]any{"type": "allowed_tools", "allowed_tools": map[string]any{"mode": tc.Mode, "tools": allowed}}
	default:
		return invalid("unsupported_tool", "tool_choice.type", "tool_choice of type %q is not supported: arr serves function tools only (none, auto, required, function or allowed_tools)", tc.Type)
	}
	return nil
}

// parseText reads text.format (text, json_object, json_schema) and
// text.verbosity.
func (r *Request) parseText(raw map[string]json.RawMessage) error {
	r.format = json.RawMessage(`{"type":"text"}`)
	v, ok := raw["text"]
	if !ok || isNull(v) {
		return nil
	}
	var text map[string]json.RawMessage
	if err := json.Unmarshal(v, &text); err != nil {
		return invalid("invalid_type", "text", "text must be an object like {\"format\":{\"type\":\"json_schema\",...}}")
	}
	for k := range text {
		if k != "format" && k != "verbosity" {
			return invalid("unknown_parameter", "text."+k, "unknown parameter text.%s: text takes format and verbosity", k)
		}
	}
	if vb, ok := text["verbosity"]; ok && !isNull(vb) {
		if err := json.Unmarshal(vb, &r.verbosity); err != nil || (r.verbosity != "low" && r.verbosity != "medium" && r.verbosity != "high") {
			return invalid("invalid_value", "text.verbosity", "text.verbosity must be low, medium or high")
		}
	}
	f, ok := text["format"]
	if !ok || isNull(f) {
		return nil
	}
	var format struct {
		Type        string          `json:"type"`
		Name        *string         `json:"name"`
		Schema      json.RawMessage `json:"schema"`
		Description *string         `json:"description"`
		Strict      *bool           `json:"strict"`
	}
	if err := json.Unmarshal(f, &format); err != nil {
		return invalid("invalid_type", "text.format", "text.format must be an object with a type: text, json_object or json_schema")
	}
	switch format.Type {
	case "text":
	case "json_object":
		r.format = json.RawMessage(`{"type":"json_object"}`)
		r.chatFormat = map[string]string{"type": "json_object"}
	case "json_schema":
		if format.Name == nil || !validName(*format.Name) {
			return invalid("invalid_value", "text.format.name", "a json_schema format needs a name of 1 to 64 letters, digits, _ or -")
		}
		var obj map[string]json.RawMessage
		if isNull(format.Schema) || json.Unmarshal(format.Schema, &obj) != nil {
			return invalid("invalid_value", "text.format.schema", "a json_schema format needs schema, a JSON Schema object")
		}
		type schema struct {
			Name        string          `json:"name"`
			Schema      json.RawMessage `json:"schema"`
			Description *string         `json:"description,omitempty"`
			Strict      *bool           `json:"strict,omitempty"`
		}
		s := schema{Name: *format.Name, Schema: compact(format.Schema), Description: format.Description, Strict: format.Strict}
		echo := struct {
			Type string `json:"type"`
			schema
		}{"json_schema", s}
		r.format, _ = json.Marshal(echo)
		r.chatFormat = map[string]any{"type": "json_schema", "json_schema": s}
	default:
		return invalid("invalid_value", "text.format.type", "text.format.type must be text, json_object or json_schema")
	}
	return nil
}

func compact(v json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return v
	}
	return b.Bytes()
}
