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

// Parse reads a list. The header names the columns (case-insensitive;
// aliases such as parcel_id, folio, property_address, telephone, e-mail are
// understood). A list needs an apn or an address column; rows with neither
// are an error naming their line.
func Parse(in io.Reader) (List, error) {
	cr := csv.NewReader(in)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	header, err := cr.Read()
	if err != nil {
		return List{}, fmt.Errorf("reading the header: %w", err)
	}
	if err := text.CheckAll("columns", header, records.MaxListHeaderChars); err != nil {
		return List{}, atLine(1, err)
	}
	idx := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		for name, as := range aliases {
			for _, a := range as {
				if h == a {
					if _, dup := idx[name]; !dup {
						idx[name] = i
					}
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
		line, _ := cr.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return List{}, fmt.Errorf("line %d: %w", pe.StartLine, err)
			}
			return List{}, err
		}
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
