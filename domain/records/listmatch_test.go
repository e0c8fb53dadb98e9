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
	} {
		if got := c.row.MatchKeys(); got != c.want {
			t.Errorf("%+v: %+v, want %+v", c.row, got, c.want)
		}
	}
}
