package listfile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/listfile"
	"github.com/arr-dev/arr/domain"
)

// TestBareColumnsFollowTheirBlock: a bare unit, city, state, zip or county
// column belongs to the address block it follows, the property's or the
// mailing address's.
func TestBareColumnsFollowTheirBlock(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file string
		want       listfile.Row
	}{
		{"property block then mailing", "Address,Unit #,City,State,Zip,County,Mailing Address,Mailing City\n5 Main St,2,Baltimore,MD,21217,24510,1 Oak Ave,Towson\n",
			listfile.Row{Address: "5 Main St", Unit: "2", City: "Baltimore", State: "MD", Zip: "21217", County: "24510"}},
		{"mailing block only", "Parcel ID,Owner,Mailing Address,City,State,Zip,County\n0123456,Pat Doe,PO Box 5,Miami,FL,33101,12086\n",
			listfile.Row{APN: "0123456"}},
		{"mailing line two", "Property Address,Mailing Address,Address 2,Mailing City\n5 Main St,100 Oak Ave,Apt 7,Towson\n",
			listfile.Row{Address: "5 Main St"}},
		{"mailing then property", "APN,Mailing Address,City,Property Address,City 2,State\n1,PO Box 5,Miami,5 Main St,x,MD\n",
			listfile.Row{APN: "1", Address: "5 Main St", State: "MD"}},
		{"qualified part after mailing", "Address,Mailing Address,Property City,State\n5 Main St,1 Oak Ave,Baltimore,MD\n",
			listfile.Row{Address: "5 Main St", City: "Baltimore", State: "MD"}},
		{"other columns inside a block", "Address,Phone,City,Mailing Address,Email,Zip\n5 Main St,410,Baltimore,1 Oak Ave,a@b.c,33101\n",
			listfile.Row{Address: "5 Main St", Phone: "410", City: "Baltimore", Email: "a@b.c"}},
		{"bare before the address, no mailing", "City,State,Address\nBaltimore,MD,5 Main St\n",
			listfile.Row{Address: "5 Main St", City: "Baltimore", State: "MD"}},
		{"bare county beside the APN", "Parcel Number,County FIPS,Situs Address,Taxpayer Address,Taxpayer City\n1,24510,5 Main St,1 Oak Ave,Towson\n",
			listfile.Row{APN: "1", County: "24510", Address: "5 Main St"}},
	} {
		l, err := listfile.Parse(strings.NewReader(tc.file))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		got := l.Rows[0]
		got.Line = 0
		if got != tc.want {
			t.Errorf("%s: read %+v, want %+v (columns %v)", tc.name, got, tc.want, l.Columns)
		}
	}
}

// TestBareColumnBeforeAnyBlockIsRefused: a bare part before any address
// column, in a file with a mailing address, is refused naming the column
// and the mapping; the mapping then reads the file.
func TestBareColumnBeforeAnyBlockIsRefused(t *testing.T) {
	t.Parallel()
	for _, file := range []string{
		"APN,City,State,Zip,Mailing Address\n1,Miami,FL,33101,PO Box 5\n",
		"Unit,Address,Mailing Address\n2,5 Main St,PO Box 5\n",
		"City,Property Address,Mailing City\nMiami,5 Main St,Towson\n",
	} {
		_, err := listfile.Parse(strings.NewReader(file))
		var de *domain.Error
		if !errors.As(err, &de) || de.Code != "ambiguous_column" || !strings.Contains(de.Message, "--mapping") || !strings.HasPrefix(de.Message, "line 1: column ") {
			t.Errorf("%q: %v, want ambiguous_column naming the column and --mapping", file, err)
		}
	}
	m, err := listfile.ReadMapping(strings.NewReader(`{"apn": "APN", "state": "State", "mailing": ["Mailing Address", "City", "Zip"]}`))
	if err != nil {
		t.Fatal(err)
	}
	l, err := listfile.ParseWith(strings.NewReader("APN,City,State,Zip,Mailing Address\n1,Miami,FL,33101,PO Box 5\n"), &m)
	if err != nil {
		t.Fatal(err)
	}
	if r := l.Rows[0]; r.APN != "1" || r.State != "FL" || r.City != "" || r.Zip != "" {
		t.Fatalf("with the mapping: %+v", r)
	}
}
