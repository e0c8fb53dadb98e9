package bedrock

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/arr-dev/arr/domain/chat"
)

// Options are the choices of a translation the chat request does not
// make itself.
type Options struct {
	// CachePoints puts a cachePoint after the system blocks and after the
	// tools. Only models Bedrock documents as caching prompts take them
	// (others answer a ValidationException, the request's own): the
	// caller sets it only when the client asks for caching.
	CachePoints bool
}

// Plan is what reading the reply needs to know of the request.
type Plan struct {
	// JSONTool is the forced tool that carries a JSON-mode reply ("":
	// none): its toolUse's input is the reply's text, the whole of it.
	JSONTool string `json:"jsonTool,omitempty"`
	// ToolIDs maps the toolUseIds FromChat made up (for the client's
	// tool call ids Converse does not take) back to the client's own.
	ToolIDs map[string]string `json:"toolIds,omitempty"`
}

// clientID is the client's own id of a toolUseId of the request (id
// itself when FromChat did not make it up).
func (p Plan) clientID(id string) string {
	if c, ok := p.ToolIDs[id]; ok {
		return c
	}
	return id
}

// ErrInvalid is the error of a chat request Converse cannot carry: the
// client's fault (a 400), its message safe to show.
var ErrInvalid = errors.New("invalid request for a Bedrock model")

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
}

// FromChat translates r into a Converse request body (see the package
// doc for what maps to what).
func FromChat(r *chat.Request, o Options) (Request, Plan, error) {
	var out Request
	var plan Plan
	ids, back, err := toolIDs(r.Messages)
	if err != nil {
		return Request{}, Plan{}, err
	}
	plan.ToolIDs = back
	hasToolBlocks := false
	for i, m := range r.Messages {
		sys, msg, err := message(m, ids)
		if err != nil {
			return Request{}, Plan{}, fmt.Errorf("%w (messages[%d])", err, i)
		}
		out.System = append(out.System, sys...)
		if msg == nil {
			continue
		}
		for _, b := range msg.Content {
			hasToolBlocks = hasToolBlocks || b.ToolUse != nil || b.ToolResult != nil
		}
		if n := len(out.Messages); n > 0 && out.Messages[n-1].Role == msg.Role {
			out.Messages[n-1].Content = append(out.Messages[n-1].Content, msg.Content...)
			continue
		}
		out.Messages = append(out.Messages, *msg)
	}
	if len(out.Messages) == 0 {
		return Request{}, Plan{}, invalid("messages: at least one user or assistant message is required")
	}
	tc, jsonTool, err := toolConfig(r, hasToolBlocks)
	if err != nil {
		return Request{}, Plan{}, err
	}
	out.ToolConfig, plan.JSONTool = tc, jsonTool
	out.InferenceConfig = inference(r)
	if o.CachePoints {
		if len(out.System) > 0 {
			out.System = append(out.System, SystemBlock{CachePoint: defaultCachePoint()})
		}
		if out.ToolConfig != nil {
			out.ToolConfig.Tools = append(out.ToolConfig.Tools, Tool{CachePoint: defaultCachePoint()})
		}
	}
	return out, plan, nil
}

// inference is r's sampling settings (nil: none).
func inference(r *chat.Request) *InferenceConfig {
	ic := InferenceConfig{MaxTokens: r.MaxCompletionTokens, Temperature: r.Temperature, TopP: r.TopP}
	// An empty stop sequence stops nothing (Converse refuses one).
	for _, s := range r.Stop {
		if s != "" {
			ic.StopSequences = append(ic.StopSequences, s)
		}
	}
	if ic.MaxTokens == nil && ic.Temperature == nil && ic.TopP == nil && len(ic.StopSequences) == 0 {
		return nil
	}
	return &ic
}

// message translates one chat message: system blocks, or a Converse
// message (nil when it carries nothing Converse sends).
func message(m chat.Message, ids idMap) ([]SystemBlock, *Message, error) {
	parts, err := contentParts(m.Content)
	if err != nil {
		return nil, nil, err
	}
	switch m.Role {
	case "system", "developer":
		var sys []SystemBlock
		for _, p := range parts {
			if p.Type != "text" || p.Text == nil {
				return nil, nil, invalid("a %s message may hold text only", m.Role)
			}
			if *p.Text != "" {
				sys = append(sys, SystemBlock{Text: p.Text})
			}
		}
		return sys, nil, nil
	case "user":
		blocks, err := userBlocks(parts)
		return nil, nonEmpty("user", blocks), err
	case "assistant":
		blocks, err := assistantBlocks(parts, m, ids)
		return nil, nonEmpty("assistant", blocks), err
	case "tool":
		if m.ToolCallID == "" {
			return nil, nil, invalid("a tool message needs its tool_call_id")
		}
		res := ToolResult{ToolUseID: ids.to(m.ToolCallID), Content: []ToolResultContent{}}
		for _, p := range parts {
			if p.Type != "text" || p.Text == nil {
				return nil, nil, invalid("a tool message may hold text only")
			}
			res.Content = append(res.Content, ToolResultContent{Text: p.Text})
		}
		if len(res.Content) == 0 {
			empty := ""
			res.Content = append(res.Content, ToolResultContent{Text: &empty})
		}
		return nil, &Message{Role: "user", Content: []Block{{ToolResult: &res}}}, nil
	}
	return nil, nil, invalid("unknown role %q", m.Role)
}

func nonEmpty(role string, blocks []Block) *Message {
	if len(blocks) == 0 {
		return nil
	}
	return &Message{Role: role, Content: blocks}
}

// contentParts reads a message's content: a string, parts, or null.
func contentParts(c any) ([]chat.Part, error) {
	switch v := c.(type) {
	case nil:
		return nil, nil
	case string:
		return []chat.Part{chat.TextPart(v)}, nil
	case []chat.Part:
		return v, nil
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, invalid("content: %v", err)
	}
	var parts []chat.Part
	if err := json.Unmarshal(b, &parts); err != nil {
		return nil, invalid("content is neither a string nor a list of parts")
	}
	return parts, nil
}

func userBlocks(parts []chat.Part) ([]Block, error) {
	var blocks []Block
	for _, p := range parts {
		switch {
		case p.Type == "text" && p.Text != nil:
			if *p.Text != "" {
				blocks = append(blocks, Block{Text: p.Text})
			}
		case p.Type == "image_url" && p.ImageURL != nil:
			img, err := image(p.ImageURL.URL)
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, Block{Image: img})
		default:
			return nil, invalid("content part of type %q is not supported by Bedrock models", p.Type)
		}
	}
	return blocks, nil
}

func assistantBlocks(parts []chat.Part, m chat.Message, ids idMap) ([]Block, error) {
	var blocks []Block
	for _, p := range parts {
		if p.Type != "text" || p.Text == nil {
			return nil, invalid("an assistant message may hold text only")
		}
		if *p.Text != "" {
			blocks = append(blocks, Block{Text: p.Text})
		}
	}
	for _, tc := range m.ToolCalls {
		args := strings.TrimSpace(tc.Function.Arguments)
		if args == "" {
			args = "{}"
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
			return nil, invalid("tool call %q: arguments are not a JSON object", tc.ID)
		}
		var compact bytes.Buffer
		_ = json.Compact(&compact, []byte(args))
		blocks = append(blocks, Block{ToolUse: &ToolUse{ToolUseID: ids.to(tc.ID), Name: tc.Function.Name, Input: compact.Bytes()}})
	}
	return blocks, nil
}

// imageFormats are the image types Converse takes, by media type.
var imageFormats = map[string]string{"image/png": "png", "image/jpeg": "jpeg", "image/jpg": "jpeg", "image/gif": "gif", "image/webp": "webp"}

// image reads a data: URL of a PNG, JPEG, GIF or WebP image.
func image(url string) (*Image, error) {
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		return nil, invalid("image_url: Bedrock models take an image as a data: URL, not a URL to fetch")
	}
	meta, data, ok := strings.Cut(rest, ",")
	mediaType, isBase64 := strings.CutSuffix(meta, ";base64")
	format := imageFormats[strings.ToLower(mediaType)]
	switch {
	case !ok || !isBase64:
		return nil, invalid("image_url: a data: URL must be base64 (data:image/png;base64,...)")
	case format == "":
		return nil, invalid("image_url: image type %q is not one of PNG, JPEG, GIF or WebP", mediaType)
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return nil, invalid("image_url: the data is not base64: %v", err)
	}
	return &Image{Format: format, Source: ImageSource{Bytes: b}}, nil
}

// ReadChat reads a chat completion request body as OpenAI's API reads
// it, into chat.Request: stop as a string or a list, and the legacy
// max_tokens when max_completion_tokens is absent; "stop": null is no
// stop sequence.
func ReadChat(body []byte) (chat.Request, error) {
	var r chat.Request
	var raw struct {
		Stop      json.RawMessage `json:"stop"`
		MaxTokens *int64          `json:"max_tokens"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return r, invalid("the body is not a JSON object: %v", err)
	}
	var stop string
	// null (no stop sequences) is no string: json reads it into one as "".
	if bytes.HasPrefix(bytes.TrimSpace(raw.Stop), []byte(`"`)) && json.Unmarshal(raw.Stop, &stop) == nil {
		// A single stop sequence: read the rest with it as a list.
		var m map[string]json.RawMessage
		_ = json.Unmarshal(body, &m)
		m["stop"], _ = json.Marshal([]string{stop})
		body, _ = json.Marshal(m)
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return r, invalid("the body is not a chat completion request: %v", err)
	}
	if r.MaxCompletionTokens == nil {
		r.MaxCompletionTokens = raw.MaxTokens
	}
	return r, nil
}
