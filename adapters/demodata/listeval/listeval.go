package listeval

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"fmt"
	"io"
	"strings"

	"github.com/arr-dev/arr/adapters/demodata"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/domain/usps"
)

// Record is one real record a list row is built from: the parcel it names
// (county FIPS and APN as the demo load writes it) and its address.
type Record struct {
	County  string
	APN     string
	Address string
	Zip     string
	Source  string
}

// Truth is the parcel a list row names.
type Truth struct {
	County string
	APN    string
	// APNNorm is records.NormalizeAPN(APN).
	APNNorm string
	Source  string
}

// List is a list in one export shape: its CSV and the truth of each row
// (Truths[i] is row i+1).
type List struct {
	Shape  string
	CSV    []byte
	Truths []Truth
}

// Shapes are the export shapes Build makes.
var Shapes = []string{"propstream", "dealmachine", "batchdata", "reisift", "assessor"}

// Records reads the real records lists are built from: those whose
// address has a house number, every step-th of each file.
func Records(step int) ([]Record, error) {
	var out []Record
	for _, f := range []struct {
		file, county, source string
		apn                  func(map[string]string) (string, bool)
		addr, zip            string
	}{
		{"baltimore-md_vacant_building_notices_2019.csv.gz", "24510", "baltimore vacant notices",
			func(r map[string]string) (string, bool) { return r["blk"] + " " + r["lt"], r["blk"] != "" }, "address", "Zip5"},
		{"baltimore-md_tax_sale_certificates_2019.csv.gz", "24510", "baltimore tax sale",
			func(r map[string]string) (string, bool) {
				a, err := records.FormatAPN(records.APNBaltimoreTaxAccount, []string{r["Account Number"]})
				return a, err == nil
			}, "Property Address", ""},
		{"orange-fl_code_violations.csv.gz", "12095", "orange code violations",
			func(r map[string]string) (string, bool) { return r["Parcel ID"], len(r["Parcel ID"]) == 15 }, "Incident Address", ""},
	} {
		rows, err := readGz(f.file)
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		n := 0
		for _, r := range rows {
			apn, ok := f.apn(r)
			addr := strings.TrimSpace(r[f.addr])
			if !ok || usps.Parse(addr).Number == "" || seen[apn] {
				continue
			}
			seen[apn] = true
			if n++; n%step != 0 {
				continue
			}
			zip := ""
			if f.zip != "" {
				zip = r[f.zip]
			}
			out = append(out, Record{County: f.county, APN: apn, Address: addr, Zip: zip, Source: f.source})
		}
	}
	return out, nil
}

func readGz(name string) ([]map[string]string, error) {
	b, err := demodata.ReadFile(name)
	if err != nil {
		return nil, err
	}
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	recs, err := csv.NewReader(gz).ReadAll()
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s is empty", name)
	}
	out := make([]map[string]string, 0, len(recs)-1)
	for _, rec := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = rec[i]
		}
		out = append(out, m)
	}
	return out, nil
}
