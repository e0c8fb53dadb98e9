package cql2

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// kind is a token's kind.
type kind int

const (
	tEOF kind = iota
	tIdent
	tQuoted // a double-quoted property name
	tString
	tNumber
	tOp // = <> < <= > >=
	tLParen
	tRParen
	tComma
)

// token is one lexeme; pos is its 1-based character position.
type token struct {
	kind kind
	text string // an identifier or operator as written; a string's value
	pos  int
}

// keyword reports whether t is the (case-insensitive) keyword kw.
func (t token) keyword(kw string) bool { return t.kind == tIdent && strings.EqualFold(t.text, kw) }

// describe names t in an error message.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "the end of the filter"
	case tString:
		return "the string '" + t.text + "'"
	case tQuoted:
		return `the property "` + t.text + `"`
	}
	return "'" + t.text + "'"
}

// lex splits src into tokens.
func lex(src string) ([]token, error) {
	var out []token
	pos := 1 // character position of src[i]
	for i := 0; i < len(src); {
		r, w := utf8.DecodeRuneInString(src[i:])
		start := pos
		switch {
		case r == utf8.RuneError && w == 1:
			return nil, errAt(start, "the filter is not valid UTF-8")
		case unicode.IsSpace(r):
			i, pos = i+w, pos+1
			continue
		case r == '(' || r == ')' || r == ',':
			k := map[rune]kind{'(': tLParen, ')': tRParen, ',': tComma}[r]
			out = append(out, token{k, string(r), start})
			i, pos = i+1, pos+1
			continue
		case r == '=' || r == '<' || r == '>':
			op := string(r)
			if i+1 < len(src) && (r == '<' && (src[i+1] == '>' || src[i+1] == '=') || r == '>' && src[i+1] == '=') {
				op = src[i : i+2]
			}
			out = append(out, token{tOp, op, start})
			i, pos = i+len(op), pos+len(op)
			continue
		case r == '!' && i+1 < len(src) && src[i+1] == '=':
			return nil, errAt(start, "'!=' is not CQL2: write <> for not equal")
		case r == '\'' || r == '"':
			s, n, chars, err := quoted(src[i:], byte(r), start)
			if err != nil {
				return nil, err
			}
			k := tString
			if r == '"' {
				k = tQuoted
				if s == "" {
					return nil, errAt(start, `a quoted property name "" is empty`)
				}
			}
			out = append(out, token{k, s, start})
			i, pos = i+n, pos+chars
			continue
		case r == '-' || r == '+' || r == '.' || (r >= '0' && r <= '9'):
			n := number(src[i:])
			if n == 0 {
				return nil, errAt(start, "%q does not start a number (digits, an optional decimal point and exponent, an optional sign)", string(r))
			}
			out = append(out, token{tNumber, src[i : i+n], start})
			i, pos = i+n, pos+n
			continue
		case isIdentStart(r):
			j := i
			for j < len(src) {
				r2, w2 := utf8.DecodeRuneInString(src[j:])
				if !isIdentPart(r2) {
					break
				}
				j += w2
			}
			out = append(out, token{tIdent, src[i:j], start})
			pos += utf8.RuneCountInString(src[i:j])
			i = j
			continue
		}
		return nil, errAt(start, "unexpected character %q", string(r))
	}
	return append(out, token{tEOF, "", pos}), nil
}

// quoted reads a quoted string or name starting at s[0] == q, a doubled
// quote standing for one: its value, its length in bytes and characters.
func quoted(s string, q byte, pos int) (string, int, int, error) {
	var b strings.Builder
	chars := 1
	for i := 1; i < len(s); {
		if s[i] == q {
			if i+1 < len(s) && s[i+1] == q {
				b.WriteByte(q)
				i, chars = i+2, chars+2
				continue
			}
			return b.String(), i + 1, chars + 1, nil
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if f := runeFault(r, w); f != "" {
			return "", 0, 0, errAt(pos+chars, "%s inside a quoted %s", f, quotedWhat(q))
		}
		b.WriteString(s[i : i+w])
		i, chars = i+w, chars+1
	}
	return "", 0, 0, errAt(pos, "the quoted %s is not closed: add %c at its end (write %c%c for a %c inside it)", quotedWhat(q), q, q, q, q)
}

// quotedWhat names what a quote q starts: a string or a property name.
func quotedWhat(q byte) string {
	if q == '"' {
		return "property name"
	}
	return "string"
}

// number returns the length of the numeric literal at the start of s:
// [sign] digits [. digits] [e [sign] digits], or [sign] . digits ...;
// 0 if there is none.
func number(s string) int {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	n := digits()
	if i < len(s) && s[i] == '.' {
		i++
		n += digits()
	}
	if n == 0 {
		return 0
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		if digits() == 0 {
			i = j
		}
	}
	return i
}

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }

func isIdentPart(r rune) bool {
	return r == '_' || r == '.' || r == ':' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
