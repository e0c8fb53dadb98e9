package bedrock

import (
	"encoding/json"
	"regexp"

	"github.com/arr-dev/arr/domain/chat"
)

// JSONToolName is the forced tool of a json_object reply (a json_schema
// reply's tool is named by the schema).
const JSONToolName = "json_response"

// toolName is the names Converse takes for a tool.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// emptySchema is the schema of a function without parameters.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// toolConfig is r's tools and tool choice (nil: no tools), or the one
// forced tool of its JSON mode and that tool's name.
func toolConfig(r *chat.Request, hasToolBlocks bool) (*ToolConfig, string, error) {
	jsonTool, err := jsonMode(r.ResponseFormat)
	if err != nil {
		return nil, "", err
	}
	if jsonTool != nil {
		if len(r.Tools) > 0 {
			return nil, "", invalid("response_format json_object or json_schema cannot be combined with tools on a Bedrock model")
		}
		return &ToolConfig{Tools: []Tool{{ToolSpec: jsonTool}}, ToolChoice: &ToolChoice{Tool: &NamedTool{Name: jsonTool.Name}}}, jsonTool.Name, nil
	}
	if len(r.Tools) == 0 {
		return nil, "", nil
	}
	tc := &ToolConfig{}
	for _, t := range r.Tools {
		if t.Type != "function" {
			return nil, "", invalid("tools: type %q is not supported by Bedrock models", t.Type)
		}
		if !toolName.MatchString(t.Function.Name) {
			return nil, "", invalid("tools: %q is not a valid tool name (letters, digits, _ and -, at most 64)", t.Function.Name)
		}
		schema := t.Function.Parameters
		if len(schema) == 0 || string(schema) == "null" {
			schema = emptySchema
		}
		tc.Tools = append(tc.Tools, Tool{ToolSpec: &ToolSpec{Name: t.Function.Name, Description: t.Function.Description, InputSchema: InputSchema{JSON: schema}}})
	}
	choice, none, err := toolChoice(r.ToolChoice)
	if err != nil {
		return nil, "", err
	}
	if none && !hasToolBlocks {
		return nil, "", nil
	}
	tc.ToolChoice = choice
	return tc, "", nil
}

// toolChoice reads a chat tool_choice: none says "none" (Converse has no
// such choice: the tools are left out).
func toolChoice(c any) (choice *ToolChoice, none bool, err error) {
	switch v := c.(type) {
	case nil:
		return nil, false, nil
	case string:
		switch v {
		case "auto":
			return &ToolChoice{Auto: &struct{}{}}, false, nil
		case "required":
			return &ToolChoice{Any: &struct{}{}}, false, nil
		case "none":
			return nil, true, nil
		}
		return nil, false, invalid("tool_choice %q is not one of auto, required, none", v)
	}
	b, _ := json.Marshal(c)
	var named chat.NamedToolChoice
	if json.Unmarshal(b, &named) != nil || named.Type != "function" || named.Function.Name == "" {
		return nil, false, invalid("tool_choice: only auto, required, none or a named function are supported by Bedrock models")
	}
	return &ToolChoice{Tool: &NamedTool{Name: named.Function.Name}}, false, nil
}

// jsonMode is the forced tool of response_format json_object or
// json_schema (nil: text or none).
func jsonMode(rf any) (*ToolSpec, error) {
	if rf == nil {
		return nil, nil
	}
	b, _ := json.Marshal(rf)
	var f struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name        string          `json:"name"`
			Description *string         `json:"description"`
			Schema      json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, invalid("response_format: %v", err)
	}
	desc := "Answer by calling this tool: its input is the reply, a JSON object."
	switch f.Type {
	case "", "text":
		return nil, nil
	case "json_object":
		return &ToolSpec{Name: JSONToolName, Description: &desc, InputSchema: InputSchema{JSON: json.RawMessage(`{"type":"object"}`)}}, nil
	case "json_schema":
		if f.JSONSchema == nil || !toolName.MatchString(f.JSONSchema.Name) {
			return nil, invalid("response_format: json_schema needs a name of letters, digits, _ and - (at most 64)")
		}
		schema := f.JSONSchema.Schema
		if len(schema) == 0 || string(schema) == "null" {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		if f.JSONSchema.Description != nil {
			desc = *f.JSONSchema.Description
		}
		return &ToolSpec{Name: f.JSONSchema.Name, Description: &desc, InputSchema: InputSchema{JSON: schema}}, nil
	}
	return nil, invalid("response_format type %q is not supported", f.Type)
}
