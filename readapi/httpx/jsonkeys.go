package httpx

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/arr-dev/arr/domain"
)

// UniqueKeys is the rule every JSON request body of every service
// follows: no object in it names a member twice, where two names are the
// same when encoding/json would match them to the same field: equal after
// its case folding (ASCII letters of either case, and every Unicode
// simple fold set: "limit", "LIMIT" and "\u212aey" for "key" are one
// name). RFC 8259 only says names SHOULD be unique and leaves what a
// parser does with a repeat open (Go's encoding/json matches names to
// fields case-insensitively and keeps the last, others read names exactly
// or keep the first, some refuse), so a body with one could be read one
// way by arr and another by an upstream it is relayed to; RFC 7493
// (I-JSON) forbids exact repeats, and arr forbids folded ones too. A
// repeat is a 400 duplicate_key whose field is the repeated member's
// path, in the dotted form the services name fields with
// (messages[0].role). A body that is not JSON at all passes: the route's
// own parser says what it expects. The check is one pass of
// go-json-experiment's jsontext over the body, keeping the folded names
// of each open object. Pure; safe for concurrent use.
func UniqueKeys(body []byte) error {
	// Invalid UTF-8 is not this rule's business (encoding/json reads it as
	// U+FFFD), nor are exact repeats left to jsontext: the folded sets
	// below find them with the rest.
	dec := jsontext.NewDecoder(bytes.NewReader(body), jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	var names []map[string]struct{} // the open objects' folded names, innermost last (nil for an array)
	var fold []byte
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil // the end, or not JSON: the route's parser answers
		}
		switch tok.Kind() {
		case '{':
			names = append(names, map[string]struct{}{})
		case '[':
			names = append(names, nil)
		case '}', ']':
			names = names[:len(names)-1]
		case '"':
			kind, n := dec.StackIndex(dec.StackDepth())
			if kind != '{' || n%2 != 1 {
				continue // a value, not a name
			}
			fold = appendFolded(fold[:0], tok.String())
			top := names[len(names)-1]
			if _, seen := top[string(fold)]; seen {
				path := fieldPath(dec.StackPointer())
				return domain.Invalid("duplicate_key", path, "the JSON body names %s twice (names are compared as encoding/json matches them, ignoring case): each member of an object may be given once (RFC 7493)", path)
			}
			top[string(fold)] = struct{}{}
		}
	}
}

// AliasOf says which of known name stands for without being it: the
// known name it equals after encoding/json's case folding (UniqueKeys),
// while differing from it byte for byte ("MAX_TOKENS", "max_to\u212aens"
// for max_tokens). A route that reads its fields by their exact names
// and relays the rest refuses such a name, so no parser downstream (Go's
// among them, which matches names so) reads it as the field arr read
// differently or did not read at all.
func AliasOf(name string, known []string) (string, bool) {
	f := string(appendFolded(nil, name))
	for _, k := range known {
		if k != name && string(appendFolded(nil, k)) == f {
			return k, true
		}
	}
	return "", false
}

// appendFolded appends name folded as encoding/json folds member names
// (encoding/json's foldName): ASCII letters upper case, every other rune
// the smallest of its simple fold set.
func appendFolded(out []byte, name string) []byte {
	for _, r := range name {
		switch {
		case r < utf8.RuneSelf:
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
		default:
			for {
				r2 := unicode.SimpleFold(r)
				if r2 <= r {
					r = r2
					break
				}
				r = r2
			}
		}
		out = utf8.AppendRune(out, r)
	}
	return out
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
