package layerfile

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/domain/text"
)

// Options configure a Reader.
type Options struct {
	// Name is the file's name (its extension picks the format when the
	// mapping does not; ".gz" is decompressed).
	Name string
	// County is the county FIPS code of rows without a county column.
	County string
	// Mapping maps columns; nil uses DefaultMapping, where absent columns
	// are simply not read. Columns a given mapping names must exist.
	Mapping *Mapping
}

// Stats counts what a Reader has seen so far.
type Stats struct {
	Read     int // data rows read (header excluded)
	Skipped  int // rows a Where condition left out
	Rejected int
}

// Reader reads rows. Not safe for concurrent use.
type Reader struct {
	m      Mapping
	county string
	stats  Stats
	closer io.Closer
	// csv
	csv *csv.Reader
	col map[string]int
	// geojson
	features []feature
	next     int
}

type feature struct {
	Geometry *struct {
		Type        string          `json:"type"`
		Coordinates json.RawMessage `json:"coordinates"`
	} `json:"geometry"`
	Properties map[string]any `json:"properties"`
}

// Open opens a file (gzip when its name ends in .gz).
func Open(path string, o Options) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if o.Name == "" {
		o.Name = filepath.Base(path)
	}
	r, err := NewReader(f, o)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// NewReader reads from r.
func NewReader(in io.Reader, o Options) (*Reader, error) {
	strict := o.Mapping != nil
	m := DefaultMapping()
	if o.Mapping != nil {
		m = *o.Mapping
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	name := strings.ToLower(o.Name)
	if strings.HasSuffix(name, ".gz") {
		gz, err := gzip.NewReader(in)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.Name, err)
		}
		in = gz
		name = strings.TrimSuffix(name, ".gz")
	}
	if m.Format == "" {
		m.Format = "csv"
		if strings.HasSuffix(name, ".geojson") || strings.HasSuffix(name, ".json") {
			m.Format = "geojson"
		}
	}
	if m.Format == "geojson" && !strict {
		m.Lat, m.Lon = "", "" // the default mapping takes coordinates from the geometry
	}
	r := &Reader{m: m, county: o.County}
	if m.Format == "geojson" {
		var fc struct {
			Type     string    `json:"type"`
			Features []feature `json:"features"`
		}
		if err := json.NewDecoder(in).Decode(&fc); err != nil {
			return nil, fmt.Errorf("%s: not a GeoJSON FeatureCollection: %w", o.Name, err)
		}
		if fc.Type != "FeatureCollection" {
			return nil, fmt.Errorf("%s: GeoJSON type is %q, want FeatureCollection", o.Name, fc.Type)
		}
		r.features = fc.Features
		return r, nil
	}
	cr := csv.NewReader(bufio.NewReaderSize(in, 1<<20))
	if m.Delimiter != "" {
		cr.Comma = rune(m.Delimiter[0])
	}
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	cr.LazyQuotes = true
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: reading the header: %w", o.Name, err)
	}
	r.csv = cr
	r.col = map[string]int{}
	for i, h := range header {
		r.col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	if err := r.checkColumns(strict); err != nil {
		return nil, fmt.Errorf("%s: %w", o.Name, err)
	}
	if r.m.County == "" && r.county == "" {
		return nil, fmt.Errorf("%s: rows need a county: give the load's county or a county column in the mapping", o.Name)
	}
	return r, nil
}

// checkColumns makes sure the mapping's columns are in the header. With the
// default mapping, absent optional columns are dropped instead.
func (r *Reader) checkColumns(strict bool) error {
	has := func(c string) bool { _, ok := r.col[c]; return ok }
	var missing []string
	need := func(c *string) {
		if *c == "" || has(*c) {
			return
		}
		if strict {
			missing = append(missing, *c)
		}
		*c = ""
	}
	for i := range r.m.APN {
		if !has(r.m.APN[i]) {
			missing = append(missing, r.m.APN[i])
		}
	}
	var addr []string
	for _, a := range r.m.Address {
		if has(a) {
			addr = append(addr, a)
		} else if strict {
			missing = append(missing, a)
		}
	}
	r.m.Address = addr
	for _, c := range []*string{&r.m.Lat, &r.m.Lon, &r.m.County, &r.m.SourceURL, &r.m.Date, &r.m.Amount, &r.m.Lender} {
		need(c)
	}
	for _, c := range r.m.Detail {
		if !has(c) {
			missing = append(missing, c)
		}
	}
	for _, w := range r.m.Where {
		if !has(w.Column) {
			missing = append(missing, w.Column)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the file has no column(s) %q named by the mapping (it has %d columns)", missing, len(r.col))
	}
	return nil
}

// Stats returns the counts so far.
func (r *Reader) Stats() Stats { return r.stats }

// Close closes the file Open opened.
func (r *Reader) Close() error {
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// Next returns up to max accepted rows and the rows rejected on the way.
// At the end of the input it returns io.EOF (with the last rows, if any).
// An error other than io.EOF means the file itself cannot be read further.
func (r *Reader) Next(max int) ([]records.Row, []records.Reject, error) {
	var rows []records.Row
	var rejects []records.Reject
	for len(rows) < max {
		get, line, err := r.record()
		if err == io.EOF {
			return rows, rejects, io.EOF
		}
		if err != nil {
			return rows, rejects, err
		}
		if get == nil { // a malformed record: rejected
			rejects = append(rejects, records.Reject{Line: line, Reason: "malformed record"})
			r.stats.Rejected++
			continue
		}
		r.stats.Read++
		skip := false
		for _, w := range r.m.Where {
			if get(w.Column) != w.Equals {
				skip = true
				break
			}
		}
		if skip {
			r.stats.Skipped++
			continue
		}
		row, err := r.row(get, line)
		if err != nil {
			rejects = append(rejects, records.Reject{Line: line, Reason: err.Error()})
			r.stats.Rejected++
			continue
		}
		rows = append(rows, row)
	}
	return rows, rejects, nil
}

// record returns a getter of the next record's cells and its line number
// (CSV: the line it starts on; GeoJSON: the feature's 1-based index).
func (r *Reader) record() (func(string) string, int, error) {
	if r.csv == nil {
		if r.next >= len(r.features) {
			return nil, 0, io.EOF
		}
		f := r.features[r.next]
		r.next++
		get := func(c string) string {
			v, ok := f.Properties[c]
			if !ok || v == nil {
				return ""
			}
			if s, ok := v.(string); ok {
				return strings.TrimSpace(s)
			}
			b, _ := json.Marshal(v)
			return string(b)
		}
		return r.geoGetter(get, f), r.next, nil
	}
	rec, err := r.csv.Read()
	line, _ := r.csv.FieldPos(0)
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, pe.StartLine, nil
		}
		return nil, 0, err
	}
	get := func(c string) string {
		i, ok := r.col[c]
		if !ok || i >= len(rec) {
			return ""
		}
		return strings.TrimSpace(rec[i])
	}
	return get, line, nil
}

// Pseudo-columns a GeoJSON feature's geometry answers to.
const (
	geoLat = "\x00lat"
	geoLon = "\x00lon"
)

func (r *Reader) geoGetter(props func(string) string, f feature) func(string) string {
	lat, lon := "", ""
	if f.Geometry != nil {
		if x, y, ok := centroid(f.Geometry.Type, f.Geometry.Coordinates); ok {
			lon, lat = strconv.FormatFloat(x, 'f', -1, 64), strconv.FormatFloat(y, 'f', -1, 64)
		}
	}
	if r.m.Lat == "" && r.m.Lon == "" {
		r.m.Lat, r.m.Lon = geoLat, geoLon
	}
	return func(c string) string {
		switch c {
		case geoLat:
			return lat
		case geoLon:
			return lon
		}
		return props(c)
	}
}

// centroid returns a Point's coordinates, or the vertex average of a
// Polygon's (or a MultiPolygon's first polygon's) outer ring.
func centroid(typ string, raw json.RawMessage) (float64, float64, bool) {
	var ring [][]float64
	switch typ {
	case "Point":
		var p []float64
		if json.Unmarshal(raw, &p) != nil || len(p) < 2 {
			return 0, 0, false
		}
		return p[0], p[1], true
	case "Polygon":
		var poly [][][]float64
		if json.Unmarshal(raw, &poly) != nil || len(poly) == 0 {
			return 0, 0, false
		}
		ring = poly[0]
	case "MultiPolygon":
		var mp [][][][]float64
		if json.Unmarshal(raw, &mp) != nil || len(mp) == 0 || len(mp[0]) == 0 {
			return 0, 0, false
		}
		ring = mp[0][0]
	default:
		return 0, 0, false
	}
	var sx, sy float64
	n := 0
	for _, p := range ring {
		if len(p) >= 2 {
			sx, sy, n = sx+p[0], sy+p[1], n+1
		}
	}
	if n == 0 {
		return 0, 0, false
	}
	return sx / float64(n), sy / float64(n), true
}

func (r *Reader) null(v string) bool {
	for _, n := range r.m.Nulls {
		if v == n {
			return true
		}
	}
	return false
}

func (r *Reader) cell(get func(string) string, c string) string {
	if c == "" {
		return ""
	}
	v := get(c)
	if r.null(v) {
		return ""
	}
	return v
}

// row turns one record into a Row, or says why it cannot.
func (r *Reader) row(get func(string) string, line int) (records.Row, error) {
	row := records.Row{Line: line, County: r.county}
	parts := make([]string, len(r.m.APN))
	for i, c := range r.m.APN {
		parts[i] = r.cell(get, c)
		if parts[i] == "" {
			return row, fmt.Errorf("no APN (column %q is empty)", c)
		}
	}
	apn, err := records.FormatAPN(r.m.APNFormat, parts)
	if err != nil {
		return row, err
	}
	if r.m.apnRE != nil && !r.m.apnRE.MatchString(apn) {
		return row, fmt.Errorf("APN %q does not match the pattern %s", apn, r.m.APNPattern)
	}
	row.APN = apn
	if r.m.County != "" {
		if c := r.cell(get, r.m.County); c != "" {
			row.County = c
		}
	}
	if len(row.County) != 5 || strings.Trim(row.County, "0123456789") != "" {
		return row, fmt.Errorf("county %q is not a 5-digit FIPS code", row.County)
	}
	var addr []string
	for _, c := range r.m.Address {
		if v := r.cell(get, c); v != "" {
			addr = append(addr, v)
		}
	}
	row.Address = strings.Join(addr, " ")
	lat, lon := r.cell(get, r.m.Lat), r.cell(get, r.m.Lon)
	if lat != "" || lon != "" {
		y, errY := strconv.ParseFloat(lat, 64)
		x, errX := strconv.ParseFloat(lon, 64)
		switch {
		case errY != nil || errX != nil || math.IsNaN(x) || math.IsNaN(y):
			return row, fmt.Errorf("coordinates %q,%q are not two numbers", lat, lon)
		case y < -90 || y > 90 || x < -180 || x > 180:
			return row, fmt.Errorf("coordinates lat %g, lon %g are out of range", y, x)
		case x == 0 && y == 0:
			return row, fmt.Errorf("coordinates are 0,0 (a placeholder, not a place)")
		}
		row.Lat, row.Lon = &y, &x
	}
	if u := r.cell(get, r.m.SourceURL); u != "" {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return row, fmt.Errorf("source URL %q is not an http(s) URL", u)
		}
		row.SourceURL = u
	}
	if d := r.cell(get, r.m.Date); d != "" {
		t, err := time.Parse(r.m.DateFormat, d)
		if err != nil {
			return row, fmt.Errorf("date %q does not match the layout %s", d, r.m.DateFormat)
		}
		row.Date = t.Format(time.DateOnly)
	}
	if a := r.cell(get, r.m.Amount); a != "" {
		micros, err := ParseDollars(a)
		if err != nil {
			return row, err
		}
		row.Amount = &micros
	}
	row.Lender = r.cell(get, r.m.Lender)
	if len(r.m.Detail) > 0 {
		row.Detail = make(map[string]string, len(r.m.Detail))
		for k, c := range r.m.Detail {
			if v := r.cell(get, c); v != "" {
				row.Detail[k] = v
			}
		}
	}
	return row, checkText(row)
}

// checkText holds a row's text to the rule for text that becomes an event
// (domain/text): a row with a NUL or another control character in a cell
// is rejected, naming the field, rather than loaded.
func checkText(row records.Row) error {
	for _, f := range []struct{ name, v string }{{"apn", row.APN}, {"county", row.County}, {"address", row.Address},
		{"source_url", row.SourceURL}, {"lender", row.Lender}} {
		if err := text.Check(f.name, f.v, records.MaxRowTextChars); err != nil {
			return err
		}
	}
	for k, v := range row.Detail {
		if err := text.Check("detail", k, 200); err != nil {
			return err
		}
		if err := text.Check("detail."+k, v, records.MaxRowTextChars); err != nil {
			return err
		}
	}
	return nil
}

// ParseDollars reads "$2,462.22", "2462.22" or "-5" as micro-dollars,
// exactly (no float arithmetic).
func ParseDollars(s string) (int64, error) {
	orig := s
	s = strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(s), "$", ""), ",", "")
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" {
		whole = "0"
	}
	if len(frac) > 6 || strings.Trim(whole, "0123456789") != "" || strings.Trim(frac, "0123456789") != "" || len(whole) > 12 {
		return 0, fmt.Errorf("amount %q is not a dollar amount", orig)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("amount %q is not a dollar amount", orig)
	}
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64)
	}
	v := w*1_000_000 + f
	if neg {
		v = -v
	}
	return v, nil
}
