package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/arr-dev/arr/domain/chat"
)

// messageFields are the keys a chat message may have; name is accepted
// and has no effect (Anthropic's turns have no names).
var messageFields = map[string]bool{"role": true, "content": true, "name": true, "refusal": true, "tool_calls": true, "tool_call_id": true}

// translateMessages: the system and developer messages before the first
// turn as the system blocks, the rest as turns (a system message after
// the first turn stays one, as the Messages ingress reads them).
func translateMessages(in *chatIn, out *messagesRequest) error {
	if len(in.Messages) == 0 {
		return invalid("empty_messages", "messages", "messages must not be empty")
	}
	calls := map[string]bool{}    // the tool calls' ids so far
	answered := map[string]bool{} // those a tool message has answered
	for i, m := range in.Messages {
		param := fmt.Sprintf("messages[%d]", i)
		role, err := messageRole(param, m)
		if err != nil {
			return err
		}
		var blocks []block
		switch role {
		case "system", "developer":
			text, err := textOf(param+".content", m["content"])
			if err != nil {
				return err
			}
			if text == "" {
				continue // Anthropic refuses empty text blocks
			}
			if len(out.Messages) == 0 {
				out.System = append(out.System, textBlock(text))
				continue
			}
			out.Messages = append(out.Messages, turn{Role: "system", Content: []block{textBlock(text)}})
			continue
		case "user":
			blocks, err = userBlocks(param+".content", m["content"])
		case "assistant":
			blocks, err = assistantBlocks(param, m, calls)
		case "tool":
			blocks, err = toolResult(param, m, calls, answered)
			role = "user"
		}
		if err != nil {
			return err
		}
		if len(blocks) == 0 && (role == "user" || i < len(in.Messages)-1) {
			return invalid("empty_content", param+".content", "a %s message needs content: Anthropic refuses an empty message (empty text parts are left out), but for a final assistant one", role)
		}
		appendTurn(out, role, blocks)
	}
	if len(out.Messages) == 0 {
		return invalid("empty_messages", "messages", "messages needs a user or assistant message: system and developer messages alone are only the system prompt")
	}
	return nil
}

// messageRole checks m's keys and reads its role.
func messageRole(param string, m map[string]json.RawMessage) (string, error) {
	for k := range m {
		if !messageFields[k] {
			return "", invalid("unknown_field", param+"."+k, "%s.%s: unknown field of a chat message", param, k)
		}
	}
	var role string
	if json.Unmarshal(m["role"], &role) != nil {
		return "", invalid("invalid_role", param+".role", "role must be a string: system, developer, user, assistant or tool")
	}
	switch role {
	case "system", "developer", "user", "assistant", "tool":
		return role, nil
	case "function":
		return "", invalid("unsupported_value", param+".role", "function messages (deprecated) are not supported: send tool messages")
	}
	return "", invalid("invalid_role", param+".role", "role must be system, developer, user, assistant or tool, not %q", role)
}

// appendTurn adds blocks as a turn of role, merged into the last turn
// when it has that role (Anthropic's turns alternate); a user turn's
// tool_result blocks go first, as Anthropic wants them.
func appendTurn(out *messagesRequest, role string, blocks []block) {
	n := len(out.Messages)
	if n == 0 || out.Messages[n-1].Role != role {
		out.Messages = append(out.Messages, turn{Role: role, Content: blocks})
		if role == "user" {
			out.Messages[n].Content = resultsFirst(out.Messages[n].Content)
		}
		return
	}
	last := &out.Messages[n-1]
	last.Content = append(last.Content, blocks...)
	if role == "user" {
		last.Content = resultsFirst(last.Content)
	}
}

func resultsFirst(bs []block) []block {
	if bs == nil {
		return []block{}
	}
	out := make([]block, 0, len(bs))
	for _, b := range bs {
		if b.Type == "tool_result" {
			out = append(out, b)
		}
	}
	for _, b := range bs {
		if b.Type != "tool_result" {
			out = append(out, b)
		}
	}
	return out
}

// textOf reads content that must be text: a string or an array of text
// parts (one per line break pair, as the Messages ingress joins them).
func textOf(param string, raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", invalid("invalid_type", param, "content must be a string or an array of text parts")
		}
		return s, nil
	}
	parts, err := readParts(param, raw)
	if err != nil {
		return "", err
	}
	texts := make([]string, 0, len(parts))
	for j, p := range parts {
		if p.Type != "text" || p.Text == nil {
			return "", invalid("unsupported_value", fmt.Sprintf("%s[%d].type", param, j), "only text parts are allowed here, not %q", p.Type)
		}
		texts = append(texts, *p.Text)
	}
	return strings.Join(texts, "\n\n"), nil
}

func readParts(param string, raw json.RawMessage) ([]chat.Part, error) {
	var parts []chat.Part
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, invalid("invalid_type", param, "content must be a string or an array of content parts")
	}
	return parts, nil
}

// assistantBlocks: the text (or the refusal) as a text block, then a
// tool_use block per tool call, its input the parsed arguments.
func assistantBlocks(param string, m map[string]json.RawMessage, calls map[string]bool) ([]block, error) {
	text, err := textOf(param+".content", m["content"])
	if err != nil {
		return nil, err
	}
	if text == "" {
		var refusal *string
		_ = json.Unmarshal(m["refusal"], &refusal)
		if refusal != nil {
			text = *refusal
		}
	}
	blocks := []block{}
	if text != "" {
		blocks = append(blocks, textBlock(text))
	}
	var tcs []chat.ToolCall
	if v, ok := m["tool_calls"]; ok && json.Unmarshal(v, &tcs) != nil {
		return nil, invalid("invalid_type", param+".tool_calls", "tool_calls must be an array of {id, type, function: {name, arguments}}")
	}
	for j, tc := range tcs {
		tp := fmt.Sprintf("%s.tool_calls[%d]", param, j)
		if tc.Type != "function" && tc.Type != "" {
			return nil, invalid("unsupported_value", tp+".type", "tool calls of type %q are not supported: function only", tc.Type)
		}
		if tc.ID == "" || tc.Function.Name == "" {
			return nil, invalid("invalid_value", tp, "a tool call needs an id and a function name")
		}
		input, err := toolInput(tp+".function.arguments", tc.Function.Arguments)
		if err != nil {
			return nil, err
		}
		if calls[tc.ID] {
			return nil, invalid("duplicate_tool_call_id", tp+".id", "tool call ids must be unique in a conversation: %q is used twice", tc.ID)
		}
		calls[tc.ID] = true
		blocks = append(blocks, block{Type: "tool_use", ID: tc.ID, Name: tc.Function.Name, Input: input})
	}
	return blocks, nil
}

// toolInput is a tool call's arguments as a tool_use input: a JSON
// object ({} when empty); anything else is the caller's error.
func toolInput(param, args string) (json.RawMessage, error) {
	if strings.TrimSpace(args) == "" {
		return json.RawMessage(`{}`), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &obj); err != nil || obj == nil {
		return nil, invalid("invalid_tool_arguments", param, "the arguments of a tool call must be a JSON object (Anthropic's tool_use input)")
	}
	var b bytes.Buffer
	_ = json.Compact(&b, []byte(args))
	return b.Bytes(), nil
}

// toolResult is a tool message as a tool_result block (its text as text
// blocks, none when empty) for the user turn that follows the call: one
// per call (Anthropic refuses two results for one tool_use id).
func toolResult(param string, m map[string]json.RawMessage, calls, answered map[string]bool) ([]block, error) {
	var id string
	if json.Unmarshal(m["tool_call_id"], &id) != nil || id == "" {
		return nil, invalid("invalid_value", param+".tool_call_id", "a tool message needs the tool_call_id it answers")
	}
	if !calls[id] {
		return nil, invalid("invalid_value", param+".tool_call_id", "no assistant tool call with id %q comes before this tool message", id)
	}
	if answered[id] {
		return nil, invalid("duplicate_tool_call_id", param+".tool_call_id", "tool call %q is answered twice: one tool message per call", id)
	}
	answered[id] = true
	b := block{Type: "tool_result", ToolUseID: id}
	raw := bytes.TrimSpace(m["content"])
	if len(raw) > 0 && raw[0] == '[' {
		parts, err := readParts(param+".content", raw)
		if err != nil {
			return nil, err
		}
		for j, p := range parts {
			if p.Type != "text" || p.Text == nil {
				return nil, invalid("unsupported_value", fmt.Sprintf("%s.content[%d].type", param, j), "a tool message's parts are text, not %q", p.Type)
			}
			if *p.Text != "" {
				b.Content = append(b.Content, textBlock(*p.Text))
			}
		}
		return []block{b}, nil
	}
	text, err := textOf(param+".content", raw)
	if err != nil {
		return nil, invalid("invalid_type", param+".content", "a tool message's content must be a string or an array of text parts")
	}
	if text != "" {
		b.Content = []block{textBlock(text)}
	}
	return []block{b}, nil
}
