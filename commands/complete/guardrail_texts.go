package complete

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/arr-dev/arr/domain"
)

// textKeys are the keys whose string values (or strings in an array
// under them) are a chat message's text: content (a string, or text
// parts' text), text, tool calls' arguments, refusal.
var textKeys = map[string]bool{"content": true, "text": true, "arguments": true, "refusal": true}

// walkTexts calls fn on each text of a decoded JSON value, in document
// order (arrays in order, objects' keys sorted), and sets each to what fn
// returns.
func walkTexts(v any, inText bool, fn func(string) string) any {
	switch x := v.(type) {
	case string:
		if inText {
			return fn(x)
		}
	case []any:
		for i := range x {
			x[i] = walkTexts(x[i], inText, fn)
		}
	case map[string]any:
		for _, key := range sortedKeys(x) {
			x[key] = walkTexts(x[key], textKeys[key], fn)
		}
	}
	return v
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

func decodeMessages(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, domain.Invalid("invalid_messages", "messages", "messages must be an array of messages")
	}
	return v, nil
}

// promptTexts lists the texts of the request's messages.
func promptTexts(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	v, err := decodeMessages(raw)
	if err != nil {
		return nil, err
	}
	var out []string
	walkTexts(v, false, func(s string) string { out = append(out, s); return s })
	return out, nil
}

// replaceTexts sets the texts of the messages, in promptTexts' order.
func replaceTexts(raw json.RawMessage, texts []string) (json.RawMessage, error) {
	v, err := decodeMessages(raw)
	if err != nil {
		return nil, err
	}
	i := 0
	v = walkTexts(v, false, func(s string) string {
		if i < len(texts) {
			s = texts[i]
		}
		i++
		return s
	})
	if i != len(texts) {
		return nil, fmt.Errorf("guardrails: %d texts for %d", len(texts), i)
	}
	return json.Marshal(v)
}

// walkStrings calls fn on each string value of a decoded JSON value (not
// object keys), in document order (arrays in order, objects' keys
// sorted), and sets each to what fn returns; opaque values are left out.
func walkStrings(v any, fn func(string) string) any {
	switch x := v.(type) {
	case string:
		return fn(x)
	case []any:
		for i := range x {
			x[i] = walkStrings(x[i], fn)
		}
	case map[string]any:
		for _, key := range sortedKeys(x) {
			if !opaque(x, key) {
				x[key] = walkStrings(x[key], fn)
			}
		}
	}
	return v
}

// opaque says whether member key of object o is no text but bytes the
// upstream checks or decodes (a thinking block's signature, a
// redacted_thinking block's or a base64 source's data, a search result's
// encrypted content): a guardrail's rewrite would break it, and what it
// holds is no text a rule reads.
func opaque(o map[string]any, key string) bool {
	switch key {
	case "signature", "encrypted_content", "encrypted_index":
		return true
	case "data":
		return o["type"] == "base64" || o["type"] == "redacted_thinking"
	}
	return false
}

// nativeTexts lists every string value of a pass-through body: all the
// upstream is sent, whatever block or field holds it.
func nativeTexts(body []byte) ([]string, error) {
	v, err := decodeBody(body)
	if err != nil {
		return nil, err
	}
	var out []string
	walkStrings(v, func(s string) string { out = append(out, s); return s })
	return out, nil
}

// replaceNativeTexts sets the string values of a pass-through body, in
// nativeTexts' order (numbers kept as written, no HTML escaping).
func replaceNativeTexts(body []byte, texts []string) ([]byte, error) {
	v, err := decodeBody(body)
	if err != nil {
		return nil, err
	}
	i := 0
	v = walkStrings(v, func(s string) string {
		if i < len(texts) {
			s = texts[i]
		}
		i++
		return s
	})
	if i != len(texts) {
		return nil, fmt.Errorf("guardrails: %d texts for %d", len(texts), i)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("guardrails: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func decodeBody(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, domain.Invalid("invalid_json", "", "the request body is not JSON")
	}
	return v, nil
}
