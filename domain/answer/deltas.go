package answer

import (
	"unicode"
	"unicode/utf8"
)

// Deltas cuts an answer into the pieces a streamed answer sends, one per
// sentence: a cut falls after the space that follows a sentence's end
// (".", "!", "?" or a citation's "]"), before a capital letter or a digit.
// The pieces joined are text exactly; text with no sentence end is one
// piece, and "" is none.
func Deltas(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if r == ' ' && i > start {
			prev, _ := utf8.DecodeLastRuneInString(text[:i])
			next, _ := utf8.DecodeRuneInString(text[i+n:])
			if (prev == '.' || prev == '!' || prev == '?' || prev == ']') && (unicode.IsUpper(next) || unicode.IsDigit(next)) {
				out = append(out, text[start:i+n])
				start = i + n
			}
		}
		i += n
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}
