package gemini

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/chat"
)

// SignatureSep separates a tool call id the translator made from the
// thoughtSignature of the Gemini function call it stands for.
const SignatureSep = "__thought__"

// idSafe: id is a non-empty tool call id of the alphabet
// [A-Za-z0-9_-] (Anthropic's tool_use id; OpenAI's ids keep to it too)
// without SignatureSep, so it can carry a signature after it.
func idSafe(id string) bool {
	if id == "" || strings.Contains(id, SignatureSep) {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// idSignature is the tail of a tool call id that carries a Gemini
// thoughtSignature: SignatureSep and the signature's bytes in URL-safe
// base64 without padding, so the whole id keeps to [A-Za-z0-9_-] (""
// when there is no signature, or one that is not base64 bytes: Gemini
// could not take it back either).
func idSignature(sig string) string {
	if sig == "" {
		return ""
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(sig); err == nil {
			return SignatureSep + base64.RawURLEncoding.EncodeToString(b)
		}
	}
	return ""
}

// SkipSignature is the thoughtSignature sent on the first function call
// of an assistant turn that carries none: Google's documented sentinel
// "skip_thought_signature_validator", its bytes in standard base64 (the
// field is bytes; the sentinel is written in URL-safe base64).
const SkipSignature = "skip/thought/signature/validator"

// Request is r as the body of a Gemini generateContent (or
// streamGenerateContent) request; the model and whether it streams are
// in the URL, not the body. What Gemini cannot be told (a tool kind
// other than function, a tool result with no earlier call, an image URL
// of unknown type) is a *domain.Error of kind domain.ErrInvalid: the
// client's request, refused before it goes out. Fields Gemini has no
// counterpart for (parallel_tool_calls, user, prompt_cache_key, …) are
// left out.
func Request(r *chat.Request) ([]byte, error) {
	out := request{}
	contents, system, err := messages(r.Messages)
	if err != nil {
		return nil, err
	}
	out.Contents, out.SystemInstruction = contents, system
	if out.Tools, out.ToolConfig, err = tools(r.Tools, r.ToolChoice); err != nil {
		return nil, err
	}
	if out.GenerationConfig, err = generation(r); err != nil {
		return nil, err
	}
	return chat.Marshal(out, chat.Verbatim)
}

// generation is r's sampling, length, stop and response format settings
// (nil: none).
func generation(r *chat.Request) (*generationConfig, error) {
	g := generationConfig{Temperature: r.Temperature, TopP: r.TopP, MaxOutputTokens: r.MaxCompletionTokens, StopSequences: r.Stop}
	if r.ResponseFormat != nil {
		var f struct {
			Type       string `json:"type"`
			JSONSchema *struct {
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		}
		if err := remarshal(r.ResponseFormat, &f); err != nil {
			return nil, domain.Invalid("invalid_response_format", "response_format", "response_format is not an object with a type: %v", err)
		}
		switch f.Type {
		case "text":
		case "json_object":
			g.ResponseMIMEType = "application/json"
		case "json_schema":
			g.ResponseMIMEType = "application/json"
			if f.JSONSchema != nil && len(f.JSONSchema.Schema) > 0 && string(f.JSONSchema.Schema) != "null" {
				g.ResponseJSONSchema = f.JSONSchema.Schema
			}
		default:
			return nil, domain.Invalid("invalid_response_format", "response_format.type", "response_format type %q: Gemini models take text, json_object or json_schema", f.Type)
		}
	}
	if g.Temperature == nil && g.TopP == nil && g.MaxOutputTokens == nil && len(g.StopSequences) == 0 && g.ResponseMIMEType == "" {
		return nil, nil
	}
	return &g, nil
}

// tools is r's function tools as one Gemini tool of function
// declarations, and tool_choice as its function-calling mode.
func tools(ts []chat.Tool, choice any) ([]tool, *toolConfig, error) {
	if len(ts) == 0 {
		return nil, nil, nil
	}
	mode, names, err := toolChoice(choice)
	if err != nil {
		return nil, nil, err
	}
	var decls []functionDeclaration
	for i, t := range ts {
		if t.Type != "function" {
			return nil, nil, domain.Invalid("unsupported_tool", "tools", "tools[%d] is of type %q: Gemini models take function tools only", i, t.Type)
		}
		d := functionDeclaration{Name: t.Function.Name}
		if t.Function.Description != nil {
			d.Description = *t.Function.Description
		}
		if p := t.Function.Parameters; len(p) > 0 && string(p) != "null" {
			d.ParametersJSONSchema = p
		}
		decls = append(decls, d)
	}
	var cfg *toolConfig
	switch {
	case mode == "allowed":
		// Only the allowed tools are offered (AUTO with a list of names
		// is not a mode Gemini has).
		decls = keep(decls, names)
		mode, names = "AUTO", nil
	case mode == "allowed_required":
		mode = "ANY"
	}
	if mode != "" {
		cfg = &toolConfig{FunctionCallingConfig: functionCallingConfig{Mode: mode, AllowedFunctionNames: names}}
	}
	return []tool{{FunctionDeclarations: decls}}, cfg, nil
}

// keep is the declarations named in names.
func keep(decls []functionDeclaration, names []string) []functionDeclaration {
	var out []functionDeclaration
	for _, d := range decls {
		for _, n := range names {
			if d.Name == n {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// toolChoice is tool_choice as a Gemini mode ("" when unset) and the
// function names it allows: "allowed" and "allowed_required" are an
// allowed_tools choice, resolved by tools.
func toolChoice(choice any) (string, []string, error) {
	if choice == nil {
		return "", nil, nil
	}
	var c struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
		AllowedTools struct {
			Mode  string `json:"mode"`
			Tools []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		} `json:"allowed_tools"`
	}
	var s string
	if remarshal(choice, &s) == nil {
		c.Type = s
	} else if err := remarshal(choice, &c); err != nil {
		return "", nil, domain.Invalid("invalid_tool_choice", "tool_choice", "tool_choice is neither a string nor an object: %v", err)
	}
	switch c.Type {
	case "auto":
		return "AUTO", nil, nil
	case "none":
		return "NONE", nil, nil
	case "required":
		return "ANY", nil, nil
	case "function":
		return "ANY", []string{c.Function.Name}, nil
	case "allowed_tools":
		var names []string
		for _, t := range c.AllowedTools.Tools {
			names = append(names, t.Function.Name)
		}
		if c.AllowedTools.Mode == "required" {
			return "allowed_required", names, nil
		}
		return "allowed", names, nil
	}
	return "", nil, domain.Invalid("invalid_tool_choice", "tool_choice", "tool_choice %q: Gemini models take auto, none, required, a function or allowed_tools", c.Type)
}

// remarshal decodes v's JSON encoding into out: a field typed any holds
// what a dialect set or what encoding/json decoded (a string, a map, a
// typed value), all read the same way.
func remarshal(v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// trimSignature splits a tool call id into the id and the thought
// signature the translator put in it, in standard base64 as Gemini sends
// it ("" when none). The signature is read as URL-safe base64 (idSignature),
// or as standard base64, as ids made before were: the two alphabets
// differ in '-', '_' against '+', '/', '=', so no text is both but with
// different bytes. One that is neither is no signature.
func trimSignature(id string) (string, string) {
	i := strings.Index(id, SignatureSep)
	if i < 0 {
		return id, ""
	}
	tail := id[i+len(SignatureSep):]
	b, err := base64.RawURLEncoding.DecodeString(tail)
	if err != nil {
		if b, err = base64.StdEncoding.DecodeString(tail); err != nil {
			return id[:i], ""
		}
	}
	if len(b) == 0 {
		return id[:i], ""
	}
	return id[:i], base64.StdEncoding.EncodeToString(b)
}
