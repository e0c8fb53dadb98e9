package usps_test

import (
	"testing"

	"github.com/arr-dev/arr/domain/usps"
)

// TestAttackDesignatorsThatNameOtherThings: a unit of one designator keeps
// its identifier alone, since lists write the same unit as APT 2, UNIT 2,
// #2 or STE 2. But a building, a floor, a penthouse, a boat slip, a
// hangar or a pier numbered 2 is not apartment 2: garden-apartment
// complexes are parceled per building (100 Main St Bldg 2), a penthouse
// PH 2 is another condo than unit 2, and "2nd Fl" of a triple-decker is
// no apartment 2. Each pair here gets one key today, so a list row of
// the one is matched (tier 2, address and unit) to the parcel of the
// other: a wrong match.
func TestAttackDesignatorsThatNameOtherThings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, a, b string }{
		{"building is no apartment", "100 Main St Bldg 2", "100 Main St Apt 2"},
		{"penthouse is no apartment", "100 Main St Ph 2", "100 Main St Unit 2"},
		{"floor is no apartment", "100 Main St Fl 2", "100 Main St Apt 2"},
		{"ordinal floor is no apartment", "100 Main St 2nd Fl", "100 Main St #2"},
		{"boat slip is no unit", "100 Harbor Dr Slip 5", "100 Harbor Dr Unit 5"},
		{"hangar is no unit", "100 Airport Rd Hngr 5", "100 Airport Rd Unit 5"},
		{"rear apartment is not the front one", "100 Main St Rear Apt 2", "100 Main St Apt 2"},
	} {
		if ka, kb := usps.Normalize(tc.a), usps.Normalize(tc.b); ka == kb {
			t.Errorf("%s: %q and %q share the key %q", tc.name, tc.a, tc.b, ka)
		}
	}
}

// TestAttackUnitColumnReadsAsTheLine: UnitID's doc says a unit column is
// read as Parse reads a unit in the address line. "2nd Fl" in the line
// is unit 2 (ordinalFloor); in a unit column it is "2ND", so a row with
// "100 Main St 2nd Fl" and unit column "2nd Fl" is a UnitConflict
// (matched by APN only) and "100 Main St" with unit "2nd Floor" never
// meets the parcel "100 Main St Fl 2". Likewise the two spellings of a
// rear apartment and of a building's apartment are two units.
func TestAttackUnitColumnReadsAsTheLine(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"2nd Fl", "2nd Floor", "Fl 2"} {
		if col, line := usps.UnitID(u), usps.Parse("100 Main St "+u).Unit; col != line {
			t.Errorf("UnitID(%q) = %q, but the line 100 Main St %s has unit %q", u, col, u, line)
		}
	}
	for _, tc := range []struct{ a, b string }{
		{"100 Main St Apt 2 Rear", "100 Main St Rear Apt 2"},
		{"100 Main St Bldg 2 Apt 1", "100 Main St Bldg 2 Unit 1"},
		{"100 Main St Bldg 2 Apt 1", "100 Main St Bldg 2 #1"},
	} {
		if ka, kb := usps.Normalize(tc.a), usps.Normalize(tc.b); ka != kb {
			t.Errorf("%q is %q but %q is %q: one unit, two keys", tc.a, ka, tc.b, kb)
		}
	}
}

// TestAttackNormalizeIsIdempotentAfterAmpersand: Normalize of its own
// output must be itself (a parcel's stored key is compared with keys
// made again from it). "&" between a house number and its fraction
// keeps the fraction out of the number on the first pass and in it on
// the second, so a predirectional or a suffix word is read only the
// second time.
func TestAttackNormalizeIsIdempotentAfterAmpersand(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"100 & 1/2 North Park St", "12 & 1/2 Key 2"} {
		k := usps.Normalize(in)
		if k2 := usps.Normalize(k); k2 != k {
			t.Errorf("Normalize(%q) = %q, but Normalize(%q) = %q", in, k, k, k2)
		}
	}
}

// TestAttackLetteredHouseNumberIsNoPredirectional: a row of townhouses
// numbered 12-A to 12-E writes "12-A Main St" (12A, as the assessor
// writes it) and "12-E Main St"; tokens keeps the hyphen's letter apart
// when it may be a directional, so house 12-E on Main St gets the key of
// house 12 on East Main St (a street of the same county as often as
// not), and an assessor's "12E MAIN ST" is never met: the list row is
// matched to the other street's parcel.
func TestAttackLetteredHouseNumberIsNoPredirectional(t *testing.T) {
	t.Parallel()
	for _, l := range []string{"E", "N", "S", "W"} {
		hyph, east := "12-"+l+" Main St", "12 "+l+" Main St"
		if a, b := usps.Normalize(hyph), usps.Normalize(east); a == b {
			t.Errorf("%q and %q share the key %q", hyph, east, a)
		}
		// 12-E may be house 12E or 12 East Main St: either reading can
		// meet the other house's parcel, so the key is neither's and
		// meets only a line that writes 12-E too (usps.tokens).
		if a, want := usps.Normalize(hyph), "12-"+l+" MAIN ST"; a != want {
			t.Errorf("%q is %q, want %q", hyph, a, want)
		}
		if a, b := usps.Normalize(hyph), usps.Normalize("12"+l+" Main St"); a == b {
			t.Errorf("%q and 12%s Main St share the key %q", hyph, l, a)
		}
	}
}

// TestAttackNumberedRoadIsNoUnit: rural and state roads are written with
// "#" before their number ("County Road #5", "State Road #7", "US
// Highway #1", "Township Road #12"). "#" after the suffix word (ROAD is
// RD) is read as a unit designator, so house 100 on County Road 5 gets
// the key of unit 5 of 100 County Rd (a street so named in many towns),
// and its street key "100 COUNTY RD" meets that street's parcel in the
// match's street tier: a wrong match either way.
func TestAttackNumberedRoadIsNoUnit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ road, other string }{
		{"100 County Road #5", "100 County Rd Unit 5"},
		{"100 State Road #7", "100 State Rd Apt 7"},
		{"100 US Highway #1", "100 US Hwy Unit 1"},
		{"100 Township Road #12", "100 Township Rd Ste 12"},
	} {
		if a, b := usps.Normalize(tc.road), usps.Normalize(tc.other); a == b {
			t.Errorf("%q and %q share the key %q", tc.road, tc.other, a)
		}
	}
	if s := usps.Parse("100 County Road #5").Street(); s == usps.Parse("100 County Rd").Street() {
		t.Errorf("100 County Road #5 has the street key %q of 100 County Rd", s)
	}
}
