package records

import (
	"fmt"
	"strings"
	"unicode"
)

// NormalizeAPN is the form APNs are matched in: upper case, letters and
// digits only ("4275 026" and "4275-026" both become "4275026").
func NormalizeAPN(s string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

var addressWords = map[string]string{
	"STREET": "ST", "STR": "ST", "AVENUE": "AVE", "AV": "AVE", "ROAD": "RD", "DRIVE": "DR", "BOULEVARD": "BLVD",
	"LANE": "LN", "COURT": "CT", "PLACE": "PL", "TERRACE": "TER", "CIRCLE": "CIR", "PARKWAY": "PKWY", "HIGHWAY": "HWY",
	"SQUARE": "SQ", "TRAIL": "TRL", "APARTMENT": "UNIT", "APT": "UNIT", "SUITE": "UNIT", "STE": "UNIT",
}

// directions are abbreviated only right after the house number ("2041 West
// North Avenue": West is a direction, North is the street's name).
var directions = map[string]string{
	"NORTH": "N", "SOUTH": "S", "EAST": "E", "WEST": "W",
	"NORTHEAST": "NE", "NORTHWEST": "NW", "SOUTHEAST": "SE", "SOUTHWEST": "SW",
}

// NormalizeAddress is the form street addresses are matched in: upper case,
// punctuation dropped, whitespace collapsed, common street-type and
// direction words abbreviated ("2041 West North Avenue" becomes
// "2041 W NORTH AVE"); a unit written "#207" becomes "UNIT 207".
func NormalizeAddress(s string) string {
	s = strings.ToUpper(s)
	s = strings.ReplaceAll(s, "#", " UNIT ")
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		} else {
			b.WriteRune(' ')
		}
	}
	words := strings.Fields(b.String())
	for i, w := range words {
		if a, ok := addressWords[w]; ok {
			words[i] = a
		}
		if a, ok := directions[w]; ok && i == 1 && len(words) > 2 {
			words[i] = a
		}
	}
	// "UNIT UNIT 5" (from "APT #5") collapses.
	out := words[:0]
	for i, w := range words {
		if w == "UNIT" && i > 0 && out[len(out)-1] == "UNIT" {
			continue
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// APN formats a mapping may name, for sources whose parcel ids are written
// differently from the county's APN.
const (
	// APNAsIs takes the column(s) as they are, joined by one space.
	APNAsIs = ""
	// APNBaltimoreTaxAccount turns a 9-character Baltimore City tax-sale
	// account number (block in 5, lot in 4, each left-padded with 0 unless it
	// ends in a letter) into "BLOCK LOT": 042750026 -> "4275 026",
	// 7419D0001 -> "7419D 001", 02358048D -> "2358 048D".
	APNBaltimoreTaxAccount = "baltimore_tax_account"
	// APNOrangeTaxAccount turns an Orange County FL tax account
	// S-T-R-SUB-BLKLOT into the 15-digit parcel id R T S SUB BLKLOT:
	// 18-24-28-0000-00009 -> 282418000000009.
	APNOrangeTaxAccount = "orange_tax_account"
)

// FormatAPN applies an APN format to the raw value (several columns are
// joined by one space first). It fails on values the format cannot read.
func FormatAPN(format string, parts []string) (string, error) {
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	raw := strings.TrimSpace(strings.Join(parts, " "))
	switch format {
	case APNAsIs:
		if raw == "" {
			return "", fmt.Errorf("the APN is empty")
		}
		return raw, nil
	case APNBaltimoreTaxAccount:
		if len(raw) != 9 {
			return "", fmt.Errorf("Baltimore tax account %q is not 9 characters", raw)
		}
		return unpad(raw[:5]) + " " + unpad(raw[5:]), nil
	case APNOrangeTaxAccount:
		p := strings.Split(raw, "-")
		if len(p) != 5 || len(p[0]) != 2 || len(p[1]) != 2 || len(p[2]) != 2 || len(p[3]) != 4 || len(p[4]) != 5 {
			return "", fmt.Errorf("Orange County tax account %q is not S-T-R-SUB-BLKLOT (18-24-28-0000-00009)", raw)
		}
		return p[2] + p[1] + p[0] + p[3] + p[4], nil
	}
	return "", fmt.Errorf("unknown APN format %q (known: %q, %q)", format, APNBaltimoreTaxAccount, APNOrangeTaxAccount)
}

// unpad drops the one leading 0 that pads a block or lot without a letter
// suffix.
func unpad(s string) string {
	last := rune(s[len(s)-1])
	if unicode.IsLetter(last) || s[0] != '0' {
		return s
	}
	return s[1:]
}
