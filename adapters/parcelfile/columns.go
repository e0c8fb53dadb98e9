package parcelfile

import (
	"strings"
	"time"

	"github.com/arr-dev/arr/domain/records"
)

// Kind is the type of a column.
type Kind int

// The kinds of columns.
const (
	Text Kind = iota
	Real
	Bool
	Date     // YYYY-MM-DD
	DateTime // UTC, to the second
)

// Column is one column of an export: its name, kind, and how a parcel's
// value is read (ok false: null).
type Column struct {
	Name  string
	Kind  Kind
	value func(p *records.ExportParcel) (cell, bool)
}

// cell is one value: s of Text and Date, t of DateTime, f of Real, b of
// Bool.
type cell struct {
	s string
	t time.Time
	f float64
	b bool
}

// Columns are the columns of an export with header h, after the
// geometry: county, apn, address, source_url (where the parcel's record
// came from), layers (the keys of the layers naming it, comma-separated),
// score (its motivation score, h.Score), then for each layer L of h: L (whether it names the parcel),
// L_source_date, L_record_date, L_first_seen, L_last_seen, L_last_crawl
// and L_source_url (the URL of the public source of the layer's record).
func Columns(h records.ExportHeader) []Column {
	text := func(f func(p *records.ExportParcel) string) func(p *records.ExportParcel) (cell, bool) {
		return func(p *records.ExportParcel) (cell, bool) { return cell{s: f(p)}, true }
	}
	cols := []Column{
		{"county", Text, text(func(p *records.ExportParcel) string { return p.County })},
		{"apn", Text, text(func(p *records.ExportParcel) string { return p.APN })},
		{"address", Text, text(func(p *records.ExportParcel) string { return p.Address })},
		{"source_url", Text, text(func(p *records.ExportParcel) string { return p.SourceURL })},
		{"layers", Text, text(func(p *records.ExportParcel) string {
			keys := make([]string, len(p.Signals))
			for i, s := range p.Signals {
				keys[i] = s.Layer
			}
			return strings.Join(keys, ",")
		})},
		{"score", Real, func(p *records.ExportParcel) (cell, bool) { return cell{f: h.Score(p).Total}, true }},
	}
	for _, l := range h.Layers {
		cols = append(cols, layerColumns(l)...)
	}
	return cols
}

// layerColumns are the columns of layer l.
func layerColumns(l string) []Column {
	sig := func(f func(s records.ExportSignal) (cell, bool)) func(p *records.ExportParcel) (cell, bool) {
		return func(p *records.ExportParcel) (cell, bool) {
			s, ok := p.Signal(l)
			if !ok {
				return cell{}, false
			}
			return f(s)
		}
	}
	return []Column{
		{l, Bool, func(p *records.ExportParcel) (cell, bool) {
			_, ok := p.Signal(l)
			return cell{b: ok}, true
		}},
		{l + "_source_date", Date, sig(func(s records.ExportSignal) (cell, bool) { return cell{s: s.SourceDate}, true })},
		{l + "_record_date", Date, sig(func(s records.ExportSignal) (cell, bool) { return cell{s: s.RecordDate}, s.RecordDate != "" })},
		{l + "_first_seen", DateTime, sig(func(s records.ExportSignal) (cell, bool) { return cell{t: s.FirstSeen}, true })},
		{l + "_last_seen", DateTime, sig(func(s records.ExportSignal) (cell, bool) { return cell{t: s.LastSeen}, true })},
		{l + "_last_crawl", DateTime, sig(func(s records.ExportSignal) (cell, bool) { return cell{t: s.LastCrawl}, true })},
		{l + "_source_url", Text, sig(func(s records.ExportSignal) (cell, bool) { return cell{s: s.SourceURL}, true })},
	}
}

// rfc3339 is how CSV and FlatGeobuf write a DateTime.
const rfc3339 = "2006-01-02T15:04:05Z"

// Writer writes one export: Write for each parcel, in order, then Close,
// which completes the file. A writer whose Write failed is done for;
// Close after it releases what it holds.
type Writer interface {
	Write(p *records.ExportParcel) error
	Close() error
}
