package domain

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Event is a fact that happened. Names are past tense and never renamed; a
// change of payload shape bumps SchemaVersion and keeps old versions
// decodable (see Upcaster).
type Event interface {
	EventType() string
	SchemaVersion() int
}

// Upcaster is an event type whose older schema versions are turned into
// its current one in one place, beside the type: Upcast gets a payload of
// schema version from (older than SchemaVersion) and returns it as the
// current version's JSON. Every event type of SchemaVersion above 1
// implements it, so a replay never reads an old payload as a new one.
type Upcaster interface {
	Event
	Upcast(from int, data []byte) ([]byte, error)
}

// Registry maps event type names to constructors so stored events can be
// decoded back into their Go types, each at its current schema version. It
// is filled once at start-up and is safe for concurrent reads after that.
type Registry struct {
	types map[string]func() Event
	// unmarshal decodes a payload: encoding/json's Unmarshal unless
	// WithUnmarshal gave another.
	unmarshal func(data []byte, v any) error
}

// WithUnmarshal returns a registry of the same types that decodes payloads
// with fn, which must decode as encoding/json's Unmarshal does (a faster
// implementation of it): the projections' runner decodes bulk loads'
// row chunks, megabytes of JSON a batch, with one.
func (r *Registry) WithUnmarshal(fn func(data []byte, v any) error) *Registry {
	return &Registry{types: r.types, unmarshal: fn}
}

// NewRegistry returns a registry holding the given prototypes. Each prototype
// is used only for its type name; decoding allocates a fresh value with fn.
// It panics on a type registered twice, or on a type of schema version
// above 1 that does not upcast its older versions: both are programming
// errors caught by any test that builds the registry.
func NewRegistry(groups ...[]func() Event) *Registry {
	r := &Registry{types: map[string]func() Event{}}
	for _, g := range groups {
		for _, fn := range g {
			e := fn()
			if _, dup := r.types[e.EventType()]; dup {
				panic("domain: event type " + e.EventType() + " registered twice")
			}
			if _, ok := e.(Upcaster); e.SchemaVersion() > 1 && !ok {
				panic(fmt.Sprintf("domain: event type %s is at schema version %d but does not implement Upcaster", e.EventType(), e.SchemaVersion()))
			}
			r.types[e.EventType()] = fn
		}
	}
	return r
}

// Known reports whether the registry can decode events of this type.
func (r *Registry) Known(eventType string) bool {
	_, ok := r.types[eventType]
	return ok
}

// Types lists the registered event types, sorted.
func (r *Registry) Types() []string {
	out := make([]string, 0, len(r.types))
	for t := range r.types {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// New returns a zero value of the event type (nil if unknown).
func (r *Registry) New(eventType string) Event {
	fn, ok := r.types[eventType]
	if !ok {
		return nil
	}
	return fn()
}

// Decode turns a stored payload back into its event at the type's current
// schema version: a payload of an older version is upcast first (the
// type's Upcast). Events of unknown types return an error wrapping
// ErrNotFound, so readers can skip what they do not understand; a version
// newer than this build knows is an error.
func (r *Registry) Decode(eventType string, schemaVersion int, data []byte) (Event, error) {
	fn, ok := r.types[eventType]
	if !ok {
		return nil, fmt.Errorf("event type %q: %w", eventType, ErrNotFound)
	}
	e := fn()
	current := e.SchemaVersion()
	switch {
	case schemaVersion > current:
		return nil, fmt.Errorf("event %s schema version %d is newer than this build knows (%d)", eventType, schemaVersion, current)
	case schemaVersion < 1:
		return nil, fmt.Errorf("event %s: schema version %d", eventType, schemaVersion)
	case schemaVersion < current:
		up, err := e.(Upcaster).Upcast(schemaVersion, data)
		if err != nil {
			return nil, fmt.Errorf("upcasting %s v%d to v%d: %w", eventType, schemaVersion, current, err)
		}
		data = up
	}
	unmarshal := r.unmarshal
	if unmarshal == nil {
		unmarshal = json.Unmarshal
	}
	if err := unmarshal(data, e); err != nil {
		return nil, fmt.Errorf("decoding %s v%d: %w", eventType, schemaVersion, err)
	}
	return e, nil
}

// CurrentJSON returns a stored payload as its type's current schema
// version's JSON, and that version, for readers that hand JSON on rather
// than use Go values: a payload at the current version is returned as
// stored (the log holds it as its type encoded it), an older one is
// decoded as Decode does (upcast) and encoded again. Errors are Decode's.
func (r *Registry) CurrentJSON(eventType string, schemaVersion int, data []byte) (json.RawMessage, int, error) {
	fn, ok := r.types[eventType]
	if !ok {
		return nil, 0, fmt.Errorf("event type %q: %w", eventType, ErrNotFound)
	}
	current := fn().SchemaVersion()
	if schemaVersion == current {
		return data, current, nil
	}
	e, err := r.Decode(eventType, schemaVersion, data)
	if err != nil {
		return nil, 0, err
	}
	out, err := json.Marshal(e)
	if err != nil {
		return nil, 0, fmt.Errorf("encoding %s v%d: %w", eventType, current, err)
	}
	return out, current, nil
}

// DecodeAs decodes a stored payload into the event type T (a pointer to
// an event struct), upcast to its current version.
func DecodeAs[T Event](r *Registry, eventType string, schemaVersion int, data []byte) (T, error) {
	var zero T
	e, err := r.Decode(eventType, schemaVersion, data)
	if err != nil {
		return zero, err
	}
	t, ok := e.(T)
	if !ok {
		return zero, fmt.Errorf("event %s decodes to %T, not %T", eventType, e, zero)
	}
	return t, nil
}
