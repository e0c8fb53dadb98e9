package records

import "github.com/arr-dev/arr/domain/usps"

// ListMatchKeys are what a list row is matched to a parcel by: its
// normalized APN; the FIPS code (county, else state) it is narrowed to;
// its street key (usps.Address.Street: house number and street, no unit)
// and its unit.
type ListMatchKeys struct {
	APN    string
	Within string
	Street string
	Unit   string
}

// MatchKeys returns the row's match keys. A row with only a mailing
// address has none.
func (r ListRow) MatchKeys() ListMatchKeys {
	if r.NoProperty {
		return ListMatchKeys{}
	}
	k := ListMatchKeys{APN: NormalizeAPN(r.APN), Within: r.Within}
	if k.Within == "" {
		k.Within = r.County
	}
	a := usps.Parse(r.Address)
	if a.Number != "" {
		k.Street = a.Street()
	}
	k.Unit = a.Unit
	if u := usps.UnitID(r.Unit); u != "" {
		k.Unit = u
	}
	return k
}
