package listfile

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/domain/text"
	"github.com/arr-dev/arr/domain/usps"
)

// MaxRows is the most rows one list may have.
const MaxRows = 100_000

// Row is one list row. Address is the property's street line (house
// number, street, and unit when the file wrote it there); Unit, City,
// State (USPS code) and Zip (5 digits) are their own columns, never
// joined onto it. A mailing address is never read into any of them.
type Row struct {
	Line   int
	APN    string
	County string
	// CountyName is a county written by name ("Baltimore City"), which
	// the import finds in the gazetteer with the row's state.
	CountyName string
	Address    string
	Unit       string
	City       string
	State      string
	Zip        string
	Phone      string
	Email      string
	// MailingOnly: the row has no APN and no property address, only the
	// owner's mailing address (never matched).
	MailingOnly bool
}

// List is a parsed list file.
type List struct {
	// Columns are the recognized columns, in arr's names (mailing when the
	// file has mailing-address columns, which are not kept).
	Columns []string
	Rows    []Row
}

// layout is where a file's columns are: arr's column → cell, and the
// cells of the mailing address.
type layout struct {
	idx     map[string]int
	mailing []int
}

// Parse reads a list by the header table (HeaderAliases).
func Parse(in io.Reader) (List, error) { return ParseWith(in, nil) }

// ParseWith reads a list: CSV as RFC 4180 writes it (a field with a quote,
// comma or line break is quoted, and a quote inside it doubled), which is
// how spreadsheets, list builders and the counties' portals export. Its
// columns are found by the mapping when one is given, else by the header
// table (HeaderAliases, case- and punctuation-insensitive: Property
// Address, property_address and propertyAddress are one). Each of these
// is an error naming its line, never a guess: a list without an apn or an
// address column; two header cells with the same name, or naming the
// same column (apn and parcel_id); a quote that is never closed, or a
// bare quote in an unquoted field; a row with more or fewer fields than
// the header; a file with the owner's mailing address and a bare city,
// state, zip or unit column before any address column, which cannot be
// told to be the property's (headerRoles: a bare part belongs to the
// address block it follows); a county that is neither a 5-digit FIPS code nor a name; a
// state that is no USPS state; a zip that is no ZIP or ZIP+4; a row with
// neither an APN, an address nor a mailing address.
func ParseWith(in io.Reader, m *Mapping) (List, error) {
	cr := csv.NewReader(dropBOM(in))
	// Every row has as many fields as the header (RFC 4180 section 2.4).
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
	lay, err := headerLayout(header, m)
	if err != nil {
		return List{}, err
	}
	var l List
	for _, c := range columns {
		if _, ok := lay.idx[c]; ok {
			l.Columns = append(l.Columns, c)
		}
	}
	if len(lay.mailing) > 0 {
		l.Columns = append(l.Columns, ColMailing)
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
		r, keep, err := readRow(header, rec, line, lay)
		if err != nil {
			return List{}, err
		}
		if !keep {
			continue
		}
		l.Rows = append(l.Rows, r)
		if len(l.Rows) > MaxRows {
			return List{}, domain.Invalid("too_many_rows", "file", "the list has more than %d rows; split it", MaxRows)
		}
	}
	if len(l.Rows) == 0 {
		return List{}, domain.Invalid("empty_list", "file", "the list has no rows")
	}
	return l, nil
}

// headerLayout finds the columns: by the mapping, else by the header
// table, refusing a header that names one column twice.
func headerLayout(header []string, m *Mapping) (layout, error) {
	seen := map[string]int{}
	for i, h := range header {
		k := Key(h)
		if j, dup := seen[k]; dup && k != "" {
			return layout{}, domain.Invalid("duplicate_column", "file", "line 1: columns %d and %d are both named %q; rename or remove one", j+1, i+1, strings.TrimSpace(h))
		}
		seen[k] = i
	}
	var lay layout
	if m != nil {
		if err := m.check(); err != nil {
			return layout{}, err
		}
		var err error
		if lay, err = m.layout(header); err != nil {
			return layout{}, err
		}
	} else {
		lay = layout{idx: map[string]int{}}
		roles, err := headerRoles(header)
		if err != nil {
			return layout{}, err
		}
		for i, col := range roles {
			switch {
			case col == ColMailing:
				lay.mailing = append(lay.mailing, i)
			case col != "":
				if j, dup := lay.idx[col]; dup {
					return layout{}, domain.Invalid("duplicate_column", "file", "line 1: columns %d (%q) and %d (%q) are both the list's %s column; keep one, or say which with a mapping",
						j+1, strings.TrimSpace(header[j]), i+1, strings.TrimSpace(header[i]), col)
				}
				lay.idx[col] = i
			}
		}
	}
	_, hasAPN := lay.idx[ColAPN]
	_, hasAddr := lay.idx[ColAddress]
	if !hasAPN && !hasAddr {
		msg := "line 1: the header has neither an apn nor a property address column (known names: " + strings.Join(HeaderAliases[ColAPN][:6], ", ") +
			"; " + strings.Join(HeaderAliases[ColAddress][:6], ", ") + "; or name them with a mapping)"
		if len(lay.mailing) > 0 {
			msg += "; mailing-address columns are never read as the property's"
		}
		return layout{}, domain.Invalid("no_property_column", "file", "%s", msg)
	}
	return lay, nil
}

// readRow reads one record; keep is false for a blank line.
func readRow(header, rec []string, line int, lay layout) (Row, bool, error) {
	for i, cell := range rec {
		if err := text.Check(column(header, i), cell, records.MaxListCellChars); err != nil {
			return Row{}, false, atLine(line, err)
		}
	}
	get := func(c string) string {
		i, ok := lay.idx[c]
		if !ok || i >= len(rec) {
			return ""
		}
		return strings.TrimSpace(rec[i])
	}
	r := Row{Line: line, APN: get(ColAPN), Address: get(ColAddress), Unit: get(ColUnit), City: get(ColCity),
		Phone: get(ColPhone), Email: get(ColEmail)}
	if c := get(ColCounty); c != "" {
		if strings.Trim(c, "0123456789") != "" {
			r.CountyName = c
		} else if len(c) != 5 {
			return Row{}, false, domain.Invalid("invalid_county", "file", "line %d: county %q is not a 5-digit FIPS code (24510 is Baltimore City, 12011 Broward County; a code that lost its leading zero, such as 1001, is written 01001)", line, c)
		} else {
			r.County = c
		}
	}
	if s := get(ColState); s != "" {
		code, ok := usps.State(s)
		if !ok {
			return Row{}, false, domain.Invalid("invalid_state", "file", "line %d: state %q is no US state or possession (write its USPS code, MD, or its name, Maryland)", line, s)
		}
		r.State = code
	}
	if z := get(ColZip); z != "" {
		z5, ok := usps.ZIP5(z)
		if !ok {
			return Row{}, false, domain.Invalid("invalid_zip", "file", "line %d: zip %q is no ZIP Code (21217 or 21217-1234)", line, z)
		}
		r.Zip = z5
	}
	if r.APN == "" && r.Address == "" {
		mailing := false
		for _, i := range lay.mailing {
			if i < len(rec) && strings.TrimSpace(rec[i]) != "" {
				mailing = true
			}
		}
		switch {
		case mailing:
			r.MailingOnly = true
		case strings.TrimSpace(strings.Join(rec, "")) == "":
			return Row{}, false, nil // blank line
		default:
			return Row{}, false, domain.Invalid("no_property", "file", "line %d has neither an APN nor a property address", line)
		}
	}
	return r, true, nil
}

// dropBOM drops a UTF-8 byte order mark before the header, which
// spreadsheets write and which would make a quoted first cell
// ("\ufeff"Address",...) a bare quote.
func dropBOM(in io.Reader) io.Reader {
	br := bufio.NewReader(in)
	if b, err := br.Peek(3); err == nil && string(b) == "\ufeff" {
		_, _ = br.Discard(3)
	}
	return br
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
		if h := strings.ReplaceAll(Key(header[i]), " ", "_"); h != "" && text.Valid(h) && len(h) <= 64 {
			return h
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
