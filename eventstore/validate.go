package eventstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/text"
)

// ErrNotStorable is the kind of error Validate returns for an event that
// the log (or a read model) could not store: its data is not JSON that
// PostgreSQL accepts as jsonb, or its metadata is not text PostgreSQL
// accepts. Text is validated by callers (domain/text) before it becomes an
// event; this is the second line of defence, so such an event is never
// appended and no projection is ever handed it.
var ErrNotStorable = &domain.Error{Kind: domain.ErrInvalid, Code: "event_not_storable",
	Message: "the event cannot be stored: its data or metadata holds text PostgreSQL refuses"}

// Validate checks an append before it is sent: a stream id, events with
// distinct ids and types, data that is JSON PostgreSQL can store as jsonb
// (valid UTF-8, no \u0000 escape, no unpaired surrogate escape) and
// metadata that is storable text. parseJSON also parses every event's data
// as JSON (bulk appends skip it: the server parses every json value it
// stores anyway); the checks for what jsonb refuses run either way.
func (a Append) Validate(parseJSON bool) error {
	if a.StreamID == "" {
		return errors.New("append: empty stream id")
	}
	if len(a.StreamID) > 512 {
		return errors.New("append: stream id longer than 512 bytes")
	}
	if !text.Valid(a.StreamID) {
		return fmt.Errorf("append: stream id %q: %w", a.StreamID, ErrNotStorable)
	}
	if len(a.Events) == 0 {
		return fmt.Errorf("append to %s: no events", a.StreamID)
	}
	var seen map[uuid.UUID]struct{}
	if len(a.Events) > 1 {
		seen = make(map[uuid.UUID]struct{}, len(a.Events))
	}
	for i, e := range a.Events {
		if e.ID == uuid.Nil {
			return fmt.Errorf("append to %s: event %d has no id", a.StreamID, i)
		}
		if seen != nil {
			if _, dup := seen[e.ID]; dup {
				return fmt.Errorf("append to %s: event id %s appears twice", a.StreamID, e.ID)
			}
			seen[e.ID] = struct{}{}
		}
		if e.Type == "" {
			return fmt.Errorf("append to %s: event %d has no type", a.StreamID, i)
		}
		if parseJSON && len(e.Data) > 0 && !json.Valid(e.Data) {
			return fmt.Errorf("append to %s: event %d data is not valid JSON", a.StreamID, i)
		}
		if err := StorableJSON(e.Data); err != nil {
			return fmt.Errorf("append to %s: event %d (%s) data: %w: %w", a.StreamID, i, e.Type, err, ErrNotStorable)
		}
		for _, s := range []string{e.Type, e.Metadata.Actor, e.Metadata.CorrelationID, e.Metadata.CausationID, e.Metadata.RequestID} {
			if !text.Valid(s) {
				return fmt.Errorf("append to %s: event %d (%s) metadata %q: %w", a.StreamID, i, e.Type, s, ErrNotStorable)
			}
		}
	}
	return nil
}

// StorableJSON reports why PostgreSQL could not store data (JSON text) as
// jsonb or return its strings as text, or nil: invalid UTF-8, a \u0000
// escape, or a \uD800–\uDFFF escape that is not a high surrogate followed
// by a low one. It does not parse the JSON otherwise.
func StorableJSON(data []byte) error {
	if !utf8.Valid(data) {
		return errors.New("not valid UTF-8")
	}
	for i := 0; ; {
		j := bytes.IndexByte(data[i:], '\\')
		if j < 0 {
			return nil
		}
		i += j
		if i+1 >= len(data) {
			return nil // a dangling backslash is a JSON syntax error, found by the parser
		}
		if data[i+1] != 'u' {
			i += 2 // \" \\ \n ... never start an escape of their own
			continue
		}
		r, ok := hex4(data, i+2)
		if !ok {
			i += 2
			continue
		}
		switch {
		case r == 0:
			return fmt.Errorf("\\u0000 at byte %d (PostgreSQL text cannot hold NUL)", i)
		case r >= 0xDC00 && r <= 0xDFFF:
			return fmt.Errorf("unpaired low surrogate \\u%04x at byte %d", r, i)
		case r >= 0xD800 && r <= 0xDBFF:
			lo, ok := -1, false
			if i+7 < len(data) && data[i+6] == '\\' && data[i+7] == 'u' {
				lo, ok = hex4(data, i+8)
			}
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return fmt.Errorf("unpaired high surrogate \\u%04x at byte %d", r, i)
			}
			i += 12
		default:
			i += 6
		}
	}
}

// hex4 reads four hex digits at data[at:].
func hex4(data []byte, at int) (int, bool) {
	if at+4 > len(data) {
		return 0, false
	}
	v := 0
	for _, c := range data[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			v = v*16 + int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v*16 + int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v*16 + int(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}
