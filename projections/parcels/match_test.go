package parcels_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/lists"
	"github.com/arr-dev/arr/projections/parcels"
)

// TestMatchUnitsAndFractions: MatchSQL over parcels whose addresses differ
// only by a unit's whole identifier, a building's unit or a house
// number's half matches each row to its own parcel or to none, never to
// a neighbour's (issue 39 findings 1 to 4; the re-attack's Sault Ste Marie
// Rd and Ave, and Ste 100 North, South and Ste 100); a row whose address and unit
// column name two units matches neither, with the reason unit_conflict.
func TestMatchUnitsAndFractions(t *testing.T) {
	pool, _ := migratetest.NewPool(t)
	ctx := context.Background()
	store, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	runner, err := projections.NewRunner(pool, store, projections.Config{}, parcels.Projection{}, lists.Projection{})
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	f := &watchFixture{t: t, ctx: ctx, pool: pool, store: store, runner: runner, dir: t.TempDir()}
	f.load("vacant", "0101-001,5 MAIN ST APT 2", "0101-002,5 MAIN ST APT 2B", "0202-001,12½ OAK AVE", "0202-002,12 OAK AVE",
		"0303-001,7 ELM ST BLDG 4 APT 2", "0404-001,9 ASH ST APT 2 & 3", "0505-001,100 SAULT STE MARIE RD",
		"0505-002,100 SAULT STE MARIE AVE", "0606-001,20 MAIN ST STE 100 NORTH", "0606-002,20 MAIN ST STE 100 SOUTH",
		"0101-003,5 MAIN ST REAR APT 2", "0303-002,7 ELM ST BLDG 2", "0707-001,100 COUNTY RD UNIT 5", "0707-002,100 COUNTY ROAD #5")
	account, list := uuid.New(), uuid.New()
	rows := []struct {
		address, unit string
		apn, reason   string
	}{
		{"5 Main St Apt 2", "2B", "", lists.ReasonUnitConflict},
		{"5 Main St Apt 2-B", "", "0101-002", ""},
		{"5 Main St", "Apt 2 B", "0101-002", ""},
		{"5 Main St #2", "Apt 02", "0101-001", ""},
		{"5 Main St Rear Apt 2", "", "0101-003", ""},
		{"5 Main St", "Apt 2 Rear", "0101-003", ""},
		{"7 Elm St", "Bldg 4 #2", "0303-001", ""},
		{"7 Elm St Unit 2", "", "", lists.ReasonNoParcelAtAddress},
		{"7 Elm St 2nd Fl", "", "", lists.ReasonNoParcelAtAddress},
		{"7 Elm St", "Building 2", "0303-002", ""},
		{"100 County Rd #5", "", "0707-002", ""},
		{"100 County Rd Apt 5", "", "0707-001", ""},
		{"12 Oak Ave", "", "0202-002", ""},
		{"12 1/2 Oak Ave", "", "0202-001", ""},
		{"12-1/2 Oak Ave", "", "0202-001", ""},
		{"7 Elm St Apt 2", "", "", lists.ReasonNoParcelAtAddress},
		{"7 Elm St", "Bldg 4 Apt 2", "0303-001", ""},
		{"9 Ash St Apt 2", "", "", lists.ReasonNoParcelAtAddress},
		{"9 Ash St", "Unit 2&3", "0404-001", ""},
		{"100 Sault Ste Marie Ave", "", "0505-002", ""},
		{"100 Sault Ste. Marie Road", "", "0505-001", ""},
		{"20 Main St Ste 100 North", "", "0606-001", ""},
		{"20 Main St", "Ste 100 South", "0606-002", ""},
		{"20 Main St Ste 100", "", "", lists.ReasonNoParcelAtAddress},
	}
	var lr []records.ListRow
	for i, r := range rows {
		lr = append(lr, records.ListRow{Row: i + 1, LeadID: uuid.New(), Address: r.address, Unit: r.unit, State: "MD", Within: "24"})
	}
	f.append(records.ListStreamID(list), &records.ListImported{ListID: list, AccountID: account, Name: "units", Rows: len(rows),
		Columns: []string{"address", "unit"}, ImportedAt: time.Now().UTC()})
	pos := f.append(records.ListStreamID(list), &records.ListRowsImported{ListID: list, AccountID: account, Rows: lr})
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := runner.WaitFor(wctx, lists.Name, pos); err != nil {
		t.Fatal(err)
	}
	got, err := lists.NewQueries(pool).Rows(ctx, account, list, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		g := got[i]
		apn := ""
		if g.Parcel != nil {
			apn = g.Parcel.APN
		}
		if apn != r.apn || g.Reason != r.reason {
			t.Errorf("row %q unit %q: parcel %q, reason %q; want %q, %q", r.address, r.unit, apn, g.Reason, r.apn, r.reason)
		}
	}
}
