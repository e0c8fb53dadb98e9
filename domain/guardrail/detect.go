package guardrail

import (
	"net/netip"
	"regexp"
	"strings"
)

// Match is one span [Start, End) of a text that a rule matched.
type Match struct {
	Start, End int
	// Rule is pii_<detector> or deny_pattern.
	Rule        string
	Placeholder string
}

// detector finds candidate spans with a pattern and keeps those check
// accepts (a Luhn sum, an SSN's ranges, an IBAN's mod-97, an address that
// parses).
type detector struct {
	kind  Detector
	re    *regexp.Regexp
	check func(text string, start, end int) bool
	// spans, when set, replaces check: the spans inside a candidate that
	// are matches (a card number inside a longer run of digit groups).
	spans func(text string, start, end int) [][2]int
}

// span adapts a check of the match alone.
func span(f func(string) bool) func(string, int, int) bool {
	return func(s string, start, end int) bool { return f(s[start:end]) }
}

// The candidates' patterns. Digits runs are bounded by \b (ASCII word
// boundaries) so a match is never part of a longer number or word. A card
// candidate is a whole run of digit groups (single spaces or dashes
// between); cardSpans finds the card numbers inside it.
var detectors = map[Detector]detector{
	CreditCard: {CreditCard, regexp.MustCompile(`\b\d(?:[ -]?\d)*\b`), nil, cardSpans},
	IBAN:       {IBAN, regexp.MustCompile(`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b`), span(ibanValid), nil},
	SSN:        {SSN, regexp.MustCompile(`\b\d{3}-\d{2}-\d{4}\b`), span(ssnValid), nil},
	Email:      {Email, regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,63}\b`), nil, nil},
	IPAddress:  {IPAddress, regexp.MustCompile(`\b(?:\d{1,3}\.){3}\d{1,3}\b|[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?:(?:\d{1,3}\.){3}\d{1,3})?`), ipInContext, nil},
	Phone:      {Phone, regexp.MustCompile(`\+\d{1,3}(?:[ .-]?(?:\(\d{1,4}\)|\d{1,4})){1,5}\b|(?:\(\d{3}\) ?|\b\d{3}[ .-])\d{3}[ .-]\d{4}\b`), phoneInContext, nil},
}

// digits is s without its separators.
func digits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

// Luhn reports whether a string of digits passes the Luhn check.
func Luhn(d string) bool {
	if d == "" {
		return false
	}
	sum, double := 0, false
	for i := len(d) - 1; i >= 0; i-- {
		n := int(d[i] - '0')
		if n < 0 || n > 9 {
			return false
		}
		if double {
			n *= 2
			if n > 9 {
				n -= 9
			}
		}
		sum, double = sum+n, !double
	}
	return sum%10 == 0
}

// luhnCard: 13 to 19 digits that pass Luhn, separated (if at all) the same
// way throughout, and not all one digit.
func luhnCard(s string) bool {
	d := digits(s)
	if len(d) < 13 || len(d) > 19 || strings.Count(d, d[:1]) == len(d) {
		return false
	}
	if strings.Contains(s, " ") && strings.Contains(s, "-") {
		return false
	}
	return Luhn(d)
}

// ssnValid: an SSN's area is not 000, 666 or 900-999, its group not 00 and
// its serial not 0000.
func ssnValid(s string) bool {
	area, group, serial := s[0:3], s[4:6], s[7:11]
	return area != "000" && area != "666" && area[0] != '9' && group != "00" && serial != "0000"
}

// ibanValid: 15 to 34 characters whose mod-97 (ISO 7064, the first four
// moved to the end, letters as 10..35) is 1.
func ibanValid(s string) bool {
	c := strings.ReplaceAll(s, " ", "")
	if len(c) < 15 || len(c) > 34 {
		return false
	}
	c = c[4:] + c[:4]
	rem := 0
	for i := 0; i < len(c); i++ {
		ch := c[i]
		switch {
		case ch >= '0' && ch <= '9':
			rem = (rem*10 + int(ch-'0')) % 97
		case ch >= 'A' && ch <= 'Z':
			rem = (rem*100 + int(ch-'A') + 10) % 97
		default:
			return false
		}
	}
	return rem == 1
}

// ipValid: an IPv4 address in dotted decimal (no leading zeros) or an IPv6
// address, as netip parses them; an IPv6 candidate needs a hex digit (so
// "::" or a clock's "12:30" is not one).
func ipValid(s string) bool {
	if strings.Contains(s, ":") && !strings.ContainsAny(s, "0123456789abcdefABCDEF") {
		return false
	}
	a, err := netip.ParseAddr(s)
	return err == nil && (a.Is4() || strings.Contains(s, ":"))
}

// phoneValid: a number in one of the shapes phones are written in, with
// 8 to 15 digits (E.164's bound): after a + (E.164: a country code, then
// groups), or NANP's (415) 555-0132 and 415-555-0132 without one; its
// separators the same throughout (after the country code and a closing
// parenthesis any one may come), so an amount in thin groups or a
// version's dotted parts are not phone numbers.
func phoneValid(s string) bool {
	n := len(digits(s))
	if n < 8 || n > 15 {
		return false
	}
	var seps []byte
	for i := 0; i < len(s); i++ {
		if !separator(s[i]) || i > 0 && s[i-1] == ')' {
			continue
		}
		seps = append(seps, s[i])
	}
	if s[0] == '+' && len(seps) > 0 && !strings.ContainsAny(s[1:strings.IndexByte(s, seps[0])], "()") {
		seps = seps[1:] // the one after the country code
	}
	return len(seps) == 0 || strings.Count(string(seps), string(seps[:1])) == len(seps)
}

// Scan returns the matches of the detectors of kinds in s, earlier kinds
// of Detectors() first on overlaps, in text order.
func scanPII(s string, kinds map[Detector]PIIRule) []Match {
	var out []Match
	for _, k := range Detectors() {
		if _, ok := kinds[k]; !ok {
			continue
		}
		d := detectors[k]
		for _, loc := range d.re.FindAllStringIndex(s, -1) {
			spans := [][2]int{{loc[0], loc[1]}}
			if d.spans != nil {
				spans = d.spans(s, loc[0], loc[1])
			} else if d.check != nil && !d.check(s, loc[0], loc[1]) {
				continue
			}
			for _, sp := range spans {
				out = claim(out, Match{Start: sp[0], End: sp[1], Rule: "pii_" + string(k), Placeholder: k.Placeholder()})
			}
		}
	}
	return out
}

// claim adds m unless it overlaps a match already claimed.
func claim(ms []Match, m Match) []Match {
	for _, o := range ms {
		if m.Start < o.End && o.Start < m.End {
			return ms
		}
	}
	return append(ms, m)
}

// wordByte reports whether b is an ASCII letter or digit.
func wordByte(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// groupByte reports whether b may be part of a code's group: a digit or
// an upper-case ASCII letter.
func groupByte(b byte) bool { return b >= '0' && b <= '9' || b >= 'A' && b <= 'Z' }

func separator(b byte) bool { return b == ' ' || b == '.' || b == '-' }

// cardInContext: a Luhn-valid card number not written as a phone number
// (after a +).
func cardInContext(s string, start, end int) bool {
	return (start == 0 || s[start-1] != '+') && luhnCard(s[start:end])
}

// ipInContext: an address that parses, an IPv6 one not inside a word
// (std::vector's "d::" parses).
func ipInContext(s string, start, end int) bool {
	if strings.Contains(s[start:end], ":") && (start > 0 && wordByte(s[start-1]) || end < len(s) && wordByte(s[end])) {
		return false
	}
	return ipValid(s[start:end])
}

// phoneInContext: a phone number (phoneValid) that is not the middle groups of a
// longer code (a card number, an IBAN): no group of digits or capitals
// right before or after.
func phoneInContext(s string, start, end int) bool {
	if start > 0 && wordByte(s[start-1]) || end < len(s) && wordByte(s[end]) {
		return false
	}
	if start > 1 && separator(s[start-1]) && groupByte(s[start-2]) || end+1 < len(s) && separator(s[end]) && groupByte(s[end+1]) {
		return false
	}
	return phoneValid(s[start:end])
}

// cardSpans returns the card numbers in the run of digit groups
// s[start:end]: the run itself if it is one, else, leftmost first and
// longest first, every window of whole groups (13 to 19 digits) that is,
// so a card next to other digits (an expiry date, a quantity, a note, a
// second card) is still found. Windows start and end at group bounds
// only: any window of a long run would pass Luhn one time in ten, making
// every long number a card.
func cardSpans(s string, start, end int) [][2]int {
	if cardInContext(s, start, end) {
		return [][2]int{{start, end}}
	}
	groups := digitGroups(s, start, end)
	var out [][2]int
	for i := 0; i < len(groups); {
		next := i + 1
		for j := min(len(groups)-1, i+18); j >= i; j-- { // 19 groups hold 19 digits at least
			a, b := groups[i][0], groups[j][1]
			if (i > 0 || j < len(groups)-1) && cardInContext(s, a, b) {
				out, next = append(out, [2]int{a, b}), j+1
				break
			}
		}
		i = next
	}
	return out
}

// digitGroups splits s[start:end], digits with single separators between,
// into its groups of digits.
func digitGroups(s string, start, end int) [][2]int {
	var gs [][2]int
	for i := start; i < end; {
		j := i
		for j < end && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		gs = append(gs, [2]int{i, j})
		i = j + 1
	}
	return gs
}
