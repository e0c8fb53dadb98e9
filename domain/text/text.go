package text

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/arr-dev/arr/domain"
)

// The kinds of violation; an error's code is the field's base name, an
// underscore and one of these ("q_too_long").
const (
	KindInvalidUTF8      = "invalid_utf8"
	KindControlCharacter = "control_character"
	KindTooLong          = "too_long"
)

// Check returns nil when s is acceptable text for field, else a domain
// validation error naming field: s must be valid UTF-8, hold no control
// character but tab and newline (so no NUL, no carriage return, no C1
// control), and have at most maxChars characters (Unicode code points;
// 0 means no cap). field is the caller's name for the input ("name",
// "columns[3]", "rows[12].address"); the code uses its base name.
func Check(field, s string, maxChars int) error {
	if !utf8.ValidString(s) {
		i := firstInvalid(s)
		return domain.Invalid(code(field, KindInvalidUTF8), field,
			"%s is not valid UTF-8 text (bad byte 0x%02x at byte %d); send UTF-8", field, s[i], i)
	}
	n := 0
	for _, r := range s {
		n++
		if Control(r) {
			return domain.Invalid(code(field, KindControlCharacter), field,
				"%s holds the control character U+%04X at character %d; remove it (tab and newline are the only control characters allowed)", field, r, n)
		}
	}
	if maxChars > 0 && n > maxChars {
		return domain.Invalid(code(field, KindTooLong), field, "%s is %d characters; at most %d are allowed", field, n, maxChars)
	}
	return nil
}

// CheckAll checks several values of one field ("columns", "counties"),
// naming the first bad one by its index.
func CheckAll(field string, ss []string, maxChars int) error {
	for i, s := range ss {
		if err := Check(fmt.Sprintf("%s[%d]", field, i), s, maxChars); err != nil {
			return err
		}
	}
	return nil
}

// Control reports whether r is a control character the rule refuses: C0
// controls but tab and newline, DEL and the C1 controls.
func Control(r rune) bool {
	return (r < 0x20 && r != '\t' && r != '\n') || (r >= 0x7f && r <= 0x9f)
}

// Valid reports whether s passes Check with no length cap.
func Valid(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if Control(r) {
			return false
		}
	}
	return true
}

// Clean makes text from the world fit the rule: invalid UTF-8 becomes
// U+FFFD, carriage returns become newlines (CRLF one newline), form feeds
// and vertical tabs become spaces, and other refused control characters
// are dropped. Text that already fits is returned as it is.
func Clean(s string) string {
	if Valid(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range s {
		switch {
		case r == '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				continue
			}
			b.WriteByte('\n')
		case r == '\f' || r == '\v':
			b.WriteByte(' ')
		case Control(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// code is the stable error code for a violation of field: its base name
// (up to the first '[' or '.') and the kind.
func code(field, kind string) string {
	base := field
	if i := strings.IndexAny(base, "[."); i >= 0 {
		base = base[:i]
	}
	if base == "" {
		return "text_" + kind
	}
	return base + "_" + kind
}

func firstInvalid(s string) int {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return 0
}

// Escape makes text safe to show on a terminal or in a log line: invalid
// UTF-8 becomes U+FFFD and every control character Control refuses (ESC,
// BEL, CR, the C1 controls, …) is written as a Go escape (\x1b, \r,
// \u009b). Text that has none is returned as it is.
func Escape(s string) string {
	if Valid(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		switch {
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80 && Control(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case Control(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Bound is Escape(s) cut to at most n characters, saying how much was
// left out.
func Bound(s string, n int) string {
	s = Escape(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for off := range s {
		if i == n {
			return s[:off] + fmt.Sprintf("… (%d bytes more)", len(s)-off)
		}
		i++
	}
	return s
}
