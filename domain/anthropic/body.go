package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// Upstream is a client's Messages request body as it is sent on to an
// Anthropic upstream (pass-through): its top-level members in their order
// and every value byte for byte — blocks, cache_control, thinking,
// documents, citations, tools and fields this package does not know —
// but for model, which becomes model, the members named in drop (the
// gateway's own fields), left out, and max_tokens, which becomes
// maxTokens when that is above 0 (the gateway's cap under a cost
// ceiling). The whitespace between top-level members is dropped. body
// must be a JSON object without duplicate keys.
func Upstream(body []byte, model string, maxTokens int64, drop []string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("anthropic: the request is not a JSON object")
	}
	out := make([]byte, 0, len(body)+len(model)+16)
	out = append(out, '{')
	member := func(key []byte, v []byte) {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(append(out, key...), ':'), v...)
	}
	modelJSON, _ := json.Marshal(model)
	sawModel, sawMax := false, false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("anthropic: reading the request: %w", err)
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("anthropic: reading the request's %s: %w", name, err)
		}
		key, _ := json.Marshal(name)
		switch {
		case slices.Contains(drop, name):
		case name == "model":
			sawModel = true
			member(key, modelJSON)
		case name == "max_tokens" && maxTokens > 0:
			sawMax = true
			member(key, strconv.AppendInt(nil, maxTokens, 10))
		default:
			member(key, v)
		}
	}
	if !sawModel {
		member([]byte(`"model"`), modelJSON)
	}
	if !sawMax && maxTokens > 0 {
		member([]byte(`"max_tokens"`), strconv.AppendInt(nil, maxTokens, 10))
	}
	return append(out, '}'), nil
}
