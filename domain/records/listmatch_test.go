package records_test

import (
	"testing"

	"github.com/arr-dev/arr/domain/records"
)

func TestListMatchKeys(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		row  records.ListRow
		want records.ListMatchKeys
	}{
		{records.ListRow{Address: "2041 West North Avenue", State: "MD", Within: "24"}, records.ListMatchKeys{Within: "24", Street: "2041 W NORTH AVE"}},
		{records.ListRow{Address: "002041 w north ave.", Unit: "Apt #2", County: "24510"}, records.ListMatchKeys{Within: "24510", Street: "2041 W NORTH AVE", Unit: "2"}},
		{records.ListRow{Address: "2041 W NORTH AVE #2"}, records.ListMatchKeys{Street: "2041 W NORTH AVE", Unit: "2"}},
		{records.ListRow{APN: "4275-026", Address: "**ES ARMSTRONG AV 125 FT S OF RIDGE AV"}, records.ListMatchKeys{APN: "4275026"}},
		{records.ListRow{NoProperty: true, Within: "24"}, records.ListMatchKeys{}},
		// The address's unit and the unit column: one alone is the unit; the
		// same after normalization is it; two that differ are a conflict,
		// never one of them silently (issue 39 finding 3).
		{records.ListRow{Address: "5 Main St", Unit: "Apt 2-B"}, records.ListMatchKeys{Street: "5 MAIN ST", Unit: "2B"}},
		{records.ListRow{Address: "5 Main St Apt 2 B", Unit: "#2B"}, records.ListMatchKeys{Street: "5 MAIN ST", Unit: "2B"}},
		{records.ListRow{Address: "5 Main St Apt 2"}, records.ListMatchKeys{Street: "5 MAIN ST", Unit: "2"}},
		{records.ListRow{Address: "5 Main St Apt 2", Unit: "2B"}, records.ListMatchKeys{Street: "5 MAIN ST", UnitConflict: true}},
		{records.ListRow{Address: "5 Main St Bldg 4", Unit: "Apt 2"}, records.ListMatchKeys{Street: "5 MAIN ST", UnitConflict: true}},
	} {
		if got := c.row.MatchKeys(); got != c.want {
			t.Errorf("%+v: %+v, want %+v", c.row, got, c.want)
		}
	}
}
