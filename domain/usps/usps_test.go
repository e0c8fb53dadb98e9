package usps_test

import (
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain/usps"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]usps.Address{
		"2041 W NORTH AVE":              {Number: "2041", Predir: "W", Name: "NORTH", Suffix: "AVE"},
		"2041 West North Avenue":        {Number: "2041", Predir: "W", Name: "NORTH", Suffix: "AVE"},
		"2041 w. north ave.":            {Number: "2041", Predir: "W", Name: "NORTH", Suffix: "AVE"},
		"02041 W NORTH AV":              {Number: "2041", Predir: "W", Name: "NORTH", Suffix: "AVE"},
		"100 North St":                  {Number: "100", Name: "NORTH", Suffix: "ST"},
		"100 Main Street Northwest":     {Number: "100", Name: "MAIN", Suffix: "ST", Postdir: "NW"},
		"100 MAIN ST NW APT 2":          {Number: "100", Name: "MAIN", Suffix: "ST", Postdir: "NW", Unit: "2"},
		"100 Main St #2":                {Number: "100", Name: "MAIN", Suffix: "ST", Unit: "2"},
		"100 Main St, Unit 2":           {Number: "100", Name: "MAIN", Suffix: "ST", Unit: "2"},
		"100 Main St Apt. #02":          {Number: "100", Name: "MAIN", Suffix: "ST", Unit: "2"},
		"100 Main St Suite 300":         {Number: "100", Name: "MAIN", Suffix: "ST", Unit: "300"},
		"100 Main St Rear":              {Number: "100", Name: "MAIN", Suffix: "ST", Unit: "REAR"},
		"100 Main St Bldg B":            {Number: "100", Name: "MAIN", Suffix: "ST", Unit: "BLDG B"},
		"100 Main St Fl 3":              {Number: "100", Name: "MAIN", Suffix: "ST", Unit: "FL 3"},
		"12 1/2 Oak Ln":                 {Number: "12 1/2", Name: "OAK", Suffix: "LN"},
		"9601 SUNRISE LAKES BLVD, #207": {Number: "9601", Name: "SUNRISE LAKES", Suffix: "BLVD", Unit: "207"},
		"10700 NW 1 ST":                 {Number: "10700", Predir: "NW", Name: "1", Suffix: "ST"},
		"18800 E COLONIAL DR":           {Number: "18800", Predir: "E", Name: "COLONIAL", Suffix: "DR"},
		"1 Lot Rd":                      {Number: "1", Name: "LOT", Suffix: "RD"},
		"5 Park Lot Rd":                 {Number: "5", Name: "PARK LOT", Suffix: "RD"},
		"7 Avenue of the Americas":      {Number: "7", Name: "AVENUE OF THE AMERICAS"},
		"000 Main St":                   {Number: "0", Name: "MAIN", Suffix: "ST"},
		"4049B Belair Rd":               {Number: "4049B", Name: "BELAIR", Suffix: "RD"},
		"":                              {},
	} {
		if got := usps.Parse(in); got != want {
			t.Errorf("Parse(%q) = %+v, want %+v", in, got, want)
		}
	}
}

// TestSameAddress: the variants lists write for one address have one key.
func TestSameAddress(t *testing.T) {
	t.Parallel()
	for _, group := range [][]string{
		{"2041 W NORTH AVE", "2041 West North Avenue", "2041 w north ave.", "02041 W. NORTH AV", "2041  W  NORTH  AVEN"},
		{"100 Main St #2", "100 MAIN STREET APT 2", "100 Main Str Unit 2", "100 main st., apt. #2", "100 Main St Apartment 02"},
		{"5 Oak Ct Suite 4", "5 OAK COURT STE 4", "5 oak ct # 4"},
	} {
		want := usps.Normalize(group[0])
		for _, s := range group[1:] {
			if got := usps.Normalize(s); got != want {
				t.Errorf("Normalize(%q) = %q, want %q (as %q)", s, got, want, group[0])
			}
		}
	}
	if k := usps.Parse("100 Main St Apt 2"); k.Street() != "100 MAIN ST" || k.Key() != "100 MAIN ST UNIT 2" {
		t.Errorf("Street %q, Key %q", k.Street(), k.Key())
	}
}

func TestTables(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"AVENUE": "AVE", "av": "AVE", "Aven": "AVE", "AVNUE": "AVE", "STREET": "ST", "STR": "ST",
		"strt": "ST", "BOULEVARD": "BLVD", "Circle": "CIR", "CRCL": "CIR", "highway": "HWY", "parkway": "PKWY", "PKY": "PKWY",
		"TERRACE": "TER", "crossing": "XING", "Ave.": "AVE", "WAY": "WAY", "TRAIL": "TRL", "COURT": "CT", "PLACE": "PL"} {
		if got, ok := usps.Suffix(in); !ok || got != want {
			t.Errorf("Suffix(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if _, ok := usps.Suffix("NORTH"); ok {
		t.Error("NORTH is no suffix")
	}
	for in, want := range map[string]string{"North": "N", "W": "W", "west": "W", "NORTHWEST": "NW", "south-east": "SE"} {
		if got, ok := usps.Directional(in); !ok || got != want {
			t.Errorf("Directional(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for in, want := range map[string]string{"Apartment": "APT", "apt.": "APT", "SUITE": "STE", "#": "#", "Building": "BLDG", "floor": "FL", "ROOM": "RM"} {
		if got, ok := usps.Secondary(in); !ok || got != want {
			t.Errorf("Secondary(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for in, want := range map[string]string{"21217": "21217", "21217-1234": "21217", "212171234": "21217", " 32801 ": "32801", "2134": "02134"} {
		if got, ok := usps.ZIP5(in); !ok || got != want {
			t.Errorf("ZIP5(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "ABCDE", "21217-12", "1", "2121712345"} {
		if got, ok := usps.ZIP5(in); ok {
			t.Errorf("ZIP5(%q) = %q, want refused", in, got)
		}
	}
	for in, want := range map[string]string{"md": "MD", "Maryland": "MD", "FLORIDA": "FL", "district of columbia": "DC", "Fla": "", "N.Y.": "NY"} {
		if got, ok := usps.State(in); got != want || ok != (want != "") {
			t.Errorf("State(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"2041 W NORTH AVE", "100 Main St #2", "12 1/2 Oak", "#", "APT APT APT", "0-0/0",
		"5 Main St Bldg 4 Apt 2-B", "12½ Oak Rd Rear Apt No 3 & 4", "1 A St UNIT UNIT # & 2 21217", "7-1/2 Elm St Fl 02 Ste 0 0 Rear"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k := usps.Normalize(s)
		if again := usps.Normalize(k); again != k {
			t.Fatalf("Normalize is not idempotent: %q -> %q -> %q", s, k, again)
		}
		// A unit column's identifier has no leading or trailing space.
		if u := usps.UnitID(s); u != strings.TrimSpace(u) {
			t.Fatalf("UnitID(%q) = %q", s, u)
		}
	})
}

func TestUnitID(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"APT 2": "2", "#2": "2", "Unit 02": "2", "2": "2", "apt. #2": "2", "Rear": "REAR", "Ste 4B": "4B", "": "", "#": "", "APT": ""} {
		if got := usps.UnitID(in); got != want {
			t.Errorf("UnitID(%q) = %q, want %q", in, got, want)
		}
	}
}
