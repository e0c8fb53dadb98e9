package usps

import (
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

var (
	suffixes     = table(suffixTable)
	secondaries  = table(secondaryTable)
	directionals = table(directionalTable)
	states       = stateTable()
)

// unitWords are designators that name a unit wherever they stand after
// the street's name (the others, such as LOT or REAR, also name streets,
// and are read as a unit designator only after the street suffix).
var unitWords = map[string]bool{"#": true, "APT": true, "UNIT": true, "STE": true}

// Address is an address line in its Publication 28 parts.
type Address struct {
	// Number is the house number without leading zeros ("0012" is
	// "12"), with a fraction if it has one ("12 1/2").
	Number string
	// Predir is the directional before the street name (W).
	Predir string
	// Name is the street name (NORTH in "2041 W NORTH AVE").
	Name string
	// Suffix is the street suffix's standard abbreviation (AVE).
	Suffix string
	// Postdir is the directional after the street (NW).
	Postdir string
	// Unit is the secondary unit: the identifier alone for the
	// designators lists write for one unit ("2" for "APT 2", "#2", "Unit
	// 2", "Ste 2"; "2B" for "Apt 2-B"), the designator and identifier
	// for every other ("BLDG 2", "FL 2" for "2nd Fl", "PH 2", "SLIP 5"),
	// a designator written without one (REAR), or a unit of several
	// parts ("BLDG 4 UNIT 2", "REAR UNIT 2"). joinUnit says how it is
	// written.
	Unit string
}

// Suffix returns the standard abbreviation of a street suffix word
// ("Avenue", "AV", "ave." → "AVE").
func Suffix(w string) (string, bool) { s, ok := suffixes[word(w)]; return s, ok }

// Directional returns the abbreviation of a directional ("West" → "W").
func Directional(w string) (string, bool) { s, ok := directionals[word(w)]; return s, ok }

// Secondary returns the standard abbreviation of a secondary unit
// designator ("Apartment" → "APT", "#" → "#").
func Secondary(w string) (string, bool) {
	w = word(w)
	if w == "#" {
		return "#", true
	}
	s, ok := secondaries[w]
	return s, ok
}

// word is w in upper case without the punctuation around it.
func word(w string) string {
	return strings.Trim(strings.ToUpper(strings.TrimSpace(w)), ".,;:")
}

// Parse reads an address line ("2041 West North Avenue, Apt. #2").
func Parse(line string) Address {
	toks := tokens(line)
	for len(toks) > 0 && toks[0] == "&" { // "&" is kept only in a unit ("Apt 2 & 3")
		toks = toks[1:]
	}
	var a Address
	if len(toks) > 0 && isNumber(toks[0]) {
		a.Number = houseNumber(toks[0])
		toks = toks[1:]
		if len(toks) > 2 && toks[0] == "&" && isFraction(toks[1]) {
			toks = toks[1:] // "100 & 1/2" is "100 1/2", as the key writes it
		}
		if len(toks) > 1 && isFraction(toks[0]) {
			a.Number += " " + toks[0]
			toks = toks[1:]
		}
	}
	for len(toks) > 0 && toks[0] == "&" { // "0 & St": the street's first word is St, as street reads it
		toks = toks[1:]
	}
	toks, a.Unit = unit(roadNumbers(splitLettered(toks)))
	a.Predir, a.Name, a.Suffix, a.Postdir = street(toks)
	return a
}

// tokens splits a line into upper-case words: letters and digits, "/" in
// a fraction, "-" between two digits (Queens' 12-34), "#" and "&" on their
// own, a Unicode vulgar fraction as its own word ("12½" is "12" "1/2", as
// "12-1/2" is); every other character separates. The line is read in
// Unicode NFKC first (fold), so that full-width digits and letters are
// ASCII ones and a letter with a combining mark is the precomposed
// letter; a hyphen between a number and a letter ending the word is
// dropped ("12-A" is "12A", as "2-B" is "2B"), unless the letter may be a
// directional: "12-E" is kept whole, since house 12-E Main St may be 12E
// on Main St or 12 on East Main St, and its key is neither's (Parse
// splits it, as "2 E", everywhere but in the house number).
func tokens(line string) []string {
	rs := []rune(strings.ToUpper(fold(line)))
	var b strings.Builder
	for i, r := range rs {
		slash := r == '/' || r == '\u2044' || r == '\u2215'
		between := i > 0 && i+1 < len(rs) && unicode.IsDigit(rs[i-1])
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		case r == '#' || r == '&':
			b.WriteString(" " + string(r) + " ")
		case (slash || r == '-') && between && unicode.IsDigit(rs[i+1]):
			if slash {
				r = '/'
			}
			b.WriteRune(r)
		case r == '-' && between && unicode.IsLetter(rs[i+1]) && (i+2 == len(rs) || !isWordRune(rs[i+2])):
			if strings.ContainsRune("NSEW", rs[i+1]) {
				b.WriteRune(r) // "12-E" may be 12E or 12 East: kept whole
			}
		default:
			b.WriteRune(' ')
		}
	}
	var out []string
	for _, t := range strings.Fields(b.String()) {
		if n, f, ok := splitFraction(t); ok {
			out = append(out, n, f)
			continue
		}
		out = append(out, t)
	}
	return out
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// fold is line in Unicode NFKC, its vulgar fractions first written with
// digits and a slash, apart from the number before them (NFKC would write
// "12½" as "121⁄2", one number).
func fold(line string) string {
	var b strings.Builder
	for _, r := range line {
		if f := vulgarFractions[r]; f != "" {
			b.WriteString(" " + f + " ")
			continue
		}
		b.WriteRune(r)
	}
	return norm.NFKC.String(b.String())
}

// vulgarFractions are Unicode's fraction characters as the digits and
// slash Publication 28 writes them with.
var vulgarFractions = map[rune]string{'½': "1/2", '⅓': "1/3", '⅔': "2/3", '¼': "1/4", '¾': "3/4", '⅕': "1/5", '⅖': "2/5",
	'⅗': "3/5", '⅘': "4/5", '⅙': "1/6", '⅚': "5/6", '⅐': "1/7", '⅛': "1/8", '⅜': "3/8", '⅝': "5/8", '⅞': "7/8", '⅑': "1/9",
	'⅒': "1/10", '↉': "0/3"}

// splitFraction splits a number hyphened to its fraction ("12-1/2").
func splitFraction(t string) (string, string, bool) {
	i := strings.LastIndexByte(t, '-')
	if i <= 0 || !strings.Contains(t[i:], "/") || !digits(t[:i]) || !isFraction(t[i+1:]) {
		return "", "", false
	}
	return t[:i], t[i+1:], true
}

// isNumber: a house number starts with a digit (123, 123A, 12-34).
func isNumber(t string) bool {
	return t != "" && t[0] >= '0' && t[0] <= '9' && !strings.Contains(t, "/")
}

func isFraction(t string) bool {
	n, d, ok := strings.Cut(t, "/")
	return ok && n != "" && d != "" && strings.Trim(n+d, "0123456789") == ""
}

// splitLettered writes a number hyphened to a directional letter ("2-E",
// which tokens keeps whole so that a house number 12-E is never 12 East)
// as two words, after the house number: "Apt 2-E" is unit 2E as "Apt 2 E"
// is.
func splitLettered(toks []string) []string {
	var out []string
	for _, t := range toks {
		if n, l, ok := strings.Cut(t, "-"); ok && len(l) == 1 && strings.Contains("NSEW", l) && digits(n) {
			out = append(out, n, l)
			continue
		}
		out = append(out, t)
	}
	return out
}

// numberedRoads are the words (a suffix as its standard abbreviation) a
// road's number follows: State Route 7, SR 7, CR 5, FM 1960, RR 2; and
// RD and HWY, which a number follows only in a road so named by a
// qualifier (roadQualifiers: County Road 5, US Highway 1) or with no
// other name (Highway 1): Harford Road #2 is unit 2 of Harford Road.
var numberedRoads = map[string]bool{"RD": true, "HWY": true, "RTE": true, "RT": true, "SR": true, "US": true, "CR": true,
	"FM": true, "RR": true, "HC": true, "CTH": true, "STH": true}

// roadQualifiers name the road RD or HWY after them by its number.
var roadQualifiers = map[string]bool{"COUNTY": true, "CO": true, "STATE": true, "TOWNSHIP": true, "TWP": true, "US": true,
	"FOREST": true, "FARM": true, "RANCH": true, "PARISH": true, "TOWN": true, "PRIVATE": true, "MARKET": true, "SR": true, "CR": true}

// numberedRoad: the word toks[i] is a road's that its number follows.
func numberedRoad(toks []string, i int) bool {
	w := toks[i]
	if s, ok := suffixes[w]; ok {
		w = s
	}
	switch {
	case !numberedRoads[w]:
		return false
	case w != "RD" && w != "HWY":
		return true
	case i == 0:
		return true
	}
	_, dir := directionals[toks[i-1]]
	return roadQualifiers[toks[i-1]] || (i == 1 && dir)
}

// roadNumbers drops "#" or "No" between a numbered road's word and its
// number ("County Road #5" is County Rd 5, a road, never unit 5 of County
// Road): the number is the road's name, and the key is never a unit's.
func roadNumbers(toks []string) []string {
	var out []string
	for i, t := range toks {
		if numberWords[t] && i > 0 && i+1 < len(toks) && numberedRoad(toks, i-1) && isNumber(toks[i+1]) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// houseNumber drops a house number's leading zeros ("0012" → "12",
// "000" → "0").
func houseNumber(t string) string {
	s := strings.TrimLeft(t, "0")
	if s == "" || s[0] < '0' || s[0] > '9' {
		return "0" + s
	}
	return s
}

// unit finds the secondary unit: a designator after the street's name,
// and everything after it, read by readUnit. It returns the street's words
// and the unit. A designator is one only where unitAt says.
func unit(toks []string) ([]string, string) {
	suffixSeen := false
	for i, t := range toks {
		if i >= 1 {
			if u, ok := unitAt(toks[i:], suffixSeen); ok {
				return toks[:i], u
			}
		}
		if _, ok := suffixes[t]; ok && i >= 1 {
			suffixSeen = true
		}
	}
	return toks, ""
}

// unitAt reads the unit that starts toks, the words after a street's
// name: a designator after the street suffix, or one of unitWords before
// any suffix when an identifier ends the line ("100 Main Apt 2"). It is
// no unit when a street suffix follows it ("Sault Ste Marie Rd", "Main St
// Lot Rd": Ste and Lot are part of the name, and the suffix is never
// lost), nor, before any suffix, when what follows is no identifier or
// more than one ("Rue Ste Catherine"). An ordinal before a floor ("2nd
// Fl") is that floor ("Fl 2").
func unitAt(toks []string, afterSuffix bool) (string, bool) {
	if afterSuffix {
		toks = ordinalFloor(toks)
	}
	des, isDes := Secondary(toks[0])
	if !isDes || !(unitWords[des] || afterSuffix) {
		return "", false
	}
	for _, t := range toks[1:] {
		_, suffix := suffixes[t]
		if _, d := Secondary(t); suffix && !d {
			return "", false
		}
	}
	r := readUnit(toks)
	if !afterSuffix && (len(r.rest) > 0 || !identifierLike(r.first())) {
		return "", false
	}
	return r.String(), true
}

// identifierLike: id looks like a unit's identifier, not a word of a
// street's name: it has a digit or is one letter other than a
// directional (or there is none, a designator ending the line).
func identifierLike(id string) bool {
	_, dir := directionals[id]
	return id == "" || (len(id) == 1 && !dir) || strings.ContainsAny(id, "0123456789")
}

// ordinalFloor writes "2ND FL" as "FL 2"; other words as they are.
func ordinalFloor(toks []string) []string {
	if len(toks) < 2 {
		return toks
	}
	n, ok := floorOrdinal(toks[:2])
	if !ok {
		return toks
	}
	return append([]string{toks[1], n}, toks[2:]...)
}

// floorOrdinal is the number of an ordinal before a floor designator
// ("2ND" "FL" is "2").
func floorOrdinal(two []string) (string, bool) {
	if des, _ := Secondary(two[1]); des != "FL" {
		return "", false
	}
	n := strings.TrimLeft(two[0], "0123456789")
	num := two[0][:len(two[0])-len(n)]
	if num == "" || (n != "ST" && n != "ND" && n != "RD" && n != "TH") {
		return "", false
	}
	return num, true
}

// street splits a street's words into its predirectional, name, suffix and
// postdirectional. A directional or suffix that is the street's only
// word is its name ("100 NORTH ST" is a street named North, "100 PARK"
// one named Park).
func street(toks []string) (pre, name, suf, post string) {
	toks = slices.DeleteFunc(slices.Clone(toks), func(t string) bool { return t == "&" })
	if len(toks) > 2 {
		if d, ok := directionals[toks[len(toks)-1]]; ok {
			post, toks = d, toks[:len(toks)-1]
		}
	}
	if len(toks) > 1 {
		if s, ok := suffixes[toks[len(toks)-1]]; ok {
			suf, toks = s, toks[:len(toks)-1]
		}
	}
	if len(toks) > 1 {
		if d, ok := directionals[toks[0]]; ok {
			pre, toks = d, toks[1:]
		}
	}
	if len(toks) == 2 && identifierLike(toks[1]) {
		if s, ok := suffixes[toks[0]]; ok {
			toks[0] = s // "AVENUE B" is "AVE B"
		}
	}
	for i := 0; i+1 < len(toks); i++ {
		if s, ok := suffixes[toks[i]]; ok && numberedRoads[s] && isNumber(toks[i+1]) {
			toks[i] = s // "COUNTY ROAD 5" is "COUNTY RD 5"
		}
	}
	return pre, strings.Join(toks, " "), suf, post
}

// Street is the address's match key without its unit: house number,
// predirectional, name, suffix and postdirectional, one space apart
// ("2041 W NORTH AVE"). Empty for a line with no street name.
func (a Address) Street() string {
	if a.Name == "" {
		return ""
	}
	return join(a.Number, a.Predir, a.Name, a.Suffix, a.Postdir)
}

// Key is Street with the unit after "UNIT" ("2041 W NORTH AVE UNIT 2").
// Empty, as Street, for a line with no street name.
func (a Address) Key() string {
	if a.Unit == "" || a.Name == "" {
		return a.Street()
	}
	return join(a.Street(), "UNIT", a.Unit)
}

func join(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, " ")
}

// UnitSeparator is what stands between Street and the unit in Key.
const UnitSeparator = " UNIT "

// Normalize is Parse(line).Key(), or, for a line with no street name (a
// bare "123"), its words upper-cased.
func Normalize(line string) string {
	if k := Parse(line).Key(); k != "" {
		return k
	}
	return strings.Join(tokens(line), " ")
}

// ZIP5 is the 5-digit ZIP Code of a ZIP or ZIP+4 ("21217-1234",
// "212171234" → "21217"); false for anything else. A ZIP that lost its
// leading zero in a spreadsheet (2134) is given it back.
func ZIP5(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if z, plus, ok := strings.Cut(s, "-"); ok {
		if len(plus) != 4 || !digits(plus) {
			return "", false
		}
		s = z
	}
	if len(s) == 9 && digits(s) {
		s = s[:5]
	}
	if !digits(s) || len(s) < 3 || len(s) > 5 {
		return "", false
	}
	return strings.Repeat("0", 5-len(s)) + s, true
}

func digits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// State returns the USPS code of a state, written as its code or its name
// ("md", "Maryland", "District of Columbia" → "MD", "DC").
func State(s string) (string, bool) {
	k := strings.Join(strings.Fields(strings.ToUpper(strings.ReplaceAll(s, ".", ""))), " ")
	c, ok := states[k]
	return c, ok
}

// UnitID is the identifier of a unit written in its own column, read as
// Parse reads a unit in the address line (readUnit): "APT 2", "#2", "Unit
// 02" and "2" are all "2"; "Apt 2-B" and "2 B" are "2B"; "Bldg 2" is
// "BLDG 2" and "2nd Fl" is "FL 2", never "2"; "Bldg 4 Apt 2" and "Bldg 4
// #2" are "BLDG 4 UNIT 2"; "Rear" is "REAR". Words after the unit are kept
// after it, as in the address line ("2 Left" is "2 LEFT"), so that a
// column naming more than a unit never equals the unit alone.
func UnitID(s string) string {
	toks := tokens(s)
	for len(toks) > 0 && toks[0] == "&" {
		toks = toks[1:]
	}
	return readUnit(splitLettered(toks)).String()
}
