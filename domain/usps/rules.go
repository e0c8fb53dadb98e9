package usps

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Rules is a fingerprint of the rules that make keys: the three tables of
// Publication 28 as written here and what Normalize, Parse and UnitID
// make of probe lines built from every word of those tables and from the
// cases the rules were written for (rulesProbes). A read model that stores
// keys names Rules in its DDL, so a change of any rule that changes a key
// of these lines changes its DDL's hash, and the runner rebuilds it with
// the new keys: stored keys never go on being compared with keys made by
// other rules.
func Rules() string {
	h := sha256.New()
	put := func(s string) { h.Write([]byte(s)); h.Write([]byte{0}) }
	for _, t := range []string{suffixTable, secondaryTable, directionalTable} {
		put(t)
	}
	for _, line := range rulesLines() {
		a := Parse(line)
		put(Normalize(line))
		put(a.Street())
		put(a.Unit)
		put(UnitID(line))
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// rulesLines are the probe lines of Rules: each suffix, designator and
// directional word in the places a line may hold it, then rulesProbes.
func rulesLines() []string {
	var lines []string
	for _, src := range []string{suffixTable, secondaryTable, directionalTable} {
		for _, w := range strings.Fields(src) {
			lines = append(lines, "100 "+w+" Main Rd", "100 Main "+w+" 2", "100 Main St "+w+" 2", w+" 2-B")
		}
	}
	return append(lines, rulesProbes...)
}

// rulesProbes are lines of the kinds each rule was written for.
var rulesProbes = []string{
	"2041 W NORTH AVE", "2041 West North Avenue #2", "2041 w. north ave. apt 2",
	"0012 Main St", "12½ Main St", "12-1/2 Main St", "12 1/2 Main St", "12-34 Queens Blvd",
	"100 Sault Ste Marie Rd", "100 Sault Ste Marie Ave", "100 Rue Ste Catherine",
	"100 Main St Ste 100 North", "100 Main St Ste 100 South", "100 Main St Apt 2 West",
	"100 Main St Apt A B", "100 Main St Apt 2-B", "100 Main St Apt 2 B", "100 Main St # 2 & 3",
	"100 Main St Bldg 4 Apt 2", "100 Main St Rear Apt 3", "100 Main St 2nd Fl", "100 Main St Fl 2",
	"100 Main St Apt", "100 Main St #", "12-A Main St", "12A Main St", "12-E Main St",
	"１２ Ｍａｉｎ Ｓｔ", "100 Pen\u0303a St", "100 Avenue B", "100 Ave B", "100 North St", "100 Park",
	"100 Main St Lot Rd", "100 N Main St SE", "100 Main St Apt 2 Baltimore", "2 Left", "Unit 02", "Rear",
}
