package records

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode"

	"github.com/arr-dev/arr/domain/usps"
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

// NormalizeAddress is the form street addresses are matched in: USPS
// Publication 28's (package usps), house number and street with the unit
// after "UNIT" ("2041 West North Avenue #2" becomes "2041 W NORTH AVE UNIT
// 2"). Parcels' addresses and list rows' are both normalized by it.
func NormalizeAddress(s string) string { return usps.Normalize(s) }

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

// KeyRules is a fingerprint of the rules that make the match keys a read
// model stores (NormalizeAPN, NormalizeAddress, ListRow.MatchKeys): usps.
// Rules and what NormalizeAPN makes of probe ids. The read models that
// store keys name it in their DDL, so a change of the rules rebuilds them.
func KeyRules() string {
	h := sha256.New()
	h.Write([]byte(usps.Rules()))
	for _, apn := range []string{"4275 026", "4275-026", "7419D 001", "282418000000009", "ａ１-b", "12.34/5"} {
		h.Write([]byte{0})
		h.Write([]byte(NormalizeAPN(apn)))
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}
