package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Escaping is how an encoder writes <, > and & in strings: each route
// keeps the one it has always had (the Messages route writes text as it
// was written, Verbatim; the Responses route's chat request and the
// use case's assembled replies are escaped, EscapeHTML, as json.Marshal
// does).
type Escaping int

const (
	// EscapeHTML writes <, > and & as \u003c, \u003e and \u0026
	// (json.Marshal's default).
	EscapeHTML Escaping = iota
	// Verbatim writes them as they are.
	Verbatim
)

// Marshal encodes v with the escaping e, without a trailing newline.
func Marshal(v any, e Escaping) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(e == EscapeHTML)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}

// Field is a request field beyond the chat ones (the gateway's routing
// fields: quality_floor, max_cost_usd, brand_pref), sent as given.
type Field struct {
	Name string
	Raw  json.RawMessage
}

// Body encodes r with the escaping e, then the extra fields in order,
// their values as given.
func Body(r *Request, extra []Field, e Escaping) ([]byte, error) {
	out, err := Marshal(r, e)
	if err != nil {
		return nil, fmt.Errorf("encoding the chat request: %w", err)
	}
	if len(extra) == 0 {
		return out, nil
	}
	var buf bytes.Buffer
	buf.Write(out[:len(out)-1])
	for _, f := range extra {
		name, _ := json.Marshal(f.Name)
		buf.WriteByte(',')
		buf.Write(name)
		buf.WriteByte(':')
		buf.Write(f.Raw)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
