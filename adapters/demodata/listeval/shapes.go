package listeval

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strings"
	"unicode"

	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/domain/usps"
)

// longSuffix and longDir undo Publication 28's abbreviations, as many
// exports write them.
var (
	longSuffix = map[string]string{"AVE": "Avenue", "ST": "Street", "RD": "Road", "DR": "Drive", "BLVD": "Boulevard", "LN": "Lane",
		"CT": "Court", "PL": "Place", "TER": "Terrace", "CIR": "Circle", "WAY": "Way", "PKWY": "Parkway", "TRL": "Trail", "HWY": "Highway", "AV": "Avenue"}
	longDir = map[string]string{"N": "North", "S": "South", "E": "East", "W": "West", "NE": "Northeast", "NW": "Northwest", "SE": "Southeast", "SW": "Southwest"}
)

// vary rewrites a real address line the way exports differ: the i-th
// row of a list gets variation i mod 6 (as written; suffix spelled out;
// suffix with a period and Title Case; directional spelled out; leading
// zeros on the house number, lower case; all spelled out).
func vary(addr string, i int) string {
	w := strings.Fields(strings.ToUpper(addr))
	if len(w) == 0 {
		return addr
	}
	last := len(w) - 1
	switch i % 6 {
	case 1:
		if l, ok := longSuffix[w[last]]; ok {
			w[last] = strings.ToUpper(l)
		}
	case 2:
		if _, ok := longSuffix[w[last]]; ok {
			w[last] += "."
		}
		return title(strings.Join(w, " "))
	case 3:
		if len(w) > 2 {
			if l, ok := longDir[w[1]]; ok {
				w[1] = l
			}
		}
	case 4:
		w[0] = "00" + w[0]
		return strings.ToLower(strings.Join(w, " "))
	case 5:
		if l, ok := longSuffix[w[last]]; ok {
			w[last] = l
		}
		if len(w) > 2 {
			if l, ok := longDir[w[1]]; ok {
				w[1] = l
			}
		}
		return title(strings.Join(w, " "))
	}
	return strings.Join(w, " ")
}

func title(s string) string {
	rs := []rune(strings.ToLower(s))
	for i := range rs {
		if i == 0 || rs[i-1] == ' ' {
			rs[i] = unicode.ToUpper(rs[i])
		}
	}
	return string(rs)
}

// unitIn is the unit some rows carry (every 7th: the parcel is the
// building), written three ways.
func unitIn(i int) string {
	switch {
	case i%7 != 3:
		return ""
	case i%3 == 0:
		return "#2"
	case i%3 == 1:
		return "APT 2"
	}
	return "Unit 2"
}

// zipOf is the record's ZIP, as ZIP+4 on every other row.
func zipOf(r Record, i int) string {
	if _, ok := usps.ZIP5(r.Zip); !ok { // "", "NA", and Baltimore's "0" for none
		return ""
	}
	if i%2 == 1 {
		return fmt.Sprintf("%s-%04d", r.Zip, (i*37)%10000)
	}
	return r.Zip
}

func cityOf(r Record) (city, state, countyName string) {
	if r.County == "24510" {
		return "Baltimore", "MD", "Baltimore City"
	}
	return "", "FL", "Orange"
}

// Build makes the list of one shape from recs. The mailing address of a
// row, when the shape has one, is another record's property address (the
// row at the other end of the list): a matcher that read it would match
// that parcel, which is wrong.
func Build(shape string, recs []Record) (List, error) {
	var header []string
	var row func(r Record, i int, mail Record) []string
	switch shape {
	case "propstream":
		// PropStream: Address, Unit #, City, State, Zip, County, mailing.
		header = []string{"Address", "Unit #", "City", "State", "Zip", "County", "Mailing Address", "Mailing Unit #", "Mailing City", "Mailing State", "Mailing Zip", "Phone 1"}
		row = func(r Record, i int, m Record) []string {
			c, s, cn := cityOf(r)
			mc, ms, _ := cityOf(m)
			return []string{vary(r.Address, i), unitIn(i), c, s, zipOf(r, i), cn, m.Address, "", mc, ms, m.Zip, ""}
		}
	case "dealmachine":
		header = []string{"property_address_line_1", "property_address_line_2", "property_address_city", "property_address_state", "property_address_zipcode",
			"owner_address_line_1", "owner_address_city", "owner_address_state", "owner_address_zip"}
		row = func(r Record, i int, m Record) []string {
			c, s, _ := cityOf(r)
			mc, ms, _ := cityOf(m)
			return []string{vary(r.Address, i+1), unitIn(i), c, s, zipOf(r, i+1), m.Address, mc, ms, m.Zip}
		}
	case "batchdata":
		header = []string{"Property Address", "Property City", "Property State", "Property Zip", "Property County", "Owner Mailing Address", "Owner Mailing City", "Owner Mailing State", "Owner Mailing Zip"}
		row = func(r Record, i int, m Record) []string {
			c, s, cn := cityOf(r)
			mc, ms, _ := cityOf(m)
			a := vary(r.Address, i+2)
			if u := unitIn(i); u != "" {
				a += " " + u
			}
			return []string{a, c, s, zipOf(r, i), cn, m.Address, mc, ms, m.Zip}
		}
	case "reisift":
		header = []string{"Property address", "Property city", "Property state", "Property zip", "Mailing address", "Mailing city", "Mailing state", "Mailing zip", "Phone"}
		row = func(r Record, i int, m Record) []string {
			c, s, _ := cityOf(r)
			mc, ms, _ := cityOf(m)
			a := vary(r.Address, i+3)
			if u := unitIn(i); u != "" {
				a += ", " + u
			}
			stateName := map[string]string{"MD": "Maryland", "FL": "Florida"}[s]
			return []string{a, c, stateName, zipOf(r, i+1), m.Address, mc, ms, m.Zip, ""}
		}
	case "assessor":
		// A county assessor's export: parcel number on half the rows (the
		// others blank, found by situs address), situs columns.
		header = []string{"Parcel Number", "County FIPS", "Situs Address", "Situs Unit", "Situs City", "Situs State", "Situs Zip", "Taxpayer Address", "Taxpayer City"}
		row = func(r Record, i int, m Record) []string {
			c, s, _ := cityOf(r)
			apn := ""
			if i%2 == 0 {
				apn = strings.ReplaceAll(r.APN, " ", "-")
			}
			mc, _, _ := cityOf(m)
			return []string{apn, r.County, vary(r.Address, i+4), strings.TrimPrefix(unitIn(i), "#"), c, s, zipOf(r, i), m.Address, mc}
		}
	default:
		return List{}, fmt.Errorf("unknown shape %q (known: %s)", shape, strings.Join(Shapes, ", "))
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write(header)
	l := List{Shape: shape}
	for i, r := range recs {
		_ = w.Write(row(r, i, recs[len(recs)-1-i]))
		l.Truths = append(l.Truths, Truth{County: r.County, APN: r.APN, APNNorm: records.NormalizeAPN(r.APN), Source: r.Source})
	}
	w.Flush()
	l.CSV = buf.Bytes()
	return l, w.Error()
}
