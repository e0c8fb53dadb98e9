package parcelfile

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/arr-dev/arr/adapters/safecsv"
	"github.com/arr-dev/arr/domain/records"
)

// CSV writes an export as RFC 4180 CSV: CRLF line ends, a header row,
// fields quoted when they hold a comma, a quote or a line break. The
// geometry is written twice, as lon and lat columns (WGS 84 decimal
// degrees) and as WKT (POINT (lon lat)), both empty for a parcel without
// coordinates, before the columns of Columns; booleans are true or false,
// dates YYYY-MM-DD, times RFC 3339 in UTC, null is an empty field. A
// text cell a spreadsheet would read as a formula is neutralized
// (safecsv.Text); numbers are written as they are.
type CSV struct {
	w    *csv.Writer
	cols []Column
	rec  []string
}

// NewCSV writes the header row of an export with header h to w.
func NewCSV(w io.Writer, h records.ExportHeader) (*CSV, error) {
	c := &CSV{w: csv.NewWriter(w), cols: Columns(h)}
	c.w.UseCRLF = true
	head := []string{"county", "apn", "address", "lon", "lat", "WKT"}
	for _, col := range c.cols[3:] {
		head = append(head, col.Name)
	}
	c.rec = make([]string, len(head))
	if err := c.w.Write(head); err != nil {
		return nil, fmt.Errorf("csv header: %w", err)
	}
	return c, nil
}

// Write writes one parcel's row.
func (c *CSV) Write(p *records.ExportParcel) error {
	r := c.rec[:0]
	for i, col := range c.cols {
		if i == 3 { // the geometry goes before source_url
			if p.Placed {
				lon, lat := strconv.FormatFloat(p.Lon, 'f', -1, 64), strconv.FormatFloat(p.Lat, 'f', -1, 64)
				r = append(r, lon, lat, "POINT ("+lon+" "+lat+")")
			} else {
				r = append(r, "", "", "")
			}
		}
		v, ok := col.value(p)
		r = append(r, csvText(col.Kind, v, ok))
	}
	if err := c.w.Write(r); err != nil {
		return fmt.Errorf("csv row of %s: %w", p.APN, err)
	}
	return nil
}

func csvText(k Kind, v cell, ok bool) string {
	if !ok {
		return ""
	}
	switch k {
	case Bool:
		return strconv.FormatBool(v.b)
	case Real:
		return strconv.FormatFloat(v.f, 'f', -1, 64)
	case DateTime:
		return v.t.UTC().Format(rfc3339)
	case Text:
		return safecsv.Text(v.s)
	}
	return v.s
}

// Close flushes what is buffered.
func (c *CSV) Close() error {
	c.w.Flush()
	if err := c.w.Error(); err != nil {
		return fmt.Errorf("csv: %w", err)
	}
	return nil
}
