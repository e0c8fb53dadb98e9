package export

import (
	"io"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/arr-dev/arr/eventstore"
)

// Row is one event as a Parquet row: the envelope in typed columns, the
// payload and the metadata as JSON columns (DuckDB reads them as its
// JSON type: data->>'$.model', json_extract(data, '$.payload.cost')).
type Row struct {
	// Position is the event's place in the log, from 1.
	Position int64 `parquet:"position,delta"`
	// EventID is the event's id (a UUID column).
	EventID [16]byte `parquet:"event_id,uuid"`
	// Stream is the stream the event belongs to.
	Stream string `parquet:"stream"`
	// StreamVersion is the event's 0-based index in its stream.
	StreamVersion int64 `parquet:"stream_version,delta"`
	// Type is the event type (docs/events.md describes each).
	Type string `parquet:"type,dict"`
	// SchemaVersion is the version Data is at.
	SchemaVersion int32 `parquet:"schema_version"`
	// RecordedAt is when the event was committed (UTC, microseconds).
	RecordedAt time.Time `parquet:"recorded_at,timestamp(microsecond)"`
	// Data is the payload, JSON as stored (or upcast).
	Data []byte `parquet:"data,json"`
	// Metadata is the event's metadata as JSON: correlation_id,
	// causation_id, actor and request_id, each when set.
	Metadata []byte `parquet:"metadata,json"`
}

// parquetEncoder writes rows with zstd, a row group every rowGroup rows.
// Column values are compressed into pages as they come; a row group's
// pages are held until it is complete, so memory is bounded by a row
// group's compressed size.
type parquetEncoder struct {
	w    *parquet.GenericWriter[Row]
	rows []Row
	meta []byte
}

func newParquet(w io.Writer, rowGroup int) *parquetEncoder {
	return &parquetEncoder{w: parquet.NewGenericWriter[Row](w,
		// zstd's fastest level: a smaller file than its default level
		// and 40 MB less memory (its encoders' history windows).
		parquet.Compression(&zstd.Codec{Level: zstd.SpeedFastest}),
		parquet.MaxRowsPerRowGroup(int64(rowGroup)),
		// min/max of JSON text say nothing and cost a copy per page.
		parquet.SkipPageBounds("data"), parquet.SkipPageBounds("metadata"),
		parquet.CreatedBy("arr events export", "", ""),
	)}
}

func (p *parquetEncoder) write(evs []eventstore.Event) error {
	if p.w == nil {
		return errClosed
	}
	p.rows = p.rows[:0]
	p.meta = p.meta[:0]
	for i := range evs {
		e := &evs[i]
		start := len(p.meta)
		p.meta = eventstore.AppendMetadataJSON(p.meta, e.Metadata)
		p.rows = append(p.rows, Row{
			Position: int64(e.Position), EventID: e.ID, Stream: e.StreamID, StreamVersion: int64(e.StreamVersion),
			Type: e.Type, SchemaVersion: int32(e.SchemaVersion), RecordedAt: e.RecordedAt, Data: e.Data,
			Metadata: p.meta[start:len(p.meta):len(p.meta)],
		})
	}
	_, err := p.w.Write(p.rows)
	return err
}

func (p *parquetEncoder) close() error {
	if p.w == nil {
		return errClosed
	}
	err := p.w.Close()
	p.w = nil
	return err
}
