package recordsapi

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/cql2"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/projections/parcels"
	"github.com/arr-dev/arr/readapi/httpx"
	"github.com/arr-dev/arr/readapi/recordsapi/cursor"
)

// itemsParams are the items route's own parameters; each queryable of the
// collection is one too (equality).
func itemsParams() []string {
	return []string{"f", "limit", "bbox", "datetime", "filter", "filter-lang", "cursor"}
}

// itemsRequest is one items request, read.
type itemsRequest struct {
	col        parcels.Collection
	fq         parcels.FeatureQuery
	query      cursor.Query
	bboxRaw    string
	cursorText string
}

// readItems reads the items request of c over col.
func readItems(c *gin.Context, col parcels.Collection) (itemsRequest, error) {
	r := itemsRequest{col: col, fq: parcels.FeatureQuery{Collection: col}}
	own := itemsParams()
	names := slices.Clone(own)
	for _, q := range col.Queryables {
		names = append(names, q.Name)
	}
	if err := httpx.CheckQuery(c.Request.URL.RawQuery, names...); err != nil {
		return r, err
	}
	if err := format(c, "json", "geojson"); err != nil {
		return r, err
	}
	var err error
	// A limit over the maximum is read as the maximum, not refused (OGC
	// API – Features Part 1, 7.15.3).
	if r.fq.Limit, err = intParam(c, "limit", defaultLimit, 1, math.MaxInt32); err != nil {
		return r, err
	}
	r.fq.Limit = min(r.fq.Limit, maxLimit)
	if v, ok := c.GetQuery("bbox"); ok {
		b, err := records.ParseOGCBBox(v)
		if err != nil {
			return r, err
		}
		r.fq.BBox, r.query.BBox = &b, b
	}
	if v, ok := c.GetQuery("datetime"); ok {
		if !col.Temporal() {
			return r, domain.Invalid("datetime_not_temporal", "datetime", "collection %s has no dates; datetime selects the records of a layer collection (vacant, tax_sale, ...) by their date", col.ID)
		}
		if r.fq.From, r.fq.To, err = parseDatetime(v); err != nil {
			return r, err
		}
	}
	if r.fq.Filter, err = readFilter(c, col); err != nil {
		return r, err
	}
	// The cursor is bound to everything above, as written.
	var bound []string
	for _, k := range names[1:] {
		if k != "limit" && k != "cursor" {
			if v, ok := c.GetQuery(k); ok {
				bound = append(bound, k+"="+v)
			}
		}
	}
	r.query.Search = "ogc " + col.ID + "\x00" + strings.Join(bound, "\x00")
	r.cursorText = c.Query("cursor")
	return r, nil
}

// FilterLangs are the filter-lang values the items route reads, the
// default first: cql2-text, and cql-text, the name of CQL2's drafts, which
// GDAL's OAPIF driver (3.6) sends and looks for in the API definition
// before it sends a filter at all; both are read as CQL2 text.
func FilterLangs() []string { return []string{"cql2-text", "cql-text"} }

// readFilter reads filter (cql2-text; filter-lang cql-text, the drafts'
// name GDAL's OAPIF driver sends, is read the same) and the queryables
// given as parameters (each an equality), ANDed together.
func readFilter(c *gin.Context, col parcels.Collection) (cql2.Expr, error) {
	var args []cql2.Expr
	lang, hasLang := c.GetQuery("filter-lang")
	text, hasFilter := c.GetQuery("filter")
	if hasLang && !slices.Contains(FilterLangs(), lang) {
		return nil, domain.Invalid("invalid_filter_lang", "filter-lang", "filter-lang must be cql2-text (or left out); got %q", lang)
	}
	if hasLang && !hasFilter {
		return nil, domain.Invalid("filter_lang_without_filter", "filter-lang", "filter-lang goes with filter=")
	}
	if hasFilter {
		e, err := cql2.Parse(text, cql2.DefaultLimits())
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	for _, q := range col.Queryables {
		v, ok := c.GetQuery(q.Name)
		if !ok {
			continue
		}
		lit, err := literal(q, v)
		if err != nil {
			return nil, err
		}
		args = append(args, cql2.Compare{Op: "=", Left: cql2.Property{Name: q.Name, Pos: 1}, Right: lit})
	}
	switch len(args) {
	case 0:
		return nil, nil
	case 1:
		return args[0], nil
	}
	return cql2.And{Args: args}, nil
}

// literal reads a queryable parameter's value as the queryable's type.
// Its text is checked first as a filter's quoted string is
// (cql2.TextFault: valid UTF-8, no NUL), whatever the type, so no value
// reaches the database as text it cannot bind.
func literal(q parcels.Queryable, v string) (cql2.Scalar, error) {
	if pos, fault := cql2.TextFault(v); fault != "" {
		return nil, domain.Invalid("invalid_"+q.Name, q.Name, "%s, at character %d: %s; a queryable's value is UTF-8 text without NUL characters", q.Name, pos, fault)
	}
	bad := func(want string) error {
		return domain.Invalid("invalid_"+q.Name, q.Name, "%s must be %s; got %q", q.Name, want, v)
	}
	switch {
	case q.Format == "date":
		d, err := time.Parse(time.DateOnly, v)
		if err != nil || !cql2.InYearRange(d) {
			return nil, bad(fmt.Sprintf("a date YYYY-MM-DD of the years %04d to %04d", cql2.MinYear, cql2.MaxYear))
		}
		return cql2.Date{V: d}, nil
	case q.Format == "date-time":
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil || !cql2.InYearRange(t) || !cql2.InYearRange(t.UTC()) {
			return nil, bad(fmt.Sprintf("an RFC 3339 instant of the years %04d to %04d (in UTC too)", cql2.MinYear, cql2.MaxYear))
		}
		return cql2.Timestamp{V: t.UTC()}, nil
	case q.Type == "boolean":
		if v != "true" && v != "false" {
			return nil, bad("true or false")
		}
		return cql2.Bool{V: v == "true"}, nil
	case q.Type == "number" || q.Type == "integer":
		f, ok := records.ParseDecimal(v)
		if !ok {
			return nil, bad("a decimal number")
		}
		return cql2.Number{V: f, Text: v}, nil
	}
	return cql2.String{V: v}, nil
}

// parseDatetime reads datetime: an instant, or an interval a/b whose ends
// are instants, ".." or empty (open). An instant is a date YYYY-MM-DD or an
// RFC 3339 date-time; records are dated by day, compared in UTC.
func parseDatetime(v string) (from, to *time.Time, err error) {
	one := func(s string) (*time.Time, error) {
		if s == ".." || s == "" {
			return nil, nil
		}
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			if t, err = time.Parse(time.RFC3339Nano, s); err != nil {
				return nil, domain.Invalid("invalid_datetime", "datetime", "datetime %q: %q is neither a date YYYY-MM-DD nor an RFC 3339 date-time (2019-10-01T00:00:00Z); an interval is start/end, either end .. when open", v, s)
			}
		}
		if !cql2.InYearRange(t) || !cql2.InYearRange(t.UTC()) {
			return nil, domain.Invalid("invalid_datetime", "datetime", "datetime %q: %q is out of range: instants are of the years %04d to %04d, in UTC as well as as written", v, s, cql2.MinYear, cql2.MaxYear)
		}
		t = t.UTC()
		return &t, nil
	}
	a, b, interval := strings.Cut(v, "/")
	if !interval {
		if v == "" || v == ".." {
			return nil, nil, domain.Invalid("invalid_datetime", "datetime", "datetime needs an instant or an interval start/end")
		}
		t, err := one(v)
		return t, t, err
	}
	if from, err = one(a); err != nil {
		return nil, nil, err
	}
	if to, err = one(b); err != nil {
		return nil, nil, err
	}
	if from != nil && to != nil && to.Before(*from) {
		return nil, nil, domain.Invalid("invalid_datetime", "datetime", "datetime %q ends before it starts", v)
	}
	return from, to, nil
}

// cursor directions: a cursor continues after its feature or before it.
const (
	dirAfter  = "\x00after"
	dirBefore = "\x00before"
)

func (r itemsRequest) dir(d string) cursor.Query { q := r.query; q.Search += d; return q }

// scans reports whether r's query may scan more than its page: it has a
// filter, a datetime, or a bbox wider or taller than the records search
// takes (records.MaxBBoxDegrees; the OGC bbox is not bounded, an OGC
// client sends the box of its view). Such a query is bounded by its
// limit and statement timeout, and queries in one of the filtered turns.
func (r itemsRequest) scans() bool {
	if r.fq.Filter != nil || r.fq.From != nil || r.fq.To != nil {
		return true
	}
	if r.fq.BBox == nil {
		return false
	}
	w, h := r.fq.BBox.Span()
	return w > records.MaxBBoxDegrees || h > records.MaxBBoxDegrees
}

// items is GET /api/v1/ogc/collections/{collectionId}/items.
func (o *ogcAPI) items(c *gin.Context) error {
	col, err := o.find(c)
	if err != nil {
		return err
	}
	r, err := readItems(c, col)
	if err != nil {
		return err
	}
	if r.cursorText != "" {
		if k, err := o.s.cursors.Decode(r.dir(dirAfter), r.cursorText); err == nil {
			r.fq.After = k
		} else if k, err2 := o.s.cursors.Decode(r.dir(dirBefore), r.cursorText); err2 == nil {
			r.fq.Before = k
		} else {
			return err
		}
	}
	limit := r.fq.Limit
	r.fq.Limit++
	ctx := c.Request.Context()
	var got []parcels.Feature
	query := func() (err error) { got, err = o.features.Features(ctx, r.fq); return err }
	if r.scans() {
		// A filter, a datetime or a wide bbox may scan: it queries in a
		// turn.
		err = o.filtered.do(ctx, query)
	} else {
		err = query()
	}
	if err != nil {
		return err
	}
	more := len(got) > limit
	matched := o.matched(ctx, r, col, len(got), more)
	if more {
		if r.fq.Before != nil {
			got = got[1:]
		} else {
			got = got[:limit]
		}
	}
	var next, prev string
	if len(got) > 0 {
		if more || r.fq.Before != nil {
			next = o.s.cursors.Encode(r.dir(dirAfter), got[len(got)-1].ParcelKey)
		}
		if r.fq.After != nil || (r.fq.Before != nil && more) {
			prev = o.s.cursors.Encode(r.dir(dirBefore), got[0].ParcelKey)
		}
	}
	c.Data(http.StatusOK, geoJSON, renderItems(c, o.base, col, got, matched, next, prev))
	return nil
}

// matched is the numberMatched of an unfiltered page of n features (more:
// the collection has more after or before them), -1 to leave it out. A
// page that is the whole collection says its own count. Any other says
// the count of the extents' cache (made once per load, never per
// request) only when it is of the read model's version now and more than
// the page: right after a load the cache still holds the count of before
// it, and a page is never told the collection is smaller than itself.
// numberMatched is optional (OGC API – Features Part 1, 7.15.4).
func (o *ogcAPI) matched(ctx context.Context, r itemsRequest, col parcels.Collection, n int, more bool) int64 {
	if r.fq.Filter != nil || r.fq.BBox != nil || r.fq.From != nil || r.fq.To != nil {
		return -1
	}
	if !more && r.fq.After == nil && r.fq.Before == nil {
		return int64(n)
	}
	ex, ok := o.extents.current(ctx)
	if m := ex[col.ID].Features; ok && m > int64(n) {
		return m
	}
	return -1
}

// item is GET /api/v1/ogc/collections/{collectionId}/items/{featureId}.
func (o *ogcAPI) item(c *gin.Context) error {
	col, err := o.find(c)
	if err != nil {
		return err
	}
	k, err := featureKey(col.ID, c.Param("featureId"))
	if err != nil {
		return err
	}
	got, err := o.features.Features(c.Request.Context(), parcels.FeatureQuery{Collection: col, Key: &k, Limit: 1})
	if err != nil {
		return err
	}
	if len(got) == 0 {
		return domain.NotFound("feature_not_found", "collection %s has no feature %q", col.ID, c.Param("featureId"))
	}
	b := o.base + "/collections/" + col.ID
	buf := appendFeature(nil, got[0])
	buf = buf[:len(buf)-1]
	buf = append(buf, `,"links":`...)
	buf, _ = appendJSON(buf, []link{{b + "/items/" + featureID(got[0].ParcelKey), "self", geoJSON, ""}, {b, "collection", "application/json", col.Title}})
	c.Data(http.StatusOK, geoJSON, append(buf, '}'))
	return nil
}

// renderItems writes a page as a GeoJSON FeatureCollection with its links
// (on base, the landing page's URL).
func renderItems(c *gin.Context, base string, col parcels.Collection, got []parcels.Feature, matched int64, next, prev string) []byte {
	buf := make([]byte, 0, 256+len(got)*768)
	buf = append(buf, `{"type":"FeatureCollection","features":[`...)
	for i, f := range got {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendFeature(buf, f)
	}
	buf = append(buf, ']')
	if matched >= 0 {
		buf = append(buf, `,"numberMatched":`...)
		buf = strconv.AppendInt(buf, matched, 10)
	}
	buf = append(buf, `,"numberReturned":`...)
	buf = strconv.AppendInt(buf, int64(len(got)), 10)
	buf = append(buf, `,"timeStamp":`...)
	buf = appendJSONString(buf, time.Now().UTC().Format(time.RFC3339))
	self := base + "/collections/" + col.ID + "/items"
	page := func(cur string) string {
		q := c.Request.URL.Query()
		q.Del("cursor")
		if cur != "" {
			q.Set("cursor", cur)
		}
		if len(q) == 0 {
			return self
		}
		return self + "?" + q.Encode()
	}
	links := []link{{page(c.Query("cursor")), "self", geoJSON, "this page"}, {base + "/collections/" + col.ID, "collection", "application/json", col.Title}}
	if next != "" {
		links = append(links, link{page(next), "next", geoJSON, "the next page"})
	}
	if prev != "" {
		links = append(links, link{page(prev), "prev", geoJSON, "the previous page"})
	}
	buf = append(buf, `,"links":`...)
	buf, _ = appendJSON(buf, links)
	return append(buf, '}')
}

// appendFeature writes one feature; its properties come rendered from
// the read model.
func appendFeature(buf []byte, f parcels.Feature) []byte {
	buf = append(buf, `{"type":"Feature","id":`...)
	buf = appendJSONString(buf, featureID(f.ParcelKey))
	if f.Point == nil {
		buf = append(buf, `,"geometry":null`...)
	} else {
		buf = append(buf, `,"geometry":{"type":"Point","coordinates":[`...)
		buf = strconv.AppendFloat(buf, f.Point[0], 'f', -1, 64)
		buf = append(buf, ',')
		buf = strconv.AppendFloat(buf, f.Point[1], 'f', -1, 64)
		buf = append(buf, "]}"...)
	}
	buf = append(buf, `,"properties":`...)
	buf = append(buf, f.Properties...)
	return append(buf, '}')
}
