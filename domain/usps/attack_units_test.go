package usps_test

import (
	"testing"

	"github.com/arr-dev/arr/domain/usps"
)

// TestAttackFractionsKeepTheirHalf: a house number's fraction, written as
// a Unicode vulgar fraction (½), with a space (12 1/2) or a hyphen
// (12-1/2), is one number, never the whole number alone (issue 39
// finding 1: 12½ Main St and 12 Main St are two houses).
func TestAttackFractionsKeepTheirHalf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"vulgar half", "12½ Main St", "12 1/2 MAIN ST"},
		{"vulgar half after a space", "12 ½ Main St", "12 1/2 MAIN ST"},
		{"spaced", "12 1/2 Main St", "12 1/2 MAIN ST"},
		{"hyphened", "12-1/2 Main St", "12 1/2 MAIN ST"},
		{"fraction slash", "12 1⁄2 Main St", "12 1/2 MAIN ST"},
		{"quarter", "7¼ Oak Ln", "7 1/4 OAK LN"},
		{"three quarters", "7¾ Oak Ln", "7 3/4 OAK LN"},
		{"third", "7⅓ Oak Ln", "7 1/3 OAK LN"},
		{"eighth", "7⅛ Oak Ln", "7 1/8 OAK LN"},
		{"whole", "12 Main St", "12 MAIN ST"},
		{"Queens", "12-34 Main St", "12-34 MAIN ST"},
	} {
		if got := usps.Normalize(tc.in); got != tc.want {
			t.Errorf("%s: Normalize(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
	if usps.Normalize("12½ Main St") == usps.Normalize("12 Main St") {
		t.Error("12½ Main St and 12 Main St share a key")
	}
}

// TestAttackUnitsKeepTheirWholeIdentifier: a unit's identifier is kept
// whole (2-B, 2B and 2 B are 2B, never 2), two units are never one, and a
// unit in a building keeps both (issue 39 findings 2 and 4).
func TestAttackUnitsKeepTheirWholeIdentifier(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"hyphened", "5 Main St Apt 2-B", "2B"},
		{"joined", "5 Main St Apt 2B", "2B"},
		{"spaced", "5 Main St Apt 2 B", "2B"},
		{"bare spaced", "5 Main St # 2 B", "2B"},
		{"letter first", "5 Main St Apt B 2", "B2"},
		{"two units", "5 Main St Apt 2 & 3", "2&3"},
		{"two units joined", "5 Main St Apt 2&3", "2&3"},
		{"building and apartment", "5 Main St Bldg 4 Apt 2", "BLDG 4 UNIT 2"},
		{"building and unit sign", "5 Main St Bldg 4 #2", "BLDG 4 UNIT 2"},
		{"floor and suite", "5 Main St Fl 3 Ste 300", "FL 3 UNIT 300"},
		{"rear apartment", "5 Main St Rear Apt 3", "REAR UNIT 3"},
		{"apartment number", "5 Main St Apt No 5", "5"},
		{"apartment number spelled", "5 Main St Apt Number 5", "5"},
		{"unit sign spaced", "5 Main St Unit # 4", "4"},
		{"apartment sign", "5 Main St Apt #5", "5"},
		{"rear", "5 Main St Rear", "REAR"},
		{"leading zero", "5 Main St Apt 02", "2"},
		{"city after the unit, kept", "5 Main St Apt 2 Baltimore", "2 BALTIMORE"},
	} {
		if got := usps.Parse(tc.in).Unit; got != tc.want {
			t.Errorf("%s: Parse(%q).Unit = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
	for _, two := range [][2]string{
		{"5 Main St Apt 2-B", "5 Main St Apt 2"},
		{"5 Main St Apt 2 & 3", "5 Main St Apt 2"},
		{"5 Main St Apt 2 & 3", "5 Main St Apt 23"},
		{"5 Main St Bldg 4 Apt 2", "5 Main St Apt 2"},
		{"5 Main St Bldg 4 Apt 2", "5 Main St Bldg 4"},
		{"5 Main St Apt 12-3", "5 Main St Apt 123"},
	} {
		if a, b := usps.Normalize(two[0]), usps.Normalize(two[1]); a == b {
			t.Errorf("%q and %q share the key %q", two[0], two[1], a)
		}
	}
}

// TestAttackUnitColumn: a unit column is read by the same rules as a unit
// in the address line (UnitID and Parse agree).
func TestAttackUnitColumn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"hyphened", "Apt 2-B", "2B"},
		{"joined", "2B", "2B"},
		{"spaced", "2 B", "2B"},
		{"two units", "Apt 2 & 3", "2&3"},
		{"building and apartment", "Bldg 4 Apt 2", "BLDG 4 UNIT 2"},
		{"rear apartment", "Rear Apt 3", "REAR UNIT 3"},
		{"apartment number", "Apt No 5", "5"},
		{"unit sign spaced", "Unit # 4", "4"},
		{"apartment sign", "Apt #5", "5"},
		{"rear", "Rear", "REAR"},
		{"words after", "2 Left", "2 LEFT"},
	} {
		if got := usps.UnitID(tc.in); got != tc.want {
			t.Errorf("%s: UnitID(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
		if got, line := usps.UnitID(tc.in), usps.Parse("5 Main St Unit "+tc.in).Unit; got != line {
			t.Errorf("%s: UnitID(%q) = %q, but the address line's unit is %q", tc.name, tc.in, got, line)
		}
	}
}
