package commands_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/adapters/datakeys"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
)

// TestImportListCountyNames: a county written by name is the one county
// of its state with that name; a bare name that is two counties of the
// state (Baltimore, MD: Baltimore city 24510 and Baltimore County 24005)
// is refused as ambiguous, never resolved to one of them (issue 39
// finding 5).
func TestImportListCountyNames(t *testing.T) {
	pool, _ := migratetest.NewPool(t)
	store, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := datakeys.New(pool, bytes.Repeat([]byte{7}, datakeys.MasterKeySize))
	if err != nil {
		t.Fatal(err)
	}
	h, err := commands.NewImportListHandler(store, keys, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, county, state, code string
	}{
		{"city by its name", "Baltimore City", "MD", ""},
		{"county by its name", "Baltimore County", "MD", ""},
		{"bare Baltimore", "Baltimore", "MD", "ambiguous_county"},
		{"bare Baltimore in capitals", "BALTIMORE", "MD", "ambiguous_county"},
		{"bare St. Louis", "St. Louis", "MO", "ambiguous_county"},
		{"bare Richmond in Virginia", "Richmond", "VA", "ambiguous_county"},
		{"bare Orange", "Orange", "FL", ""},
		{"bare Carson", "Carson", "NV", ""},
		{"no such county", "Atlantis", "MD", "unknown_county"},
	} {
		file := "address,county,state\n5 Main St," + tc.county + "," + tc.state + "\n"
		l, err := commands.ParseListFile(strings.NewReader(file))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_, err = h.Handle(context.Background(), commands.ImportList{AccountID: uuid.New(), Name: tc.name, List: l, Metadata: commands.NewMetadata("test", "")})
		var de *domain.Error
		switch {
		case tc.code == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.code != "" && (!errors.As(err, &de) || de.Code != tc.code):
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		case tc.code == "ambiguous_county" && !strings.Contains(de.Message, "FIPS"):
			t.Errorf("%s: %q does not say how to write the county", tc.name, de.Message)
		}
	}
}
