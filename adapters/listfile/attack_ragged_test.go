package listfile_test

import (
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/listfile"
)

// TestAttackRaggedRowsAreGuesses: RFC 4180 rows have as many fields as
// the header, but Parse sets FieldsPerRecord = -1 and reads any row by
// position. An address with an unquoted comma (the commonest export
// mistake: Broward's "9601 SUNRISE LAKES BLVD, #207") shifts every later
// cell one column right, and the unit number is imported as the city and
// the city as the phone, silently; a row cut short is imported without
// its columns. Each should be an error naming its line, as the other
// malformed CSV is (issue 36 finding 4: "not silent guesses").
func TestAttackRaggedRowsAreGuesses(t *testing.T) {
	t.Parallel()
	for name, file := range map[string]string{
		"a row with an extra field": "folio,property_address,property_city,phone\n" +
			"494129A10190,9601 SUNRISE LAKES BLVD,SUNRISE,9545550100\n" +
			"504106280160,10700 NW 1 ST, #207,PLANTATION,9545550101\n",
		"a row cut short": "folio,property_address,property_city,phone\n" +
			"494129A10190,9601 SUNRISE LAKES BLVD,SUNRISE,9545550100\n" +
			"504106280160,10700 NW 1 ST\n",
	} {
		l, err := listfile.Parse(strings.NewReader(file))
		if err == nil {
			t.Errorf("%s: imported %+v, want an error naming line 3", name, l.Rows)
			continue
		}
		if !strings.Contains(err.Error(), "line 3") {
			t.Errorf("%s: %v, want an error naming line 3", name, err)
		}
	}
}
