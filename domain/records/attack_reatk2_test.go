package records_test

import (
	"testing"

	"github.com/arr-dev/arr/domain/records"
)

// TestAttackRowMeetsAnotherUnitsParcel: what MatchSQL's tier 2 compares,
// a row's street key, " UNIT " and its unit key, against a parcel's
// norm_address (records.NormalizeAddress). A row naming building 2 of a
// complex (in its line or its unit column) or penthouse 2 meets the
// parcel of apartment 2: a wrong match, the one thing list matching must
// never make.
func TestAttackRowMeetsAnotherUnitsParcel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		row           records.ListRow
		parcelAddress string
	}{
		{"building in the line", records.ListRow{Address: "100 Main St Bldg 2"}, "100 Main St Apt 2"},
		{"building in the unit column", records.ListRow{Address: "100 Main St", Unit: "Bldg 2"}, "100 Main St Apt 2"},
		{"penthouse in the unit column", records.ListRow{Address: "100 Main St", Unit: "PH 2"}, "100 Main St Unit 2"},
		{"second floor", records.ListRow{Address: "100 Main St 2nd Fl"}, "100 Main St Apt 2"},
	} {
		k := tc.row.MatchKeys()
		if k.Street == "" || k.Unit == "" || k.UnitConflict {
			continue
		}
		if rowKey, parcel := k.Street+" UNIT "+k.Unit, records.NormalizeAddress(tc.parcelAddress); rowKey == parcel {
			t.Errorf("%s: row %+v has the tier-2 key %q, the parcel %q's", tc.name, tc.row, rowKey, tc.parcelAddress)
		}
	}
}
