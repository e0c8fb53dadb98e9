package fanout

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/arr-dev/arr/eventstore"
)

// Metadata keys every published message carries, so consumers can route and
// filter without decoding the payload.
const (
	MetaEventType     = "event_type"
	MetaStreamID      = "stream_id"
	MetaStreamVersion = "stream_version"
	MetaPosition      = "position"
	MetaSchemaVersion = "schema_version"
	MetaRecordedAt    = "recorded_at"
	MetaCorrelationID = "correlation_id"
	MetaCausationID   = "causation_id"
	MetaContentType   = "content_type"
)

// ToMessage turns a committed event into the watermill message the forwarder
// publishes: UUID is the event id, the payload is the eventstore.Event as
// JSON, and the metadata repeats its routing fields (correlation and
// causation ids only when set).
func ToMessage(e eventstore.Event) (*message.Message, error) {
	payload, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encoding event %s at %d: %w", e.ID, e.Position, err)
	}
	msg := message.NewMessage(e.ID.String(), payload)
	msg.Metadata.Set(MetaEventType, e.Type)
	msg.Metadata.Set(MetaStreamID, e.StreamID)
	msg.Metadata.Set(MetaStreamVersion, strconv.FormatUint(e.StreamVersion, 10))
	msg.Metadata.Set(MetaPosition, strconv.FormatUint(e.Position, 10))
	msg.Metadata.Set(MetaSchemaVersion, strconv.Itoa(e.SchemaVersion))
	msg.Metadata.Set(MetaRecordedAt, e.RecordedAt.UTC().Format(time.RFC3339Nano))
	msg.Metadata.Set(MetaContentType, "application/json")
	if e.Metadata.CorrelationID != "" {
		msg.Metadata.Set(MetaCorrelationID, e.Metadata.CorrelationID)
	}
	if e.Metadata.CausationID != "" {
		msg.Metadata.Set(MetaCausationID, e.Metadata.CausationID)
	}
	return msg, nil
}

// FromMessage decodes a message published by a Forwarder back into the event.
func FromMessage(msg *message.Message) (eventstore.Event, error) {
	var e eventstore.Event
	if err := json.Unmarshal(msg.Payload, &e); err != nil {
		return eventstore.Event{}, fmt.Errorf("decoding message %s: %w", msg.UUID, err)
	}
	return e, nil
}
