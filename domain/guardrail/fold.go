package guardrail

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// folded is the view of a text the detectors and deny patterns run on:
// what a model reads as the same characters written as ASCII would be. Each
// rune is taken to its NFKC form (full-width digits, letters and @ become
// ASCII, a no-break space a space), a format character (Cf: zero-width
// space, joiner, soft hyphen, bidi marks) is dropped, any other Unicode
// space is a space, and a combining mark (Mn, Me) right after an ASCII
// character is dropped (a digit with a line under it is the digit). from
// and to map each byte of the view back to the span of the original rune
// it came from, so a match redacts the original's span.
type folded struct {
	text     string
	from, to []int // nil: the view is the text (ASCII)
}

// fold returns the view of s.
func fold(s string) folded {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return folded{text: s}
	}
	var b []byte
	var from, to []int
	lastASCII := false
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		start, end := i, i+n
		i = end
		var out string
		switch {
		case r == utf8.RuneError && n == 1:
			out = s[start:end] // not UTF-8: kept as it is
		case unicode.Is(unicode.Cf, r):
			continue
		case (unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r)) && lastASCII:
			continue
		case r >= utf8.RuneSelf && unicode.IsSpace(r):
			out = " "
		case r < utf8.RuneSelf:
			out = string(r)
		default:
			out = norm.NFKC.String(s[start:end])
		}
		for range len(out) {
			from, to = append(from, start), append(to, end)
		}
		b = append(b, out...)
		lastASCII = out != "" && out[len(out)-1] < utf8.RuneSelf
	}
	return folded{text: string(b), from: from, to: to}
}

// span maps the view's span [start, end) back to the original's.
func (f folded) span(start, end int) (int, int) {
	if f.from == nil {
		return start, end
	}
	return f.from[start], f.to[end-1]
}
