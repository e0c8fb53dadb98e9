package domain

import (
	"strings"
	"unicode"
)

// Verbatim is the rule of every structured request value — numbers, codes,
// keys and comma-separated lists of them, such as the records service's
// bbox, near, radius_m, layers, state and county, or the answer service's
// include_domains: it is read exactly as sent, so a value with whitespace
// in it or around it is refused, naming field, rather than trimmed. A
// client whose encoder writes "-76.7, 39.2" learns so at once instead of
// depending on what a server happens to forgive. Free text (a question, an
// address, an APN) is not structured and keeps its spaces. Pure; safe for
// concurrent use.
func Verbatim(field, value string) error {
	if i := strings.IndexFunc(value, unicode.IsSpace); i >= 0 {
		return Invalid("whitespace_in_value", field, "%s has whitespace at byte %d: structured values (numbers, codes and comma-separated lists) are read exactly as sent; send it without spaces", field, i)
	}
	return nil
}
