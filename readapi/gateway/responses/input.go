package responses

import (
	"encoding/json"
	"fmt"

	"github.com/arr-dev/arr/domain/chat"
)

// inputItem is what the parser reads of an input item; other keys (id,
// status, phase, annotations, ...) are ignored, so a response's output
// items can be sent back as they came.
type inputItem struct {
	Type      *string         `json:"type"`
	Role      *string         `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    *string         `json:"call_id"`
	Name      *string         `json:"name"`
	Arguments *string         `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// parseInput translates instructions and input into chat messages:
// instructions first as a system message, then the items in order. A
// function_call item joins the assistant message before it (parallel
// calls share one message), a function_call_output becomes a tool message.
func (r *Request) parseInput(raw map[string]json.RawMessage) error {
	if v, ok := raw["instructions"]; ok && !isNull(v) {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return invalid("invalid_type", "instructions", "instructions must be a string (a system message put before the input)")
		}
		r.instructions = &s
		r.messages = append(r.messages, chat.Message{Role: "system", Content: s})
	}
	v, ok := raw["input"]
	if !ok || isNull(v) {
		return invalid("missing_input", "input", "input is required: a string (one user message) or an array of input items")
	}
	if v[0] == '"' {
		var s string
		_ = json.Unmarshal(v, &s)
		r.messages = append(r.messages, chat.Message{Role: "user", Content: s})
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		return invalid("invalid_type", "input", "input must be a string or an array of input items (messages, function_call and function_call_output items)")
	}
	if len(items) == 0 && len(r.messages) == 0 {
		return invalid("empty_input", "input", "input must not be empty")
	}
	calls := map[string]bool{}
	for i, rawItem := range items {
		param := fmt.Sprintf("input[%d]", i)
		var it inputItem
		if err := json.Unmarshal(rawItem, &it); err != nil {
			return invalid("invalid_type", param, "each input item must be an object (a message, a function_call or a function_call_output)")
		}
		typ := "message"
		if it.Type != nil {
			typ = *it.Type
		}
		var err error
		switch typ {
		case "message":
			err = r.addMessage(param, &it)
		case "function_call":
			err = r.addCall(param, &it, calls)
		case "function_call_output":
			err = r.addOutput(param, &it, calls)
		case "reasoning":
			// Reasoning items from another provider's response are opaque
			// to chat completions: dropped (documented).
		case "item_reference":
			err = invalid("unsupported_value", param+".type", "item_reference items point at items stored by the server; arr stores no responses: send the item itself (with the AI SDK, set providerOptions.openai.store to false)")
		default:
			err = invalid("unsupported_value", param+".type", "input items of type %q are not supported: arr serves messages, function_call and function_call_output items (and ignores reasoning items)", typ)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *Request) addMessage(param string, it *inputItem) error {
	role := ""
	if it.Role != nil {
		role = *it.Role
	}
	switch role {
	case "user", "system", "developer", "assistant":
	default:
		return invalid("invalid_role", param+".role", "a message's role must be one of user, system, developer, assistant")
	}
	if isNull(it.Content) {
		return invalid("missing_content", param+".content", "a message needs content: a string or an array of content parts")
	}
	m := chat.Message{Role: role}
	if it.Content[0] == '"' {
		var s string
		if err := json.Unmarshal(it.Content, &s); err != nil {
			return invalid("invalid_type", param+".content", "content must be a string or an array of content parts")
		}
		m.Content = s
		r.messages = append(r.messages, m)
		return nil
	}
	var parts []map[string]json.RawMessage
	if err := json.Unmarshal(it.Content, &parts); err != nil {
		return invalid("invalid_type", param+".content", "content must be a string or an array of content parts")
	}
	var out []chat.Part
	for j, p := range parts {
		pp := fmt.Sprintf("%s.content[%d]", param, j)
		var typ string
		if err := json.Unmarshal(p["type"], &typ); err != nil {
			return invalid("invalid_type", pp+".type", "each content part needs a type")
		}
		if role == "assistant" {
			switch typ {
			case "output_text":
				t, err := stringField(p, "text", pp)
				if err != nil {
					return err
				}
				out = append(out, chat.TextPart(t))
			case "refusal":
				t, err := stringField(p, "refusal", pp)
				if err != nil {
					return err
				}
				m.Refusal = &t
			default:
				return invalid("invalid_value", pp+".type", "an assistant message's content parts are output_text or refusal, not %q", typ)
			}
			continue
		}
		part, err := inputPart(typ, p, pp)
		if err != nil {
			return err
		}
		out = append(out, part)
	}
	m.Content = partsContent(out)
	if m.Content == nil {
		m.Content = "" // the chat route takes null content only beside tool_calls
	}
	r.messages = append(r.messages, m)
	return nil
}

// inputPart translates a user, system or developer content part.
func inputPart(typ string, p map[string]json.RawMessage, pp string) (chat.Part, error) {
	switch typ {
	case "input_text":
		t, err := stringField(p, "text", pp)
		return chat.TextPart(t), err
	case "input_image":
		var url, detail, fileID string
		_ = json.Unmarshal(p["image_url"], &url)
		_ = json.Unmarshal(p["detail"], &detail)
		_ = json.Unmarshal(p["file_id"], &fileID)
		if url == "" {
			if fileID != "" {
				return chat.Part{}, invalid("unsupported_value", pp+".file_id", "images by file_id are not supported (arr stores no files): send image_url, a URL or a data: URL")
			}
			return chat.Part{}, invalid("invalid_value", pp+".image_url", "an input_image needs image_url (a URL or a data: URL)")
		}
		return chat.Part{Type: "image_url", ImageURL: &chat.ImageURL{URL: url, Detail: detail}}, nil
	case "input_file":
		var data, name string
		_ = json.Unmarshal(p["file_data"], &data)
		_ = json.Unmarshal(p["filename"], &name)
		if data == "" {
			return chat.Part{}, invalid("unsupported_value", pp, "an input_file needs file_data (base64, with filename); files by file_id or file_url are not supported")
		}
		return chat.Part{Type: "file", File: &chat.File{FileData: data, Filename: name}}, nil
	}
	return chat.Part{}, invalid("invalid_value", pp+".type", "content parts of user, system and developer messages are input_text, input_image or input_file, not %q", typ)
}

// partsContent is a single text part as a string, several parts as an
// array, none as nil.
func partsContent(parts []chat.Part) any {
	switch {
	case len(parts) == 0:
		return nil
	case len(parts) == 1 && parts[0].Type == "text":
		return *parts[0].Text
	}
	return parts
}

func (r *Request) addCall(param string, it *inputItem, calls map[string]bool) error {
	if it.CallID == nil || *it.CallID == "" {
		return invalid("invalid_value", param+".call_id", "a function_call item needs call_id")
	}
	if it.Name == nil || *it.Name == "" {
		return invalid("invalid_value", param+".name", "a function_call item needs name")
	}
	if it.Arguments == nil {
		return invalid("invalid_value", param+".arguments", "a function_call item needs arguments (a JSON string)")
	}
	tc := chat.ToolCall{ID: *it.CallID, Type: "function", Function: chat.FunctionCall{Name: *it.Name, Arguments: *it.Arguments}}
	calls[*it.CallID] = true
	if n := len(r.messages); n > 0 && r.messages[n-1].Role == "assistant" {
		r.messages[n-1].ToolCalls = append(r.messages[n-1].ToolCalls, tc)
		return nil
	}
	r.messages = append(r.messages, chat.Message{Role: "assistant", ToolCalls: []chat.ToolCall{tc}})
	return nil
}

func (r *Request) addOutput(param string, it *inputItem, calls map[string]bool) error {
	if it.CallID == nil || *it.CallID == "" {
		return invalid("invalid_value", param+".call_id", "a function_call_output item needs the call_id of the call it answers")
	}
	if !calls[*it.CallID] {
		return invalid("invalid_value", param+".call_id", "no function_call item with call_id %q comes before this output: arr stores no responses, so send the function_call item (from the earlier response's output) before its output", *it.CallID)
	}
	if isNull(it.Output) {
		return invalid("invalid_value", param+".output", "a function_call_output item needs output (a string)")
	}
	m := chat.Message{Role: "tool", ToolCallID: *it.CallID}
	if it.Output[0] == '"' {
		var s string
		_ = json.Unmarshal(it.Output, &s)
		m.Content = s
	} else {
		var parts []map[string]json.RawMessage
		if err := json.Unmarshal(it.Output, &parts); err != nil {
			return invalid("invalid_type", param+".output", "output must be a string or an array of input_text parts")
		}
		var out []chat.Part
		for j, p := range parts {
			pp := fmt.Sprintf("%s.output[%d]", param, j)
			var typ string
			_ = json.Unmarshal(p["type"], &typ)
			if typ != "input_text" {
				return invalid("unsupported_value", pp+".type", "a function_call_output's parts must be input_text (chat completions take text tool results only), not %q", typ)
			}
			t, err := stringField(p, "text", pp)
			if err != nil {
				return err
			}
			out = append(out, chat.TextPart(t))
		}
		m.Content = partsContent(out)
		if m.Content == nil {
			m.Content = ""
		}
	}
	r.messages = append(r.messages, m)
	return nil
}

func stringField(p map[string]json.RawMessage, name, param string) (string, error) {
	var s string
	if err := json.Unmarshal(p[name], &s); err != nil {
		return "", invalid("invalid_type", param+"."+name, "%s must be a string", name)
	}
	return s, nil
}
