package safecsv

import (
	"testing"
	"unicode/utf8"
)

// TestAttackRawLeadingFormulaCharStaysQuoted: a cell whose very first
// byte is =, +, - or @ is a formula to a spreadsheet whatever follows;
// NFKC composes = with a following U+0338 into ≠, so the check on the
// normalized text misses it.
func TestAttackRawLeadingFormulaCharStaysQuoted(t *testing.T) {
	for _, lead := range "=+-@" {
		for r := rune(0x300); r < 0x2000; r++ {
			s := string(lead) + string(r) + "HYPERLINK(\"http://x\")"
			if !utf8.ValidString(s) {
				continue
			}
			if got := Text(s); got == s {
				t.Errorf("Text(%q) left a cell starting with %q as it is", s, lead)
			}
		}
	}
}
