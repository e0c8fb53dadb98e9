package parcelfile

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/flatgeobuf/flatgeobuf/src/go/flattypes"
	fgbwriter "github.com/flatgeobuf/flatgeobuf/src/go/writer"
	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/arr-dev/arr/domain/records"
)

// FlatGeobuf writes an export as a FlatGeobuf file (flatgeobuf.org, format
// version 3) as it goes: the magic bytes and the header (layer name
// parcels, Point geometries in EPSG:4326, the columns of Columns, the
// feature count of the header), then one size-prefixed feature per parcel.
// It has no spatial index (index_node_size 0), which the format allows
// for a file written in one pass; a parcel without coordinates is a
// feature without geometry. Dates are String columns (YYYY-MM-DD), times
// DateTime (RFC 3339, UTC).
type FlatGeobuf struct {
	w     io.Writer
	cols  []Column
	b     *flatbuffers.Builder
	props []byte
}

// fgbMagic is FlatGeobuf's magic bytes, format version 3.0.
var fgbMagic = []byte{0x66, 0x67, 0x62, 0x03, 0x66, 0x67, 0x62, 0x00}

// NewFlatGeobuf writes the magic bytes and the header of an export with
// header h to w.
func NewFlatGeobuf(w io.Writer, h records.ExportHeader) (*FlatGeobuf, error) {
	f := &FlatGeobuf{w: w, cols: Columns(h), b: flatbuffers.NewBuilder(4096)}
	cols := make([]*fgbwriter.Column, len(f.cols))
	for i, c := range f.cols {
		cols[i] = fgbwriter.NewColumn(f.b).SetName(c.Name).SetType(fgbType(c.Kind)).SetNullable(true)
	}
	hdr := fgbwriter.NewHeader(f.b).SetName("parcels").SetGeometryType(flattypes.GeometryTypePoint).
		SetColumns(cols).SetFeaturesCount(uint64(max(0, h.Parcels))).SetIndexNodeSize(0).
		SetCrs(fgbwriter.NewCrs(f.b).SetOrg("EPSG").SetCode(4326)).
		SetTitle("Parcels of county " + h.County).
		SetDescription("arr records export of county " + h.County + " at " + h.At.Format(rfc3339))
	f.b.FinishSizePrefixed(hdr.Build())
	if _, err := w.Write(fgbMagic); err != nil {
		return nil, fmt.Errorf("flatgeobuf magic: %w", err)
	}
	if _, err := w.Write(f.b.FinishedBytes()); err != nil {
		return nil, fmt.Errorf("flatgeobuf header: %w", err)
	}
	return f, nil
}

func fgbType(k Kind) flattypes.ColumnType {
	switch k {
	case Real:
		return flattypes.ColumnTypeDouble
	case Bool:
		return flattypes.ColumnTypeBool
	case DateTime:
		return flattypes.ColumnTypeDateTime
	}
	return flattypes.ColumnTypeString
}

// Write writes one parcel's feature.
func (f *FlatGeobuf) Write(p *records.ExportParcel) error {
	f.props = f.props[:0]
	for i, c := range f.cols {
		v, ok := c.value(p)
		if !ok {
			continue // a column that is not there is null
		}
		f.props = binary.LittleEndian.AppendUint16(f.props, uint16(i))
		switch c.Kind {
		case Bool:
			b := byte(0)
			if v.b {
				b = 1
			}
			f.props = append(f.props, b)
		case Real:
			f.props = binary.LittleEndian.AppendUint64(f.props, math.Float64bits(v.f))
		case DateTime:
			f.props = appendFGBString(f.props, v.t.UTC().Format(rfc3339))
		default:
			f.props = appendFGBString(f.props, v.s)
		}
	}
	b := f.b
	b.Reset()
	var geom flatbuffers.UOffsetT
	if p.Placed {
		flattypes.GeometryStartXyVector(b, 2)
		b.PrependFloat64(p.Lat)
		b.PrependFloat64(p.Lon)
		xy := b.EndVector(2)
		flattypes.GeometryStart(b)
		flattypes.GeometryAddXy(b, xy)
		geom = flattypes.GeometryEnd(b)
	}
	props := b.CreateByteVector(f.props)
	flattypes.FeatureStart(b)
	if p.Placed {
		flattypes.FeatureAddGeometry(b, geom)
	}
	flattypes.FeatureAddProperties(b, props)
	b.FinishSizePrefixed(flattypes.FeatureEnd(b))
	if _, err := f.w.Write(b.FinishedBytes()); err != nil {
		return fmt.Errorf("flatgeobuf feature %s: %w", p.APN, err)
	}
	return nil
}

// appendFGBString appends a string property: its length in bytes
// (uint32, little-endian), then its UTF-8 bytes.
func appendFGBString(buf []byte, s string) []byte {
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(s)))
	return append(buf, s...)
}

// Close completes the file: nothing follows the last feature.
func (f *FlatGeobuf) Close() error { return nil }
