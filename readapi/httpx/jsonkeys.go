package httpx

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/arr-dev/arr/domain"
)

// UniqueKeys is the rule every JSON request body of every service
// follows: no object in it names a member twice. RFC 8259 only says names
// SHOULD be unique and leaves what a parser does with a repeat open (Go's
// encoding/json and most others keep the last, some the first, some
// refuse), so a body with one could be read one way by arr and another by
// an upstream it is relayed to; RFC 7493 (I-JSON) forbids it, and so does
// arr. A repeat is a 400 duplicate_key whose field is the repeated member's
// path, in the dotted form the services name fields with
// (messages[0].role). A body that is not JSON at all passes: the route's
// own parser says what it expects. The check is one pass of
// go-json-experiment's jsontext over the body (RFC 7493 validation, which
// allocates nothing for a valid body); only a body that fails it is read
// again, to find the repeat. Pure; safe for concurrent use.
func UniqueKeys(body []byte) error {
	if jsontext.Value(body).IsValid() {
		return nil
	}
	// Invalid UTF-8 is not this rule's business (encoding/json reads it as
	// U+FFFD): only a repeated name stops this pass.
	err := jsontext.NewDecoder(bytes.NewReader(body), jsontext.AllowInvalidUTF8(true)).SkipValue()
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) || !errors.Is(se.Err, jsontext.ErrDuplicateName) {
		return nil
	}
	path := fieldPath(se.JSONPointer)
	return domain.Invalid("duplicate_key", path, "the JSON body names %s twice: each member of an object may be given once (RFC 7493)", path)
}

// fieldPath writes a JSON Pointer (/messages/0/role) as a field path
// (messages[0].role): a token that is a number is an array index (a
// member named by digits alone is written as one too).
func fieldPath(p jsontext.Pointer) string {
	var b strings.Builder
	for tok := range p.Tokens() {
		if _, err := strconv.ParseUint(tok, 10, 64); err == nil {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

// ReadJSON reads a request body whole and applies UniqueKeys to it, for
// routes that decode a small body: the body's own failures (IsBodyError)
// are returned as they are.
func ReadJSON(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return b, UniqueKeys(b)
}

// UnknownField is the member name of encoding/json's error for a member a
// Decoder with DisallowUnknownFields does not know ("" for any other
// error): the field a 400 names.
func UnknownField(err error) string {
	if err == nil {
		return ""
	}
	name, ok := strings.CutPrefix(err.Error(), `json: unknown field "`)
	if !ok {
		return ""
	}
	return strings.TrimSuffix(name, `"`)
}
