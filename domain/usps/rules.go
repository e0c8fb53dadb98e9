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
	// designator classes: APT, UNIT, STE and # are one unit; the others stay
	"100 Main St Bldg 2", "100 Main St Apt 2", "100 Main St Ph 2", "100 Main St Unit 2", "100 Main St 2nd Floor",
	"100 Harbor Dr Slip 5", "100 Airport Rd Hngr 5", "100 Main St Pier 5", "100 Main St Dept 5", "100 Main St Rm 5",
	"100 Main St Spc 5", "100 Main St Lot 5", "100 Main St Trlr 5", "100 Main St Ste 5", "100 Main St Rear Apt 2",
	"100 Main St Apt 2 Rear", "100 Main St Bldg 2 Apt 1", "100 Main St Bldg 2 Unit 1", "100 Main St Bldg 2 #1",
	"100 Main St Apt 1 Bldg 2", "100 Main St Bldg 2 3rd Fl", "100 Main St Frnt Rear", "100 Main St Ph",
	"Bldg 2", "PH 2", "2nd Fl", "2nd Floor", "Fl 2", "2 Rear", "Rear Apt 2", "Bldg 2 #1", "Lot 5",
	// a numbered road's number is its name, never a unit
	"100 County Road #5", "100 County Rd Unit 5", "100 State Road #7", "100 US Highway #1", "100 US #1",
	"100 Township Road #12", "100 SR #7", "100 CR No 5", "100 FM #1960", "100 County Road 5 Apt 2",
	"100 Harford Road #2", "100 Highway #1", "100 N Highway #1", "100 Pacific Coast Hwy #5", "100 Farm To Market Road #5",
	// a house number hyphened to a directional letter is neither 12E nor 12 East
	"12-E Main St", "12 E Main St", "12E Main St", "12-N Main St", "12-S Main St", "12-W Main St",
	"100 Main St Apt 2-E", "2-E",
	// "&" before a house number's fraction
	"100 & 1/2 North Park St", "12 & 1/2 Key 2",
}
