package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/chat"
)

// messages is the chat messages as Gemini contents and system
// instruction: system and developer messages, wherever they are, are the
// system instruction's parts in order; assistant messages are role
// "model"; the tool results that follow an assistant's calls are one
// user turn of functionResponse parts, named by the calls they answer.
func messages(ms []chat.Message) ([]content, *content, error) {
	var out []content
	var system *content
	names := map[string]string{} // tool call id → function name
	prevTool := false
	for i, m := range ms {
		field := fmt.Sprintf("messages[%d]", i)
		parts, err := messageParts(m, field, names)
		if err != nil {
			return nil, nil, err
		}
		switch m.Role {
		case "system", "developer":
			if system == nil {
				system = &content{}
			}
			system.Parts = append(system.Parts, parts...)
		case "tool":
			if prevTool {
				out[len(out)-1].Parts = append(out[len(out)-1].Parts, parts...)
			} else {
				out = append(out, content{Role: "user", Parts: parts})
			}
		case "user":
			out = append(out, content{Role: "user", Parts: parts})
		case "assistant":
			if len(parts) > 0 {
				out = append(out, content{Role: "model", Parts: parts})
			}
		default:
			return nil, nil, domain.Invalid("invalid_role", field+".role", "role %q: a message is system, developer, user, assistant or tool", m.Role)
		}
		prevTool = m.Role == "tool"
	}
	return out, system, nil
}

// messageParts is one message's content as Gemini parts; an assistant's
// tool calls are recorded in names, a tool result is named from it.
func messageParts(m chat.Message, field string, names map[string]string) ([]part, error) {
	cps, err := contentParts(m.Content)
	if err != nil {
		return nil, domain.Invalid("invalid_content", field+".content", "content is neither a string nor a list of parts: %v", err)
	}
	if m.Role == "tool" {
		return toolResult(m, cps, field, names)
	}
	var out []part
	for j, p := range cps {
		gp, err := contentPart(p, fmt.Sprintf("%s.content[%d]", field, j), m.Role)
		if err != nil {
			return nil, err
		}
		if gp != nil {
			out = append(out, *gp)
		}
	}
	if m.Role != "assistant" {
		return out, nil
	}
	for j, tc := range m.ToolCalls {
		id, sig := trimSignature(tc.ID)
		args := strings.TrimSpace(tc.Function.Arguments)
		if args == "" {
			args = "{}"
		}
		if !isObject([]byte(args)) {
			return nil, domain.Invalid("invalid_tool_arguments", fmt.Sprintf("%s.tool_calls[%d].function.arguments", field, j), "a tool call's arguments are a JSON object")
		}
		if j == 0 && sig == "" {
			// A call Gemini did not make (a conversation begun on
			// another model) has no signature, which Gemini 3 refuses
			// on a turn's first call: Google's sentinel skips the check.
			sig = SkipSignature
		}
		names[tc.ID], names[id] = tc.Function.Name, tc.Function.Name
		out = append(out, part{FunctionCall: &functionCall{Name: tc.Function.Name, Args: json.RawMessage(args)}, ThoughtSignature: sig})
	}
	return out, nil
}

// toolResult is a tool message as a functionResponse part: a JSON object
// result is the response as it is, any other text is {"output": text}.
func toolResult(m chat.Message, cps []chat.Part, field string, names map[string]string) ([]part, error) {
	name, ok := names[m.ToolCallID]
	if !ok {
		return nil, domain.Invalid("unknown_tool_call", field+".tool_call_id", "tool_call_id %q is not the id of a tool call of an earlier assistant message", m.ToolCallID)
	}
	var text strings.Builder
	for _, p := range cps {
		if p.Type == "text" && p.Text != nil {
			text.WriteString(*p.Text)
		}
	}
	resp := []byte(strings.TrimSpace(text.String()))
	if !isObject(resp) {
		resp, _ = json.Marshal(map[string]string{"output": text.String()})
	}
	return []part{{FunctionResponse: &functionResponse{Name: name, Response: resp}}}, nil
}

// contentPart is one content part as a Gemini part (nil: nothing to
// send, as an empty refusal).
func contentPart(p chat.Part, field, role string) (*part, error) {
	switch {
	case p.Type == "text" && p.Text != nil && *p.Text == "" && role == "assistant":
		return nil, nil // an assistant's empty text beside its tool calls
	case p.Type == "text" && p.Text != nil:
		return &part{Text: p.Text}, nil
	case p.Type == "refusal":
		return nil, nil
	case p.Type == "image_url" && p.ImageURL != nil && role == "user":
		return mediaPart(p.ImageURL.URL, field+".image_url.url")
	case p.Type == "file" && p.File != nil && role == "user":
		if !strings.HasPrefix(p.File.FileData, "data:") {
			return nil, domain.Invalid("unsupported_file", field+".file.file_data", "a file is sent to Gemini models inline, as a data: URL")
		}
		return mediaPart(p.File.FileData, field+".file.file_data")
	}
	return nil, domain.Invalid("unsupported_content", field, "a %s message's content part of type %q cannot be sent to Gemini models", role, p.Type)
}

// mediaPart is an image or file URL as a part: a base64 data: URL as
// inlineData, an http(s) URL as fileData of the type its extension
// names. Any other scheme (gs://, file://, …) is the client's 400: a
// fileUri is read by Google with the operator's credentials (on Vertex
// AI a gs:// URI is the operator's buckets), and OpenAI's image_url is
// an http(s) or data: URL only.
func mediaPart(raw, field string) (*part, error) {
	if rest, ok := strings.CutPrefix(raw, "data:"); ok {
		meta, data, ok := strings.Cut(rest, ",")
		mt, isBase64 := strings.CutSuffix(meta, ";base64")
		if !ok || !isBase64 || mt == "" {
			return nil, domain.Invalid("invalid_data_url", field, "a data: URL is data:<media type>;base64,<data>")
		}
		return &part{InlineData: &blob{MIMEType: mt, Data: data}}, nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, domain.Invalid("unsupported_image_url", field, "an image URL is an http(s) URL or a data: URL")
	}
	mt := imageType(strings.ToLower(path.Ext(u.Path)))
	if mt == "" {
		return nil, domain.Invalid("unsupported_image_url", field, "the image URL's type is not known from its name (.png, .jpg, .webp, .gif, .heic, .heif): send it as a data: URL")
	}
	return &part{FileData: &fileData{MIMEType: mt, FileURI: raw}}, nil
}

// imageType is the type of an image Gemini reads by its file extension
// ("": none).
func imageType(ext string) string {
	switch ext {
	case ".png", ".webp", ".gif", ".heic", ".heif":
		return "image/" + ext[1:]
	case ".jpg", ".jpeg":
		return "image/jpeg"
	}
	return ""
}

// contentParts is a message's content (a string, parts, or nil) as
// parts.
func contentParts(c any) ([]chat.Part, error) {
	switch v := c.(type) {
	case nil:
		return nil, nil
	case string:
		return []chat.Part{chat.TextPart(v)}, nil
	case []chat.Part:
		return v, nil
	}
	var s string
	if err := remarshal(c, &s); err == nil {
		return []chat.Part{chat.TextPart(s)}, nil
	}
	var ps []chat.Part
	err := remarshal(c, &ps)
	return ps, err
}

// isObject: b is one JSON object.
func isObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}
