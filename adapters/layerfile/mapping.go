package layerfile

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"

	"github.com/arr-dev/arr/domain/records"
)

// Mapping says which columns (CSV header names, or GeoJSON property names)
// hold what. Every field is optional except that a row needs an APN.
type Mapping struct {
	// Format is csv or geojson; empty picks by the file name (.geojson or
	// .json is GeoJSON, anything else CSV).
	Format string `json:"format,omitempty"`
	// Delimiter of a CSV file; default ",".
	Delimiter string `json:"delimiter,omitempty"`
	// APN names the column(s) of the parcel number; several are joined by
	// one space (Baltimore's block and lot). Default ["apn"].
	APN []string `json:"apn,omitempty"`
	// APNFormat rewrites the APN (see records.FormatAPN): "",
	// "baltimore_tax_account" or "orange_tax_account".
	APNFormat string `json:"apn_format,omitempty"`
	// APNPattern is a regular expression the (formatted) APN must match
	// entirely; rows that do not are rejected.
	APNPattern string `json:"apn_pattern,omitempty"`
	// Address names the column(s) of the street address, joined by a space.
	Address []string `json:"address,omitempty"`
	// Lat and Lon name the coordinate columns (WGS 84). GeoJSON files take
	// coordinates from the geometry (a Point, or the vertex average of a
	// Polygon's outer ring).
	Lat string `json:"lat,omitempty"`
	Lon string `json:"lon,omitempty"`
	// County names a column with the 5-digit county FIPS code; without it
	// every row is in the load's one county.
	County string `json:"county,omitempty"`
	// SourceURL names a column with the row's own public URL; rows without
	// one carry the load's source URL.
	SourceURL string `json:"source_url,omitempty"`
	// Date names the column of the record's own date (recorded, filed,
	// auction date); DateFormat is its Go layout, default 2006-01-02.
	Date       string `json:"date,omitempty"`
	DateFormat string `json:"date_format,omitempty"`
	// Amount names a money column in dollars ("$2,462.22" and "2462.22"
	// both read); stored in micro-dollars.
	Amount string `json:"amount,omitempty"`
	// Lender names the column of the plaintiff or lender (public filings
	// only: never a private person's name).
	Lender string `json:"lender,omitempty"`
	// Detail copies further public columns into the record: output key to
	// column name.
	Detail map[string]string `json:"detail,omitempty"`
	// Where keeps only rows whose column equals the value; other rows are
	// skipped (counted, not rejected). All conditions must hold.
	Where []Condition `json:"where,omitempty"`
	// Nulls are the cell values read as empty; default "", NA, N/A, NULL.
	Nulls []string `json:"nulls,omitempty"`

	apnRE *regexp.Regexp
}

// Condition is one Where clause.
type Condition struct {
	Column string `json:"column"`
	Equals string `json:"equals"`
}

// DefaultMapping reads files whose columns already have arr's names: apn,
// address, lat, lon, county, source_url, date, amount, lender.
func DefaultMapping() Mapping {
	return Mapping{APN: []string{"apn"}, Address: []string{"address"}, Lat: "lat", Lon: "lon", County: "county",
		SourceURL: "source_url", Date: "date", Amount: "amount", Lender: "lender"}
}

// LoadMapping reads a mapping file (JSON).
func LoadMapping(path string) (Mapping, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Mapping{}, fmt.Errorf("reading mapping: %w", err)
	}
	return ParseMapping(b)
}

// ParseMapping decodes and checks a mapping.
func ParseMapping(b []byte) (Mapping, error) {
	var m Mapping
	if err := json.Unmarshal(b, &m); err != nil {
		return Mapping{}, fmt.Errorf("mapping: %w", err)
	}
	return m, m.Validate()
}

// Validate checks the mapping and fills defaults.
func (m *Mapping) Validate() error {
	if len(m.APN) == 0 {
		m.APN = []string{"apn"}
	}
	if m.Format != "" && m.Format != "csv" && m.Format != "geojson" {
		return fmt.Errorf("mapping: format must be csv or geojson, not %q", m.Format)
	}
	if len(m.Delimiter) > 1 {
		return fmt.Errorf("mapping: delimiter must be one character")
	}
	if m.DateFormat == "" {
		m.DateFormat = "2006-01-02"
	}
	if m.Nulls == nil {
		m.Nulls = []string{"", "NA", "N/A", "NULL", "null"}
	}
	if _, err := records.FormatAPN(m.APNFormat, []string{"x"}); err != nil && m.APNFormat != "" {
		if _, known := map[string]bool{records.APNBaltimoreTaxAccount: true, records.APNOrangeTaxAccount: true}[m.APNFormat]; !known {
			return fmt.Errorf("mapping: %w", err)
		}
	}
	if m.APNPattern != "" {
		re, err := regexp.Compile("^(?:" + m.APNPattern + ")$")
		if err != nil {
			return fmt.Errorf("mapping: apn_pattern: %w", err)
		}
		m.apnRE = re
	}
	return nil
}
