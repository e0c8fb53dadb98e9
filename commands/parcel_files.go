package commands

import (
	"context"
	"io"

	"github.com/arr-dev/arr/adapters/listfile"
	"github.com/arr-dev/arr/adapters/parcelfile"
	"github.com/arr-dev/arr/domain/records"
)

// ReadListMapping reads a list's column mapping (JSON), as
// `arr import list --mapping` and the account page's form take it.
func ReadListMapping(r io.Reader) (listfile.Mapping, error) { return listfile.ReadMapping(r) }

// ParcelFileWriter writes an export of a county's parcels in one format
// (adapters/parcelfile); the records service streams it to the client.
type ParcelFileWriter = parcelfile.Writer

// ParcelGeoPackage is an export written as a GeoPackage file.
type ParcelGeoPackage = parcelfile.GeoPackage

// ErrParcelFileTooLarge is a GeoPackage export past its size limit.
var ErrParcelFileTooLarge = parcelfile.ErrTooLarge

// NewParcelCSV begins a CSV export of the parcels h describes on w.
func NewParcelCSV(w io.Writer, h records.ExportHeader) (ParcelFileWriter, error) {
	return parcelfile.NewCSV(w, h)
}

// NewParcelFlatGeobuf begins a FlatGeobuf export of the parcels h
// describes on w.
func NewParcelFlatGeobuf(w io.Writer, h records.ExportHeader) (ParcelFileWriter, error) {
	return parcelfile.NewFlatGeobuf(w, h)
}

// NewParcelGeoPackage begins a GeoPackage export at path, of at most
// maxBytes.
func NewParcelGeoPackage(ctx context.Context, path string, h records.ExportHeader, maxBytes int64) (*ParcelGeoPackage, error) {
	return parcelfile.NewGeoPackage(ctx, path, h, maxBytes)
}

// ListMapping is a list's column mapping (adapters/listfile).
type ListMapping = listfile.Mapping
