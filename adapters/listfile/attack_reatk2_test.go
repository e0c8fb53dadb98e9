package listfile_test

import (
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/listfile"
)

// TestAttackBareCityAfterMailingIsNotThePropertys: a tax-delinquent or
// absentee-owner list often carries the parcel number and the owner's
// mailing block only: "Parcel ID, Owner, Mailing Address, City, State,
// Zip". The bare City, State and Zip there are the mailing address's
// (the file has no property address at all), yet the header table reads
// them as the property's: the row's match is narrowed to the owner's
// state (commands.ImportListHandler.within), so its APN is looked for in
// the wrong state and can meet another parcel of the same number there,
// and the property's city and ZIP are the owner's. With a mailing
// address and no property address, bare City, State and Zip should not
// be read as the property's (or the file should need a mapping).
func TestAttackBareCityAfterMailingIsNotThePropertys(t *testing.T) {
	t.Parallel()
	in := "Parcel ID,Owner,Mailing Address,City,State,Zip\n0123456,Pat Doe,PO Box 5,Miami,FL,33101\n"
	l, err := listfile.Parse(strings.NewReader(in))
	if err != nil {
		return // refused: no wrong reading
	}
	if r := l.Rows[0]; r.State != "" || r.City != "" || r.Zip != "" {
		t.Errorf("the mailing block's City, State, Zip read as the property's: %+v (columns %v)", r, l.Columns)
	}
}

// TestAttackMailingLineTwoIsNoPropertyUnit: "Address 2" right after the
// owner's "Mailing Address" is that address's second line (the owner's
// apartment), but the header table reads it as the property's unit: a
// row for the house at 5 Main St whose owner lives in Apt 7 elsewhere
// gets unit 7, and is matched (tier 2) to unit 7 of 5 Main St, another
// owner's condo.
func TestAttackMailingLineTwoIsNoPropertyUnit(t *testing.T) {
	t.Parallel()
	in := "Property Address,Mailing Address,Address 2,Mailing City\n5 Main St,100 Oak Ave,Apt 7,Towson\n"
	l, err := listfile.Parse(strings.NewReader(in))
	if err != nil {
		return // refused: no wrong reading
	}
	if r := l.Rows[0]; r.Unit != "" {
		t.Errorf("the mailing address's second line read as the property's unit: %+v (columns %v)", r, l.Columns)
	}
}
