package postgres

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// copyEvents is the COPY statement whose rows copyReader encodes.
const copyEvents = `COPY events (position, event_id, stream_id, stream_version, event_type, schema_version, data,
	correlation_id, causation_id, actor, request_id, recorded_at, leaf_hash) FROM STDIN (FORMAT binary)`

// copy writes the batch with COPY in PostgreSQL's binary format, encoded
// here rather than through pgx's per-value encode plans: bulk appends spend
// their client time in encoding, and every column's wire form is fixed.
// Each row's leaf hash is computed (and the tree extended) as the row is
// encoded, while the server works on the rows before it.
func (c *columns) copy(ctx context.Context, conn *pgconn.PgConn) error {
	tag, err := conn.CopyFrom(ctx, &copyReader{c: c, recorded: pgMicros(c.recorded)}, copyEvents)
	if err != nil {
		return err
	}
	if n := tag.RowsAffected(); n != int64(c.n) {
		return fmt.Errorf("copy wrote %d of %d events", n, c.n)
	}
	return nil
}

// pgEpoch is PostgreSQL's timestamp epoch.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()

// pgMicros is t as a binary timestamptz: microseconds since 2000-01-01 UTC.
func pgMicros(t time.Time) int64 { return t.UnixMicro() - pgEpoch }

// copyReader encodes the rows of a columns batch in COPY's binary format,
// a buffer's worth at a time, as pgconn reads it.
type copyReader struct {
	c        *columns
	recorded int64
	row      int // next row to encode
	buf      []byte
	off      int
	done     bool
	err      error
}

// copyHeader is the binary COPY signature, flags and header extension length.
var copyHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

const copyChunk = 256 << 10

func (r *copyReader) Read(p []byte) (int, error) {
	if r.off == len(r.buf) {
		if r.err != nil {
			return 0, r.err
		}
		if r.done {
			return 0, io.EOF
		}
		r.fill()
		if r.off == len(r.buf) && r.err != nil {
			return 0, r.err
		}
	}
	n := copy(p, r.buf[r.off:])
	r.off += n
	return n, nil
}

// fill encodes rows into the buffer until it holds about copyChunk bytes,
// then the trailer after the last row.
func (r *copyReader) fill() {
	b := r.buf[:0]
	if r.row == 0 {
		b = append(b, copyHeader...)
	}
	c := r.c
	for ; r.row < c.n && len(b) < copyChunk; r.row++ {
		i := r.row
		if err := c.leaf(i); err != nil {
			r.err = err
			break
		}
		b = binary.BigEndian.AppendUint16(b, 13)
		b = appendInt8(b, c.positions[i])
		b = binary.BigEndian.AppendUint32(b, 16)
		b = append(b, c.ids[i].Bytes[:]...)
		b = appendBytes(b, c.streams[i])
		b = appendInt8(b, c.versions[i])
		b = appendBytes(b, c.types[i])
		b = binary.BigEndian.AppendUint32(b, 4)
		b = binary.BigEndian.AppendUint32(b, uint32(c.schemas[i]))
		b = appendBytes(b, c.data[i]) // json's binary form is its text
		b = appendText(b, c.corr[i])
		b = appendText(b, c.cause[i])
		b = appendText(b, c.actor[i])
		b = appendText(b, c.request[i])
		b = appendInt8(b, r.recorded)
		b = binary.BigEndian.AppendUint32(b, hashSize)
		b = append(b, c.leaves[i*hashSize:(i+1)*hashSize]...)
	}
	if r.row == c.n && r.err == nil {
		b = binary.BigEndian.AppendUint16(b, 0xffff) // trailer: -1
		r.done = true
	}
	r.buf, r.off = b, 0
}

func appendInt8(b []byte, v int64) []byte {
	b = binary.BigEndian.AppendUint32(b, 8)
	return binary.BigEndian.AppendUint64(b, uint64(v))
}

func appendBytes(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func appendText(b []byte, t pgtype.Text) []byte {
	if !t.Valid {
		return binary.BigEndian.AppendUint32(b, 0xffffffff) // NULL: length -1
	}
	return appendBytes(b, t.String)
}
