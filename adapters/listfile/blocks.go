package listfile

import (
	"strings"

	"github.com/arr-dev/arr/domain"
)

// A header of the property's address part (unit, city, state, zip, county)
// is qualified when its first word names the property ("Property City",
// "Site Zip", "Situs Unit", "Location State", "Physical City"), bare when
// not ("City", "State", "Zip", "Address 2", "Unit #", "County").
var propertyQualifiers = map[string]bool{"property": true, "site": true, "situs": true, "location": true, "physical": true}

// blockParts are the columns a bare header of which belongs to the address
// block it follows.
var blockParts = map[string]bool{ColUnit: true, ColCity: true, ColState: true, ColZip: true, ColCounty: true}

// The address blocks a column can be in.
const (
	blockNone     = ""
	blockProperty = "property"
	blockMailing  = "mailing"
)

// headerRoles reads a header by the header table, block by block: a file
// writes an address as a block of columns, its street line then its unit,
// city, state and zip, and a bare part ("City", "Address 2") belongs to the
// block it follows, the nearest address column before it: the property's
// (an address column, or a qualified part such as "Property City") or the
// mailing address's (a mailing column). After a mailing column a bare part
// is the mailing address's, never the property's ("Parcel ID, Owner,
// Mailing Address, City, State, Zip" has no property city, state or zip;
// "Property Address, Mailing Address, Address 2" no property unit). Before
// any address column a bare part is the property's when the file has no
// mailing column, and cannot be told in a file that has one: the file is
// refused (ambiguous_column), to be read with a mapping. A bare county
// before any address column is the property's (the parcel's county, beside
// its APN, as assessors write it).
func headerRoles(header []string) ([]string, error) {
	aliases := aliasIndex()
	roles := make([]string, len(header))
	firstMailing := -1
	for i, h := range header {
		roles[i] = role(aliases, h)
		if roles[i] == ColMailing && firstMailing < 0 {
			firstMailing = i
		}
	}
	block := blockNone
	for i, h := range header {
		col := roles[i]
		switch {
		case col == ColAddress:
			block = blockProperty
		case col == ColMailing:
			block = blockMailing
		case !blockParts[col]:
		case !bare(Key(h)):
			block = blockProperty
		case block == blockMailing:
			roles[i] = ColMailing
		case block == blockNone && firstMailing >= 0 && col != ColCounty:
			return nil, ambiguousColumn(header, i, firstMailing, col)
		}
	}
	return roles, nil
}

// bare: the header (as Key writes it) does not name the property.
func bare(k string) bool {
	first, _, _ := strings.Cut(k, " ")
	return !propertyQualifiers[first]
}

// ambiguousColumn is the error for a bare part before any address column
// in a file that has a mailing address.
func ambiguousColumn(header []string, i, mailing int, col string) error {
	h := strings.TrimSpace(header[i])
	return domain.Invalid("ambiguous_column", "file",
		"line 1: column %d (%q) comes before any address column, and the file also has the owner's mailing address (column %d, %q), so whether it is the property's %s or the mailing address's cannot be told from the header; say which with a mapping (arr import list --mapping mapping.json, or the account page's Column mapping field): {\"%s\": %q, …} for the property's, or %q under \"mailing\"; or name the column Property %s or Mailing %s",
		i+1, h, mailing+1, strings.TrimSpace(header[mailing]), col, col, h, h, h, h)
}
