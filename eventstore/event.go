package eventstore

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
)

// Metadata travels with every event: who caused it and in answer to what.
type Metadata struct {
	CorrelationID string `json:"correlation_id,omitempty"`
	CausationID   string `json:"causation_id,omitempty"`
	Actor         string `json:"actor,omitempty"`
	RequestID     string `json:"request_id,omitempty"`
}

// NewEvent is an event about to be appended. ID makes the append idempotent:
// appending the same ids again returns the first result and writes nothing.
type NewEvent struct {
	ID            uuid.UUID
	Type          string
	SchemaVersion int
	Data          json.RawMessage
	Metadata      Metadata
}

// Event is a committed event as read back from the log.
type Event struct {
	ID            uuid.UUID       `json:"id"`
	StreamID      string          `json:"stream_id"`
	Type          string          `json:"type"`
	SchemaVersion int             `json:"schema_version"`
	Data          json.RawMessage `json:"data"`
	Metadata      Metadata        `json:"metadata"`
	RecordedAt    time.Time       `json:"recorded_at"`
	// StreamVersion is the event's 0-based index in its stream.
	StreamVersion uint64 `json:"stream_version"`
	// Position is the event's place in the whole log: strictly increasing in
	// commit order, starting at 1.
	Position uint64 `json:"position"`
}

// Encode turns a domain event into a NewEvent with a fresh id: a version 7
// UUID (time-ordered, so the log's unique index on ids grows at its right
// edge instead of everywhere).
func Encode(e domain.Event, md Metadata) (NewEvent, error) {
	data, err := json.Marshal(e)
	if err != nil {
		return NewEvent{}, fmt.Errorf("encoding %s: %w", e.EventType(), err)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return NewEvent{}, fmt.Errorf("encoding %s: %w", e.EventType(), err)
	}
	return NewEvent{ID: id, Type: e.EventType(), SchemaVersion: e.SchemaVersion(), Data: data, Metadata: md}, nil
}

// EncodeAll encodes several domain events with the same metadata.
func EncodeAll(md Metadata, es ...domain.Event) ([]NewEvent, error) {
	out := make([]NewEvent, 0, len(es))
	for _, e := range es {
		ne, err := Encode(e, md)
		if err != nil {
			return nil, err
		}
		out = append(out, ne)
	}
	return out, nil
}
