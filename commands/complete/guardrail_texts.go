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
