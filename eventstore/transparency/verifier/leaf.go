package verifier

import (
	"encoding/binary"
	"fmt"
	"math"
)

// LeafFormatVersion is the first byte of every leaf LeafData encodes.
const LeafFormatVersion = 1

// Event is what a leaf of arr's log commits to: one event as the log
// stores it. An auditor fills it from an event export.
type Event struct {
	// Position is the event's place in the whole log.
	Position uint64
	// ID is the event's UUID, its 16 bytes in RFC 9562 order.
	ID [16]byte
	// StreamID names the stream the event belongs to.
	StreamID string
	// StreamVersion is the event's 0-based index in its stream.
	StreamVersion uint64
	// Type is the event type, such as "KeyIssued".
	Type string
	// SchemaVersion is the version of the event type's payload schema.
	SchemaVersion int
	// Data is the event's JSON payload, byte for byte as the log returns it.
	Data []byte
	// Metadata is the event's metadata JSON, byte for byte as the log
	// returns it.
	Metadata []byte
	// RecordedAt is when the log recorded the event, in microseconds since
	// 1970-01-01T00:00:00Z.
	RecordedAt int64
}

// LeafData is the canonical encoding of an event as a leaf (the package
// comment gives the layout). It fails only for a schema version outside
// 0..2^32-1 or a field longer than 2^32-1 bytes, which arr never stores.
func LeafData(e Event) ([]byte, error) {
	size := 1 + 8 + 16 + 4 + len(e.StreamID) + 8 + 4 + len(e.Type) + 4 + 4 + len(e.Data) + 4 + len(e.Metadata) + 8
	b, err := AppendLeafData(make([]byte, 0, size), e)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// AppendLeafData appends LeafData(e) to b and returns the extended slice,
// so that a caller hashing many events can reuse one buffer. It fails as
// LeafData does, returning b unchanged.
func AppendLeafData(b []byte, e Event) ([]byte, error) {
	if e.SchemaVersion < 0 || uint64(e.SchemaVersion) > math.MaxUint32 {
		return b, fmt.Errorf("%w: schema version %d does not fit a uint32", ErrInvalid, e.SchemaVersion)
	}
	for _, f := range [...]struct {
		name string
		n    int
	}{{"stream id", len(e.StreamID)}, {"type", len(e.Type)}, {"data", len(e.Data)}, {"metadata", len(e.Metadata)}} {
		if uint64(f.n) > math.MaxUint32 {
			return b, fmt.Errorf("%w: event %s is %d bytes, longer than a uint32 length", ErrInvalid, f.name, f.n)
		}
	}
	b = append(b, LeafFormatVersion)
	b = binary.BigEndian.AppendUint64(b, e.Position)
	b = append(b, e.ID[:]...)
	b = appendField(b, e.StreamID)
	b = binary.BigEndian.AppendUint64(b, e.StreamVersion)
	b = appendField(b, e.Type)
	b = binary.BigEndian.AppendUint32(b, uint32(e.SchemaVersion))
	b = appendField(b, e.Data)
	b = appendField(b, e.Metadata)
	b = binary.BigEndian.AppendUint64(b, uint64(e.RecordedAt))
	return b, nil
}

// EventLeafHash is the leaf hash of an event: LeafHash(LeafData(e)).
func EventLeafHash(e Event) ([HashSize]byte, error) {
	data, err := LeafData(e)
	if err != nil {
		return [HashSize]byte{}, err
	}
	return LeafHash(data), nil
}

// appendField appends a uint32 length and the bytes of field.
func appendField[T ~string | ~[]byte](b []byte, field T) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(field)))
	return append(b, field...)
}
