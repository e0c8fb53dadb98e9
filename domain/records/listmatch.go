package records

import "github.com/arr-dev/arr/domain/usps"

// ListMatchKeys are what a list row is matched to a parcel by: its
// normalized APN; the FIPS code (county, else state) it is narrowed to;
// its street key (usps.Address.Street: house number and street, no unit)
// and its unit (usps.Address.Unit, usps.UnitID).
type ListMatchKeys struct {
	APN    string
	Within string
	Street string
	Unit   string
	// UnitConflict: the address line names one unit and the unit column
	// another ("5 Main St Apt 2" and "2B"). Unit is then empty, and the
	// row is matched by its APN only, never by address to either unit.
	UnitConflict bool
}

// MatchKeys returns the row's match keys. A row with only a mailing
// address has none. Its unit is the address line's or the unit column's,
// whichever names one; both, when they are the same unit once normalized
// ("Apt 2-B" and "2B"); a conflict when they are not.
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
	switch u := usps.UnitID(r.Unit); {
	case u == "" || u == k.Unit:
	case k.Unit == "":
		k.Unit = u
	default:
		k.Unit, k.UnitConflict = "", true
	}
	return k
}
