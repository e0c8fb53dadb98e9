package usps

import (
	"slices"
	"strings"
)

// unitPart is one designator of a secondary unit and its identifier
// ("BLDG" "4"); a designator Publication 28 writes with no number (REAR)
// has none, and a unit column's identifier may have no designator.
type unitPart struct{ des, id string }

// numberWords stand between a designator and its identifier and are not
// part of it ("Apt No 5", "Unit # 4", "Apt Number 5").
var numberWords = map[string]bool{"#": true, "NO": true, "NUMBER": true, "NUM": true, "NBR": true}

// unitReading is what readUnit reads: the unit's parts, and the words
// after them, which are no part of an identifier (a directional, a city:
// "Ste 100 North", "Apt 2 Baltimore").
type unitReading struct {
	parts []unitPart
	rest  []string
}

// String is the unit: its parts as joinUnit writes them, then the words
// after them, a space apart ("100 NORTH"): never dropped, so that Ste 100
// North is neither Ste 100 nor Ste 100 South.
func (r unitReading) String() string {
	return join(joinUnit(r.parts), strings.Join(r.rest, " "))
}

// first is the unit's first identifier.
func (r unitReading) first() string {
	for _, p := range r.parts {
		if p.id != "" {
			return p.id
		}
	}
	return ""
}

// interchangeable are the designators lists write for one and the same
// unit (APT 2, UNIT 2, STE 2, #2): in a key they are no part of the unit,
// which is its identifier alone, or, beside another designator, UNIT and
// the identifier. Every other designator names something else than an
// apartment of that number (a building, a floor, a penthouse, a slip, a
// hangar, a room, a lot, a space, a trailer) and stays in the key
// ("BLDG 2" is not "2").
var interchangeable = map[string]bool{"#": true, "APT": true, "UNIT": true, "STE": true}

// readUnit is the one reading of a secondary unit, for the address line
// (Parse, from its first designator) and a unit column (UnitID). It reads
// all of toks: the words after the unit's parts are its rest.
//
// The identifier is kept whole and normalized: its words are joined
// ("2-B", "2B" and "2 B" are all "2B"; two numbers keep a hyphen between
// them, "12 3" is "12-3", never "123"), "&" is kept ("2 & 3" is "2&3",
// which is no single unit and never equals "2"), and a numeric one drops
// its leading zeros ("02" is "2"). A directional is read abbreviated
// ("2 North" is "2 N", so "2N"), as the street's postdirectional is, and
// an ordinal before a floor is that floor ("2nd Fl" is "FL 2"). After
// the first word of an identifier only a word with a digit, a single
// letter after a digit or one joined by "&" belongs to it: a longer word
// ends the identifier, and it and the words after it are the rest.
// joinUnit says which designators the unit keeps.
func readUnit(toks []string) unitReading {
	toks = slices.Clone(toks)
	for i, t := range toks {
		if d, ok := directionals[t]; ok {
			toks[i] = d // "2 North" is "2 N", as the street's postdirectional would be
		}
	}
	for i := 0; i+1 < len(toks); i++ {
		if n, ok := floorOrdinal(toks[i : i+2]); ok {
			toks[i], toks[i+1] = toks[i+1], n // "2ND FL" is "FL 2"
		}
	}
	var r unitReading
	i := 0
	for i < len(toks) {
		des, isDes := Secondary(toks[i])
		if !isDes && len(r.parts) > 0 {
			break
		}
		p := unitPart{}
		if isDes {
			p.des, i = des, i+1
			for i < len(toks) && (numberWords[toks[i]] || toks[i] == "&") {
				i++
			}
		}
		var n int
		p.id, n = identifier(toks[i:])
		i += n
		if p.id == "" && p.des == "" {
			break
		}
		r.parts = append(r.parts, p)
	}
	r.rest = toks[i:]
	return r
}

// identifier reads a unit identifier's words, up to the next designator
// or the first word that is no part of it, and joins them.
func identifier(toks []string) (string, int) {
	var b strings.Builder
	n := 0
	for n < len(toks) {
		t := toks[n]
		if _, isDes := Secondary(t); isDes || (n == 0 && t == "&") {
			break
		}
		if n > 0 && !continuesID(toks[n-1], t) {
			break
		}
		if s := b.String(); s != "" && endsInDigit(s) && t[0] >= '0' && t[0] <= '9' {
			b.WriteByte('-')
		}
		b.WriteString(t)
		n++
	}
	id := strings.TrimRight(b.String(), "&")
	if strings.Trim(id, "0123456789") == "" && id != "" {
		id = houseNumber(id)
	}
	return id, n
}

// continuesID: t, after prev, is still the identifier's ("2 B", "2 & 3",
// "B 2"; a letter only after a digit, so that "2 B C" is "2B" and the
// rest "C" however it is spaced), not what follows the unit ("2 Baltimore", a ZIP Code "2 21217",
// "R M": letters alone could join into a designator, RM).
func continuesID(prev, t string) bool {
	switch {
	case t == "&" || prev == "&":
		return true
	case len(t) == 5 && digits(t), len(t) == 10 && digits(t[:5]) && t[5] == '-' && digits(t[6:]):
		return false
	}
	hasDigit := func(s string) bool { return strings.ContainsAny(s, "0123456789") }
	return hasDigit(t) || (len(t) == 1 && endsInDigit(prev))
}

func endsInDigit(s string) bool { c := s[len(s)-1]; return c >= '0' && c <= '9' }

// joinUnit writes a unit's parts as one key, the same however the line
// orders them. A designator without an identifier is dropped ("Apt No 5"
// is "5"; "Apt" alone is none), unless it is one Publication 28 writes
// with no number (REAR, FRNT, UPPR, BSMT, ...): that one qualifies the
// unit and is written first ("Rear Apt 2" and "Apt 2 Rear" are both
// "REAR UNIT 2", never "2"). The numbered parts are written as "DES id"
// ("FL 2", "BLDG 2", "PH 2"; "2nd Fl" is "FL 2"), the interchangeable
// ones as UNIT after the others ("Bldg 4 Apt 2", "Bldg 4 #2" and "Apt 2
// Bldg 4" are all "BLDG 4 UNIT 2"), except that a unit that is one
// interchangeable numbered part, or an identifier with no designator (a
// unit column's "2"), is its identifier alone ("APT 2", "#2" and "2" are
// "2"). Every designator written is followed by its identifier or by
// another designator, so the key reads back as itself.
func joinUnit(parts []unitPart) string {
	var named, generic []unitPart
	var qualifiers []string
	for _, p := range parts {
		switch {
		case p.id == "" && unitsWithoutNumber[p.des]:
			qualifiers = append(qualifiers, p.des)
		case p.id == "":
		case p.des == "" || interchangeable[p.des]:
			generic = append(generic, unitPart{"UNIT", p.id})
		default:
			named = append(named, p)
		}
	}
	slices.Sort(qualifiers)
	qualifiers = slices.Compact(qualifiers)
	if len(qualifiers) == 0 && len(named) == 0 && len(generic) == 1 {
		return generic[0].id
	}
	words := qualifiers
	for _, p := range append(named, generic...) {
		words = append(words, p.des, p.id)
	}
	return join(words...)
}
