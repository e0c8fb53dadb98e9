package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Upstream is a client's Messages request body as it is sent on to an
// Anthropic upstream (pass-through): its top-level members in their order
// and every value byte for byte — blocks, cache_control, thinking,
// documents, citations, tools and fields this package does not know —
// but for model, which becomes model, the members named in drop (the
// gateway's own fields), left out, and max_tokens, which becomes
// maxTokens when that is above 0 (the gateway's cap under a cost
// ceiling). The whitespace between top-level members is dropped. body
// must be a JSON object without duplicate keys; a member whose name is
// not model, max_tokens, stream or one of drop but that a case-folding
// parser (encoding/json's) reads as one ("MODEL", "max_to\u212aens") is
// refused (ErrAliased): the upstream would be sent a second model or a
// max_tokens the gateway never capped.
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
		if real, ok := aliasOf(name, append([]string{"model", "max_tokens", "stream"}, drop...)); ok {
			return nil, fmt.Errorf("%w: %q stands for %s", ErrAliased, name, real)
		}
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

// ErrAliased: a request member names a field it is not, as a
// case-folding JSON parser reads names (Upstream).
var ErrAliased = errors.New("anthropic: a member names a field under another case")

// aliasOf is the one of known that name equals under Unicode simple case
// folding (as encoding/json matches member names) without being it.
func aliasOf(name string, known []string) (string, bool) {
	for _, k := range known {
		if k != name && strings.EqualFold(k, name) {
			return k, true
		}
	}
	return "", false
}
