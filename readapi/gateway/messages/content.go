package messages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/arr-dev/arr/domain/chat"
)

// block is what the parser reads of a content block; other keys
// (cache_control, citations, signature, …) are ignored. raw is the block
// as written: a block the translation cannot express (ParseNative) goes
// into the chat request as a text part of it, so that the request is
// sized (estimated, counted, capped) on every byte the upstream reads.
type block struct {
	raw       json.RawMessage
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	Source    json.RawMessage `json:"source"`
	Title     *string         `json:"title"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

func (b *block) UnmarshalJSON(data []byte) error {
	type plain block
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*b = block(p)
	b.raw = json.RawMessage(compact(string(data)))
	return nil
}

// sizing is the text part that stands for a block left out of the
// translation (see block).
func (b block) sizing() chat.Part { return chat.TextPart(string(b.raw)) }

// parseMessages translates messages into chat messages, in order: a
// system message (Claude Code sends them between turns) stays one, its
// text blocks joined; a user message's tool_result blocks become tool messages (first, as chat
// completions want them right after the assistant's tool_calls), its other
// blocks one user message; an assistant message's text and tool_use
// blocks one assistant message with tool_calls.
func (r *Request) parseMessages(raw map[string]json.RawMessage) error {
	v, ok := raw["messages"]
	if !ok || isNull(v) {
		return invalid("missing_messages", "messages", "messages is required: a non-empty array of {role, content}")
	}
	var msgs []struct {
		Role    *string         `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(v, &msgs); err != nil {
		return invalid("invalid_type", "messages", "messages must be an array of {role, content} objects")
	}
	if len(msgs) == 0 {
		return invalid("empty_messages", "messages", "messages must not be empty")
	}
	calls := map[string]bool{}
	for i, m := range msgs {
		param := fmt.Sprintf("messages[%d]", i)
		if m.Role == nil || (*m.Role != "user" && *m.Role != "assistant" && *m.Role != "system") {
			return invalid("invalid_role", param+".role", "role must be user, assistant or system (a system message between turns; the system prompt goes in the top-level system field)")
		}
		if isNull(m.Content) {
			return invalid("missing_content", param+".content", "content is required: a string or an array of content blocks")
		}
		if *m.Role == "system" {
			text, err := textBlocks(m.Content)
			if err != nil {
				return invalid("invalid_type", param+".content", "a system message's content must be a string or an array of text blocks")
			}
			r.messages = append(r.messages, chat.Message{Role: "system", Content: text})
			continue
		}
		var blocks []block
		if m.Content[0] == '"' {
			var s string
			if err := json.Unmarshal(m.Content, &s); err != nil {
				return invalid("invalid_type", param+".content", "content must be a string or an array of content blocks")
			}
			blocks = []block{{Type: "text", Text: &s}}
		} else if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return invalid("invalid_type", param+".content", "content must be a string or an array of content blocks")
		}
		var err error
		if *m.Role == "user" {
			err = r.addUser(param, blocks, calls)
		} else {
			err = r.addAssistant(param, blocks, calls)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *Request) addUser(param string, blocks []block, calls map[string]bool) error {
	var parts []chat.Part
	for j, b := range blocks {
		bp := fmt.Sprintf("%s.content[%d]", param, j)
		if b.Type == "tool_result" {
			images, err := r.addToolResult(bp, b, calls)
			if err != nil {
				return err
			}
			parts = append(parts, images...)
			continue
		}
		p, err := userPart(bp, b)
		if r.lenient && untranslatable(err) {
			parts = append(parts, b.sizing())
			continue
		}
		if err != nil {
			return err
		}
		parts = append(parts, p)
	}
	switch {
	case len(parts) == 1 && parts[0].Type == "text":
		r.messages = append(r.messages, chat.Message{Role: "user", Content: *parts[0].Text})
	case len(parts) > 0:
		r.messages = append(r.messages, chat.Message{Role: "user", Content: parts})
	case len(blocks) == 0:
		r.messages = append(r.messages, chat.Message{Role: "user", Content: ""})
	}
	return nil
}

// userPart translates a text, image or document block of a user message
// (or of a tool result).
func userPart(bp string, b block) (chat.Part, error) {
	switch b.Type {
	case "text":
		if b.Text == nil {
			return chat.Part{}, invalid("invalid_value", bp+".text", "a text block needs text")
		}
		return chat.TextPart(*b.Text), nil
	case "image":
		return imagePart(bp, b.Source)
	case "document":
		return documentPart(bp, b)
	case "tool_use", "thinking", "redacted_thinking":
		return chat.Part{}, invalid("invalid_value", bp+".type", "a %s block belongs in an assistant message", b.Type)
	}
	return chat.Part{}, invalid("unsupported_value", bp+".type", "content blocks of type %q are not supported: arr serves text, image, document, tool_use and tool_result blocks (and drops thinking blocks)", b.Type)
}

type source struct {
	Type      string          `json:"type"`
	MediaType string          `json:"media_type"`
	Data      json.RawMessage `json:"data"`
	URL       string          `json:"url"`
}

func imagePart(bp string, raw json.RawMessage) (chat.Part, error) {
	var s source
	if isNull(raw) || json.Unmarshal(raw, &s) != nil {
		return chat.Part{}, invalid("invalid_value", bp+".source", "an image block needs a source: {type: base64, media_type, data} or {type: url, url}")
	}
	switch s.Type {
	case "base64":
		var data string
		if json.Unmarshal(s.Data, &data) != nil || data == "" || !strings.HasPrefix(s.MediaType, "image/") {
			return chat.Part{}, invalid("invalid_value", bp+".source", "a base64 image source needs media_type (image/jpeg, image/png, image/gif or image/webp) and data")
		}
		return chat.Part{Type: "image_url", ImageURL: &chat.ImageURL{URL: "data:" + s.MediaType + ";base64," + data}}, nil
	case "url":
		if s.URL == "" {
			return chat.Part{}, invalid("invalid_value", bp+".source.url", "a url image source needs url")
		}
		return chat.Part{Type: "image_url", ImageURL: &chat.ImageURL{URL: s.URL}}, nil
	}
	return chat.Part{}, invalid("unsupported_value", bp+".source.type", "image sources are base64 or url (arr stores no files), not %q", s.Type)
}

func documentPart(bp string, b block) (chat.Part, error) {
	var s source
	if isNull(b.Source) || json.Unmarshal(b.Source, &s) != nil {
		return chat.Part{}, invalid("invalid_value", bp+".source", "a document block needs a source")
	}
	var data string
	_ = json.Unmarshal(s.Data, &data)
	switch {
	case s.Type == "base64" && s.MediaType == "application/pdf" && data != "":
		name := "document.pdf"
		if b.Title != nil && *b.Title != "" {
			name = *b.Title
		}
		return chat.Part{Type: "file", File: &chat.File{FileData: "data:application/pdf;base64," + data, Filename: name}}, nil
	case s.Type == "text":
		return chat.TextPart(data), nil
	}
	return chat.Part{}, invalid("unsupported_value", bp+".source", "document sources are base64 PDFs or plain text (arr stores no files and fetches no URLs)")
}

// addToolResult adds a tool message for a tool_result block; the images
// of its content, which a chat tool message cannot hold, are returned to
// go in the user message after it.
func (r *Request) addToolResult(bp string, b block, calls map[string]bool) ([]chat.Part, error) {
	if b.ToolUseID == "" {
		return nil, invalid("invalid_value", bp+".tool_use_id", "a tool_result block needs the tool_use_id it answers")
	}
	if !calls[b.ToolUseID] {
		return nil, invalid("invalid_value", bp+".tool_use_id", "no tool_use block with id %q comes before this tool_result: send the assistant message with the tool_use first", b.ToolUseID)
	}
	m := chat.Message{Role: "tool", ToolCallID: b.ToolUseID, Content: ""}
	var images []chat.Part
	switch {
	case isNull(b.Content):
	case b.Content[0] == '"':
		var s string
		_ = json.Unmarshal(b.Content, &s)
		m.Content = s
	default:
		var inner []block
		if err := json.Unmarshal(b.Content, &inner); err != nil {
			return nil, invalid("invalid_type", bp+".content", "a tool_result's content must be a string or an array of text and image blocks")
		}
		var texts []string
		for k, ib := range inner {
			p, err := userPart(fmt.Sprintf("%s.content[%d]", bp, k), ib)
			if r.lenient && untranslatable(err) {
				p = ib.sizing()
			} else if err != nil {
				return nil, err
			}
			if p.Type == "text" {
				texts = append(texts, *p.Text)
			} else {
				images = append(images, p)
			}
		}
		m.Content = strings.Join(texts, "\n\n")
	}
	r.messages = append(r.messages, m)
	return images, nil
}

func (r *Request) addAssistant(param string, blocks []block, calls map[string]bool) error {
	m := chat.Message{Role: "assistant"}
	var texts []string
	for j, b := range blocks {
		bp := fmt.Sprintf("%s.content[%d]", param, j)
		switch b.Type {
		case "text":
			if b.Text == nil {
				return invalid("invalid_value", bp+".text", "a text block needs text")
			}
			texts = append(texts, *b.Text)
		case "tool_use":
			if b.ID == "" || b.Name == "" {
				return invalid("invalid_value", bp, "a tool_use block needs id and name")
			}
			args := "{}"
			if !isNull(b.Input) {
				args = string(b.Input)
			}
			tc := chat.ToolCall{ID: b.ID, Type: "function", Function: chat.FunctionCall{Name: b.Name, Arguments: compact(args)}}
			m.ToolCalls = append(m.ToolCalls, tc)
			calls[b.ID] = true
		case "thinking", "redacted_thinking":
			// Chat completions have no place for earlier reasoning: dropped.
		default:
			if r.lenient {
				// server_tool_use, its results, …: the upstream reads them.
				texts = append(texts, string(b.raw))
				continue
			}
			return invalid("unsupported_value", bp+".type", "an assistant message's blocks are text, tool_use and thinking, not %q", b.Type)
		}
	}
	switch {
	case len(texts) > 0:
		m.Content = strings.Join(texts, "")
	case len(m.ToolCalls) == 0:
		m.Content = ""
	}
	r.messages = append(r.messages, m)
	return nil
}

func compact(s string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return s
	}
	return b.String()
}
