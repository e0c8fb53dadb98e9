package recordsapi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/projections/parcels"
	"github.com/arr-dev/arr/readapi/httpx"
	"github.com/arr-dev/arr/readapi/ratelimit"
)

// exportRoute is the bulk export, as the OpenAPI document names it.
const exportRoute = "GET /api/v1/exports/parcels"

// The export's bounds, published in the OpenAPI document.
const (
	// exportTimeLimit is how long one export may take, from its request
	// to its last byte; past it the answer is cut off.
	exportTimeLimit = 10 * time.Minute
	// exportWriteStall is the longest one write of an export may wait
	// for the client to read.
	exportWriteStall = 30 * time.Second
	// exportMaxGPKGBytes bounds a GeoPackage's temporary file.
	exportMaxGPKGBytes = 1 << 30
	// exportKeyRecheck is how often, at most, a running export checks
	// that its key is still in force (between pages; always before its
	// first byte): a revoked key's export is stopped within it.
	exportKeyRecheck = 5 * time.Second
	// exportKeyCheckTimeout bounds one check of the key.
	exportKeyCheckTimeout = 5 * time.Second
)

// exportFormat is one format of the export: its file extension and media
// type.
type exportFormat struct{ ext, mediaType string }

// exportFormats are the formats, by the format parameter's value.
var exportFormats = map[string]exportFormat{
	"csv":  {"csv", "text/csv; charset=utf-8; header=present"},
	"fgb":  {"fgb", "application/flatgeobuf"},
	"gpkg": {"gpkg", "application/geopackage+sqlite3"},
}

// ExportFormats returns the values of the export's format parameter,
// sorted.
func ExportFormats() []string {
	out := slices.Collect(maps.Keys(exportFormats))
	slices.Sort(out)
	return out
}

// exportParcels is GET /api/v1/exports/parcels: every parcel of one county
// (those named by any of layers, if given) with the records of the layers
// naming it and the URL of each record's public source, as CSV,
// FlatGeobuf or GeoPackage, all from one snapshot of the read model. CSV
// and FlatGeobuf are streamed as they are read; a GeoPackage is written to
// a temporary file first, then sent with its length, and removed. At most
// one export per account and exportSlots per process run at once (429 with
// Retry-After otherwise). Never contact data.
func (s *server) exportParcels(c *gin.Context) error {
	q, f, err := s.exportRequest(c)
	if err != nil {
		return err
	}
	p, ok := httpx.PrincipalOf(c)
	if !ok {
		return domain.Forbidden("key_required", "an export needs a records API key")
	}
	leave, err := s.exports.enter(p)
	if err != nil {
		// Refused before any work: it counts against no quota or meter.
		ratelimit.MarkNotServed(c)
		return err
	}
	defer leave()
	if f.ext == "gpkg" {
		return s.exportGeoPackage(c, q, f)
	}
	sink := &streamSink{c: c, format: f, layers: q.Layers, key: keyWatch{c: c}}
	err = s.parcels.Export(c.Request.Context(), q, sink)
	if err == nil {
		err = sink.end()
	}
	if err != nil && sink.started {
		s.cutExport(c, err)
	}
	return err
}

// exportRequest reads county (required), format (required) and layers.
func (s *server) exportRequest(c *gin.Context) (parcels.ExportQuery, exportFormat, error) {
	q := parcels.ExportQuery{StatementTimeout: statementTimeouts[exportRoute]}
	if c.Query("county") == "" {
		return q, exportFormat{}, domain.Invalid("county_required", "county", "county is required: the 5-digit FIPS code of the county to export (24510 is Baltimore City); /api/v1/counties lists them")
	}
	county, err := countyParam(c)
	if err != nil {
		return q, exportFormat{}, err
	}
	if !s.knownCounty(county) {
		return q, exportFormat{}, domain.Invalid("unknown_county", "county", "no county has the FIPS code %s; /api/v1/counties lists them (24510 is Baltimore City)", county)
	}
	q.County = county
	v := c.Query("format")
	f, ok := exportFormats[v]
	if !ok {
		return q, exportFormat{}, domain.Invalid("invalid_format", "format", "format must be csv, fgb (FlatGeobuf) or gpkg (GeoPackage); got %q", v)
	}
	if q.Layers, err = layerKeys(c.Query("layers")); err != nil {
		return q, exportFormat{}, err
	}
	return q, f, nil
}

func (s *server) knownCounty(fips string) bool {
	for _, c := range s.gaz.Counties {
		if c.FIPS == fips {
			return true
		}
	}
	return false
}

// exportHeaders writes the status and headers of an export with header h:
// its media type, its file name, how many parcels it holds and when its
// snapshot was taken.
func exportHeaders(c *gin.Context, f exportFormat, layers []string, h records.ExportHeader, length int64) {
	name := "parcels-" + h.County
	if len(layers) > 0 {
		name += "-" + strings.Join(layers, "-")
	}
	name += "-" + h.At.Format("20060102") + "." + f.ext
	w := c.Writer.Header()
	w.Set("Content-Type", f.mediaType)
	w.Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Set("Cache-Control", "no-store")
	w.Set("X-Arr-Export-Parcels", strconv.FormatInt(h.Parcels, 10))
	w.Set("X-Arr-Export-Snapshot", h.At.Format(time.RFC3339))
	if length >= 0 {
		w.Set("Content-Length", strconv.FormatInt(length, 10))
	}
	c.Status(http.StatusOK)
	c.Writer.WriteHeaderNow()
}

// streamSink writes a streamed export (CSV, FlatGeobuf) to the response:
// the headers when the snapshot's header is read, then each page.
type streamSink struct {
	c       *gin.Context
	format  exportFormat
	layers  []string
	out     *stallWriter
	buf     *bufio.Writer
	w       commands.ParcelFileWriter
	key     keyWatch
	started bool
}

func (k *streamSink) Begin(h records.ExportHeader) (err error) {
	if err := k.key.check(true); err != nil {
		return err
	}
	exportHeaders(k.c, k.format, k.layers, h, -1)
	k.started = true
	k.out = newStallWriter(k.c)
	k.buf = bufio.NewWriterSize(k.out, 64<<10)
	if k.format.ext == "csv" {
		k.w, err = commands.NewParcelCSV(k.buf, h)
	} else {
		k.w, err = commands.NewParcelFlatGeobuf(k.buf, h)
	}
	return err
}

func (k *streamSink) Write(page []records.ExportParcel) error {
	if err := k.key.check(false); err != nil {
		return err
	}
	for i := range page {
		if err := k.w.Write(&page[i]); err != nil {
			return err
		}
	}
	return k.buf.Flush()
}

// end completes the file.
func (k *streamSink) end() error {
	if err := k.w.Close(); err != nil {
		return err
	}
	if err := k.buf.Flush(); err != nil {
		return fmt.Errorf("sending the export: %w", err)
	}
	k.out.done()
	return nil
}

// cutExport ends an export whose answer has begun: it is logged, and the
// connection is aborted, so that the client sees a truncated transfer
// rather than a file that looks complete.
func (s *server) cutExport(c *gin.Context, err error) {
	_ = c.Error(err)
	if s.d.Logger != nil {
		s.d.Logger.LogAttrs(c.Request.Context(), slog.LevelWarn, "parcel export cut off", slog.String("err", err.Error()),
			slog.String("request_id", c.GetString("request_id")))
	}
	panic(http.ErrAbortHandler)
}

// exportGeoPackage writes the export to a temporary GeoPackage (at most
// exportMaxGPKGBytes), then sends it with its length; the file is removed
// whatever happens, and one left by a process that died while it wrote
// it is removed by the next process's start or GeoPackage export
// (exportTemps).
func (s *server) exportGeoPackage(c *gin.Context, q parcels.ExportQuery, f exportFormat) (err error) {
	s.temps.sweep()
	tmp, err := s.temps.create()
	if err != nil {
		return err
	}
	defer tmp.release()
	path := tmp.path
	sink := &gpkgSink{c: c, path: path, key: keyWatch{c: c}}
	err = s.parcels.Export(c.Request.Context(), q, sink)
	if sink.w != nil {
		if cerr := sink.w.Close(); err == nil {
			err = cerr
		}
	}
	if errors.Is(err, commands.ErrParcelFileTooLarge) {
		return domain.Invalid("export_too_large", "format", "the GeoPackage of county %s would pass this server's limit of %d MiB; ask for format=fgb or format=csv, which are streamed without a file, or for fewer parcels with layers", q.County, exportMaxGPKGBytes>>20)
	}
	if err != nil {
		return err
	}
	file, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("opening the GeoPackage: %w", err)
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return fmt.Errorf("opening the GeoPackage: %w", err)
	}
	if err := sink.key.check(true); err != nil {
		return err
	}
	exportHeaders(c, f, q.Layers, sink.h, st.Size())
	out := newStallWriter(c)
	if _, err := io.Copy(out, file); err != nil {
		s.cutExport(c, fmt.Errorf("sending the GeoPackage: %w", err))
	}
	out.done()
	return nil
}

// gpkgSink writes an export into a GeoPackage file.
type gpkgSink struct {
	c    *gin.Context
	path string
	h    records.ExportHeader
	w    *commands.ParcelGeoPackage
	key  keyWatch
}

func (k *gpkgSink) Begin(h records.ExportHeader) (err error) {
	if err := k.key.check(true); err != nil {
		return err
	}
	k.h = h
	k.w, err = commands.NewParcelGeoPackage(k.c.Request.Context(), k.path, h, exportMaxGPKGBytes)
	return err
}

func (k *gpkgSink) Write(page []records.ExportParcel) error {
	if err := k.key.check(false); err != nil {
		return err
	}
	for i := range page {
		if err := k.w.Write(&page[i]); err != nil {
			return err
		}
	}
	return nil
}

// stallWriter writes an export's bytes to the response, each write under
// a write deadline of at most exportWriteStall from now (never past the
// request's own deadline), and flushes them: a client that stops reading
// fails the write after exportWriteStall, however long the export.
type stallWriter struct {
	c  *gin.Context
	rc *http.ResponseController
}

func newStallWriter(c *gin.Context) *stallWriter {
	return &stallWriter{c: c, rc: http.NewResponseController(c.Writer)}
}

func (w *stallWriter) Write(b []byte) (int, error) {
	d := time.Now().Add(exportWriteStall)
	if end, ok := w.c.Request.Context().Deadline(); ok && end.Before(d) {
		d = end
	}
	_ = w.rc.SetWriteDeadline(d) // a writer without a connection (a test recorder) has none
	n, err := w.c.Writer.Write(b)
	if err != nil {
		return n, err
	}
	return n, w.rc.Flush()
}

// done lifts the write deadline of an export written whole, so that a
// later request on the kept-alive connection is not cut by it.
func (w *stallWriter) done() { _ = w.rc.SetWriteDeadline(time.Time{}) }

// keyWatch re-checks a running export's key (httpx.Reauthenticate, the
// identity read model KeyAuth admitted it through): before its first
// byte, and between pages at most every exportKeyRecheck, so an export
// admitted before its key was revoked is stopped (401 before its first
// byte, cut off after it) instead of sent whole.
type keyWatch struct {
	c    *gin.Context
	next time.Time
}

// check checks the key if exportKeyRecheck has passed since the last
// check, or now if force.
func (w *keyWatch) check(force bool) error {
	now := time.Now()
	if !force && now.Before(w.next) {
		return nil
	}
	w.next = now.Add(exportKeyRecheck)
	ctx, cancel := context.WithTimeout(w.c.Request.Context(), exportKeyCheckTimeout)
	defer cancel()
	if err := httpx.Reauthenticate(ctx, w.c); err != nil {
		return fmt.Errorf("the export's key, checked again: %w", err)
	}
	return nil
}
