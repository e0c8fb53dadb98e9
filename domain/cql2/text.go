package cql2

import "unicode/utf8"

// TextFault checks s as the value of a character string: valid UTF-8
// holding no NUL, the text PostgreSQL can bind. It returns the 1-based
// character position of the first fault and what it is, or 0 and "" when
// there is none. A quoted string of a filter and a queryable given as a
// query parameter are checked by it alike, so neither reaches the
// database as a value it refuses. Pure; safe for concurrent use.
func TextFault(s string) (pos int, fault string) {
	pos = 1
	for i := 0; i < len(s); pos++ {
		r, w := utf8.DecodeRuneInString(s[i:])
		if f := runeFault(r, w); f != "" {
			return pos, f
		}
		i += w
	}
	return 0, ""
}

// runeFault is what is wrong with the rune r of width w as text: invalid
// UTF-8, a NUL, or nothing ("").
func runeFault(r rune, w int) string {
	switch {
	case r == utf8.RuneError && w == 1:
		return "text that is not valid UTF-8"
	case r == 0:
		return "a NUL character"
	}
	return ""
}
