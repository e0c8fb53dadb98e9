package safecsv

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Text neutralizes a text cell that a spreadsheet would run as a formula:
// one whose first character other than white space (a space, a no-break
// space, a line break, an ideographic space) or a format character (a
// zero-width space), read in Unicode NFKD (a full-width ＝ is =, and a
// composed ≠ is = and its slash), is =, +,
// -, or @, or that starts with a tab or a carriage return, gets a leading
// single quote, as OWASP advises. Only text cells: a number column is
// written as it is, so a negative longitude stays a number.
func Text(s string) string {
	if s == "" {
		return s
	}
	if s[0] == '\t' || s[0] == '\r' {
		return "'" + s
	}
	lead := strings.TrimLeftFunc(norm.NFKD.String(s), func(r rune) bool { return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) })
	if lead != "" && strings.IndexByte("=+-@", lead[0]) >= 0 {
		return "'" + s
	}
	return s
}

// Row returns rec with every cell passed through Text, for a row whose
// cells are all text (a header, a report line).
func Row(rec []string) []string {
	out := make([]string, len(rec))
	for i, s := range rec {
		out[i] = Text(s)
	}
	return out
}
