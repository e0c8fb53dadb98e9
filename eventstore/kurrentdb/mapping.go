package kurrentdb

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/eventstore"
)

// toRevision maps an append expectation onto KurrentDB's.
func toRevision(ev eventstore.ExpectedVersion) esdb.ExpectedRevision {
	switch {
	case ev.IsNoStream():
		return esdb.NoStream{}
	case ev.IsStreamExists():
		return esdb.StreamExists{}
	}
	if v, ok := ev.ExactVersion(); ok {
		return esdb.Revision(v)
	}
	return esdb.Any{}
}

// isSystem reports whether a record in $all is KurrentDB's own (stream or
// event type starting with "$": stats, users, projections, links, stream
// metadata). The store neither returns nor counts them.
func isSystem(streamID, eventType string) bool {
	return strings.HasPrefix(streamID, "$") || strings.HasPrefix(eventType, "$")
}

// currentRevision reads the stream's actual revision out of the client's
// wrong-expected-version message ("... expecting '0' but got '3'", or
// "but got 'no_stream'"). ok is false when the message has another shape.
func currentRevision(msg string) (version uint64, exists, ok bool) {
	const marker = "but got '"
	i := strings.LastIndex(msg, marker)
	if i < 0 {
		return 0, false, false
	}
	rest := msg[i+len(marker):]
	j := strings.IndexByte(rest, '\'')
	if j < 0 {
		return 0, false, false
	}
	switch s := rest[:j]; s {
	case "no_stream":
		return 0, false, true
	default:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, false, false
		}
		return n, true, true
	}
}

// esdbCode returns the client's error code, if err carries one.
func esdbCode(err error) (esdb.ErrorCode, bool) {
	var e *esdb.Error
	if errors.As(err, &e) {
		return e.Code(), true
	}
	return 0, false
}

func isCode(err error, code esdb.ErrorCode) bool {
	c, ok := esdbCode(err)
	return ok && c == code
}

// isInvalidPosition reports whether the server refused a $all read because
// the start position is not the start of a record.
func isInvalidPosition(err error) bool {
	if err == nil {
		return false
	}
	return status.Code(err) == codes.InvalidArgument || strings.Contains(strings.ToLower(err.Error()), "invalid position")
}

// translate marks errors that mean "KurrentDB is not reachable right now"
// with domain.ErrUnavailable, so callers can answer 503 and retry.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, domain.ErrUnavailable) {
		return err
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded:
		return fmt.Errorf("%w: %w", domain.ErrUnavailable, err)
	}
	if c, ok := esdbCode(err); ok {
		switch c {
		case esdb.ErrorUnavailable, esdb.ErrorCodeConnectionClosed, esdb.ErrorCodeDeadlineExceeded, esdb.ErrorCodeNotLeader:
			return fmt.Errorf("%w: %w", domain.ErrUnavailable, err)
		}
	}
	return err
}

// userMetadata is the JSON stored as KurrentDB user metadata: the envelope's
// metadata plus the event's schema version.
type userMetadata struct {
	eventstore.Metadata
	SchemaVersion int `json:"schema_version"`
}

func encodeMetadata(md eventstore.Metadata, schemaVersion int) ([]byte, error) {
	b, err := json.Marshal(userMetadata{Metadata: md, SchemaVersion: max(schemaVersion, 1)})
	if err != nil {
		return nil, fmt.Errorf("encoding metadata: %w", err)
	}
	return b, nil
}

// decodeMetadata reads what encodeMetadata wrote; empty metadata is schema
// version 1 with no metadata.
func decodeMetadata(b []byte) (eventstore.Metadata, int, error) {
	if len(b) == 0 {
		return eventstore.Metadata{}, 1, nil
	}
	var um userMetadata
	if err := json.Unmarshal(b, &um); err != nil {
		return eventstore.Metadata{}, 0, fmt.Errorf("decoding metadata: %w", err)
	}
	return um.Metadata, max(um.SchemaVersion, 1), nil
}

// convert turns a recorded event into the envelope.
func convert(e *esdb.RecordedEvent) (eventstore.Event, error) {
	if e.Position.Commit == math.MaxUint64 {
		return eventstore.Event{}, fmt.Errorf("event %d of %s has no log position: the server is older than EventStoreDB 22.6", e.EventNumber, e.StreamID)
	}
	md, schema, err := decodeMetadata(e.UserMetadata)
	if err != nil {
		return eventstore.Event{}, fmt.Errorf("event %d of %s: %w", e.EventNumber, e.StreamID, err)
	}
	return eventstore.Event{
		ID:            e.EventID,
		StreamID:      e.StreamID,
		Type:          e.EventType,
		SchemaVersion: schema,
		Data:          json.RawMessage(e.Data),
		Metadata:      md,
		RecordedAt:    e.CreatedDate.UTC(),
		StreamVersion: e.EventNumber,
		Position:      e.Position.Commit,
	}, nil
}

// idMatch says how an append's event ids sit in a run of stored events.
type idMatch int

const (
	idsAbsent  idMatch = iota // none of the ids is there
	idsPresent                // all of them, consecutively and in order
	idsPartial                // some are there, or out of order
)

// matchIDs looks for ids as one consecutive run in stored (events in stream
// order). It returns where the first of them was found and how they match.
func matchIDs(stored, ids []uuid.UUID) (int, idMatch) {
	want := make(map[uuid.UUID]struct{}, len(ids))
	for _, id := range ids {
		want[id] = struct{}{}
	}
	first := -1
	for i, id := range stored {
		if _, ok := want[id]; ok {
			first = i
			break
		}
	}
	if first < 0 {
		return 0, idsAbsent
	}
	if first+len(ids) > len(stored) {
		return first, idsPartial
	}
	for i, id := range ids {
		if stored[first+i] != id {
			return first, idsPartial
		}
	}
	return first, idsPresent
}
