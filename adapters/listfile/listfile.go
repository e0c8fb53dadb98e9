package listfile

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/domain/text"
)

// MaxRows is the most rows one list may have.
const MaxRows = 100_000

// Row is one list row.
type Row struct {
	Line    int
	APN     string
	County  string
	Address string
	Phone   string
	Email   string
}

// List is a parsed list file.
type List struct {
	// Columns are the recognized columns, in arr's names.
	Columns []string
	Rows    []Row
}

var aliases = map[string][]string{
	"apn":     {"apn", "parcel", "parcel_id", "parcel id", "parcel_number", "folio", "bcpa_folio", "account", "pin"},
	"county":  {"county", "county_fips", "fips"},
	"address": {"address", "property_address", "property address", "street", "site_address", "situs"},
	"city":    {"city", "property_city"},
	"zip":     {"zip", "zipcode", "zip_code", "postal_code"},
	"phone":   {"phone", "phone_number", "telephone", "tel", "mobile"},
	"email":   {"email", "e-mail", "email_address", "mail"},
}

// Parse reads a list: CSV as RFC 4180 writes it (a field with a quote,
// comma or line break is quoted, and a quote inside it doubled), which is
// how spreadsheets and the counties' portals export. The header names the
// columns (case-insensitive; aliases such as parcel_id, folio,
// property_address, telephone, e-mail are understood). Each of these is
// an error naming its line, never a guess: a list without an apn or an
// address column; two header cells with the same name, or naming the same
// column (apn and parcel_id); a quote that is never closed, or a bare
// quote in an unquoted field; a row with more or fewer fields than the
// header; a county that is not a 5-digit FIPS code; a
// row with neither an APN nor an address.
func Parse(in io.Reader) (List, error) {
	cr := csv.NewReader(in)
	// Every row has as many fields as the header (RFC 4180 section 2.4;
	// encoding/csv sets the count from the first record): a row with more
	// or fewer is read by no guess of which cell is which.
	cr.FieldsPerRecord = 0
	header, err := cr.Read()
	if err != nil {
		if err == io.EOF {
			return List{}, domain.Invalid("empty_list", "file", "the file is empty: a list starts with a header line naming its columns")
		}
		return List{}, csvError(err)
	}
	if err := text.CheckAll("columns", header, records.MaxListHeaderChars); err != nil {
		return List{}, atLine(1, err)
	}
	idx := map[string]int{}
	seen := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		if j, dup := seen[h]; dup && h != "" {
			return List{}, domain.Invalid("duplicate_column", "file", "line 1: columns %d and %d are both named %q; rename or remove one", j+1, i+1, h)
		}
		seen[h] = i
		for name, as := range aliases {
			for _, a := range as {
				if h == a {
					if j, dup := idx[name]; dup {
						return List{}, domain.Invalid("duplicate_column", "file", "line 1: columns %d (%q) and %d (%q) are both the list's %s column; keep one",
							j+1, strings.TrimSpace(header[j]), i+1, strings.TrimSpace(header[i]), name)
					}
					idx[name] = i
				}
			}
		}
	}
	_, hasAPN := idx["apn"]
	_, hasAddr := idx["address"]
	if !hasAPN && !hasAddr {
		return List{}, fmt.Errorf("the header %q has neither an apn nor an address column", header)
	}
	var l List
	for _, c := range []string{"apn", "county", "address", "phone", "email"} {
		if _, ok := idx[c]; ok {
			l.Columns = append(l.Columns, c)
		}
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if errors.Is(err, csv.ErrFieldCount) {
			line, _ := cr.FieldPos(0)
			return List{}, domain.Invalid("field_count", "file", "line %d has %d fields and the header %d: every row has one field per column (a comma inside a field, as in \"10700 NW 1 ST, #207\", is quoted: the whole field in double quotes)", line, len(rec), len(header))
		}
		if err != nil {
			return List{}, csvError(err)
		}
		line, _ := cr.FieldPos(0)
		for i, cell := range rec {
			if err := text.Check(column(header, i), cell, records.MaxListCellChars); err != nil {
				return List{}, atLine(line, err)
			}
		}
		get := func(c string) string {
			i, ok := idx[c]
			if !ok || i >= len(rec) {
				return ""
			}
			return strings.TrimSpace(rec[i])
		}
		r := Row{Line: line, APN: get("apn"), County: get("county"), Phone: get("phone"), Email: get("email")}
		parts := []string{get("address")}
		if c := get("city"); c != "" {
			parts = append(parts, c)
		}
		r.Address = strings.TrimSpace(strings.Join(parts, " "))
		if r.County != "" && (len(r.County) != 5 || strings.Trim(r.County, "0123456789") != "") {
			return List{}, domain.Invalid("invalid_county", "file", "line %d: county %q is not a 5-digit FIPS code (24510 is Baltimore City, 12011 Broward County; a code that lost its leading zero, such as 1001, is written 01001)", line, r.County)
		}
		if r.APN == "" && r.Address == "" {
			if strings.TrimSpace(strings.Join(rec, "")) == "" {
				continue // blank line
			}
			return List{}, fmt.Errorf("line %d has neither an APN nor an address", line)
		}
		l.Rows = append(l.Rows, r)
		if len(l.Rows) > MaxRows {
			return List{}, fmt.Errorf("the list has more than %d rows", MaxRows)
		}
	}
	if len(l.Rows) == 0 {
		return List{}, errors.New("the list has no rows")
	}
	return l, nil
}

// csvError says where and how a file is not CSV: the line a quoted field
// opened on and was never closed, or the line of a bare quote.
func csvError(err error) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return fmt.Errorf("reading the list: %w", err)
	}
	switch {
	case errors.Is(pe.Err, csv.ErrQuote):
		return domain.Invalid("unterminated_quote", "file", "line %d: a quoted field is not closed where it should be (a quote opened on line %d is never closed, or a quote inside a quoted field is not doubled as \"\"); parsing stopped at line %d, column %d", pe.StartLine, pe.StartLine, pe.Line, pe.Column)
	case errors.Is(pe.Err, csv.ErrBareQuote):
		return domain.Invalid("bare_quote", "file", "line %d, column %d: a quote inside a field that is not quoted; quote the field and double the quote (\"2041 W \"\"North\"\" Ave\")", pe.Line, pe.Column)
	}
	return domain.Invalid("invalid_csv", "file", "line %d: %v", pe.Line, pe.Err)
}

// column names cell i of a row for errors: its header, else its number.
func column(header []string, i int) string {
	if i < len(header) {
		if h := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(header[i], "\ufeff"))); h != "" && text.Valid(h) && len(h) <= 64 {
			return strings.ReplaceAll(h, " ", "_")
		}
	}
	return fmt.Sprintf("column_%d", i+1)
}

// atLine says on which line of the file a validation error is.
func atLine(line int, err error) error {
	var de *domain.Error
	if errors.As(err, &de) {
		c := *de
		c.Message = fmt.Sprintf("line %d: %s", line, de.Message)
		return &c
	}
	return fmt.Errorf("line %d: %w", line, err)
}
