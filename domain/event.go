package domain

import (
	"encoding/json"
	"fmt"
)

// Event is a fact that happened. Names are past tense and never renamed; a
// change of payload shape bumps SchemaVersion and keeps old versions decodable.
type Event interface {
	EventType() string
	SchemaVersion() int
}

// Registry maps event type names to constructors so stored events can be
// decoded back into their Go types. It is filled once at start-up and is safe
// for concurrent reads after that.
type Registry struct {
	types map[string]func() Event
}

// NewRegistry returns a registry holding the given prototypes. Each prototype
// is used only for its type name; decoding allocates a fresh value with fn.
func NewRegistry(groups ...[]func() Event) *Registry {
	r := &Registry{types: map[string]func() Event{}}
	for _, g := range groups {
		for _, fn := range g {
			r.types[fn().EventType()] = fn
		}
	}
	return r
}

// Known reports whether the registry can decode events of this type.
func (r *Registry) Known(eventType string) bool {
	_, ok := r.types[eventType]
	return ok
}

// Decode turns a stored payload back into its event. Events of unknown types
// return an error wrapping ErrNotFound, so readers can skip what they do not
// understand.
func (r *Registry) Decode(eventType string, schemaVersion int, data []byte) (Event, error) {
	fn, ok := r.types[eventType]
	if !ok {
		return nil, fmt.Errorf("event type %q: %w", eventType, ErrNotFound)
	}
	e := fn()
	if e.SchemaVersion() < schemaVersion {
		return nil, fmt.Errorf("event %s schema version %d is newer than this build knows (%d)", eventType, schemaVersion, e.SchemaVersion())
	}
	if err := json.Unmarshal(data, e); err != nil {
		return nil, fmt.Errorf("decoding %s v%d: %w", eventType, schemaVersion, err)
	}
	return e, nil
}
