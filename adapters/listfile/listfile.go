package listfile

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
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
