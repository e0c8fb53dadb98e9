package listfile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/listfile"
	"github.com/arr-dev/arr/domain"
)

// TestExportShapes: the headers list builders and assessors write are
// read as the property's columns, and the mailing address never is.
func TestExportShapes(t *testing.T) {
	t.Parallel()
	for name, file := range map[string]string{
		"the issue's common shape": "Address,City,State,Zip,Phone\n2041 W NORTH AVE,Baltimore,MD,21217,410\n",
		"propstream": "Address,Unit #,City,State,Zip,County,Mailing Address,Mailing City,Mailing State,Mailing Zip\n" +
			"2041 W NORTH AVE,,Baltimore,MD,21217-1234,Baltimore City,9 ELSEWHERE RD,Towson,MD,21204\n",
		"dealmachine": "property_address_line_1,property_address_line_2,property_address_city,property_address_state,property_address_zipcode,owner_address_line_1,owner_address_city\n" +
			"2041 W NORTH AVE,,Baltimore,MD,21217,9 ELSEWHERE RD,Towson\n",
		"batchdata": "Property Address,Property City,Property State,Property Zip,Owner Mailing Address,Owner Mailing City\n" +
			"2041 W NORTH AVE,Baltimore,Maryland,212171234,9 ELSEWHERE RD,Towson\n",
		"reisift": "Property address,Property city,Property state,Property zip,Mailing address,Mailing city\n" +
			"2041 W NORTH AVE,Baltimore,md,21217,9 ELSEWHERE RD,Towson\n",
		"camelCase": "propertyAddress,propertyCity,propertyState,propertyZip,mailingAddress\n2041 W NORTH AVE,Baltimore,MD,21217,9 ELSEWHERE RD\n",
		"assessor":  "Parcel Number,Situs Address,Situs City,Situs Zip,Taxpayer Address\n0001 003,2041 W NORTH AVE,Baltimore,21217,9 ELSEWHERE RD\n",
	} {
		l, err := listfile.Parse(strings.NewReader(file))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		r := l.Rows[0]
		if r.Address != "2041 W NORTH AVE" || r.City != "Baltimore" || (r.State != "" && r.State != "MD") || (r.Zip != "" && r.Zip != "21217") {
			t.Errorf("%s: read %+v", name, r)
		}
		if strings.Contains(r.Address+r.City+r.Unit, "ELSEWHERE") || strings.Contains(r.City, "Towson") {
			t.Errorf("%s: read the mailing address as the property's: %+v", name, r)
		}
	}
}

func TestMailingOnly(t *testing.T) {
	t.Parallel()
	l, err := listfile.Parse(strings.NewReader("Property Address,Mailing Address\n,9 ELSEWHERE RD\n2041 W NORTH AVE,\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !l.Rows[0].MailingOnly || l.Rows[0].Address != "" || l.Rows[1].MailingOnly {
		t.Fatalf("%+v", l.Rows)
	}
	// A file whose only address is the mailing one has no property column.
	_, err = listfile.Parse(strings.NewReader("Mailing Address,Mailing City\n9 ELSEWHERE RD,Towson\n"))
	if err == nil || !errors.Is(err, domain.ErrInvalid) || !strings.Contains(err.Error(), "never read as the property") {
		t.Fatalf("mailing columns alone: %v", err)
	}
}

func TestMapping(t *testing.T) {
	t.Parallel()
	m, err := listfile.ReadMapping(strings.NewReader(`{"apn": "Folio No", "address": "Loc", "unit": "Bldg Unit", "mailing": ["Addr 2"]}`))
	if err != nil {
		t.Fatal(err)
	}
	l, err := listfile.ParseWith(strings.NewReader("Folio No,Loc,Bldg Unit,Addr 2,Address\n494129A10190,9601 SUNRISE LAKES BLVD,207,1 OTHER ST,2 OTHER ST\n"), &m)
	if err != nil {
		t.Fatal(err)
	}
	if r := l.Rows[0]; r.APN != "494129A10190" || r.Address != "9601 SUNRISE LAKES BLVD" || r.Unit != "207" {
		t.Fatalf("%+v", r)
	}
	for name, c := range map[string]struct{ mapping, file, want string }{
		"unknown field":      {`{"apn": "a", "adress": "b"}`, "a,b\n1,2\n", "unknown field"},
		"not an object":      {`["apn"]`, "a\n1\n", "not a JSON object"},
		"two values":         {`{"apn": "a"} {}`, "a\n1\n", "more than one"},
		"no apn or address":  {`{"city": "a"}`, "a\n1\n", "neither an apn nor an address"},
		"a header twice":     {`{"apn": "a", "address": "A"}`, "a\n1\n", "both"},
		"mailing as address": {`{"address": "a", "mailing": ["a"]}`, "a\n1\n", "both"},
		"missing header":     {`{"apn": "parcel"}`, "a\n1\n", "not in the file's header"},
		"empty header":       {`{"apn": "  "}`, "a\n1\n", "names no header"},
		"control character":  {`{"apn": "a\u0000"}`, "a\n1\n", "mapping"},
		"too large":          {`{"apn": "` + strings.Repeat("x", 20000) + `"}`, "a\n1\n", "over"},
	} {
		m, err := listfile.ReadMapping(strings.NewReader(c.mapping))
		if err == nil {
			_, err = listfile.ParseWith(strings.NewReader(c.file), &m)
		}
		if err == nil || !errors.Is(err, domain.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a validation error with %q", name, err, c.want)
		}
	}
}

func TestHostileCells(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct{ file, want string }{
		"bad state":        {"address,state\n1 Main St,Narnia\n", "line 2: state"},
		"bad zip":          {"address,zip\n1 Main St,ABCDE\n", "line 2: zip"},
		"bad fips":         {"address,county\n1 Main St,1234\n", "5-digit FIPS"},
		"two address cols": {"Address,Property Address\n1 Main St,2 Main St\n", "both the list's address column"},
		"same name twice":  {"Address,address\n1 Main St,2 Main St\n", "both named"},
	} {
		_, err := listfile.Parse(strings.NewReader(c.file))
		if err == nil || !errors.Is(err, domain.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// FuzzMapping: a mapping is refused with a validation error, or the list
// it reads has an APN or address, or a mailing-only flag, on every row.
func FuzzMapping(f *testing.F) {
	f.Add(`{"apn": "a"}`, "a,b\n1,2\n")
	f.Add(`{"address": "b", "mailing": ["a"]}`, "a,b\n1,2\n,3\n")
	f.Add(`{"apn": "a", "zip": "b"}`, "a,b\n1,2\n")
	f.Fuzz(func(t *testing.T, mapping, file string) {
		m, err := listfile.ReadMapping(strings.NewReader(mapping))
		if err != nil {
			if !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("a mapping refused with no validation error: %v", err)
			}
			return
		}
		l, err := listfile.ParseWith(strings.NewReader(file), &m)
		if err != nil {
			return
		}
		for _, r := range l.Rows {
			if r.APN == "" && r.Address == "" && !r.MailingOnly {
				t.Fatalf("row %+v names nothing", r)
			}
		}
	})
}
