package eventstore

import (
	"crypto/sha256"
	"unicode/utf8"

	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

// AppendMetadataJSON appends the metadata as the JSON object the log hands
// out and hashes into an event's leaf: the keys correlation_id,
// causation_id, actor and request_id in that order, each only when its
// value is not empty, no white space, strings escaped as Go's
// encoding/json escapes them (the bytes json.Marshal(m) writes, which
// `arr events export` and `arr events tail --json` print):
//
//   - `"` and `\` as \" and \\; newline, carriage return, tab, backspace
//     and form feed as \n, \r, \t, \b, \f; other bytes below 0x20 as
//     \u00XX with lower-case hex;
//   - <, > and & as \u003c, \u003e and \u0026; U+2028 and U+2029 as
//     \u2028 and \u2029;
//   - each invalid UTF-8 byte as \ufffd (the log never stores one);
//   - everything else as is.
func AppendMetadataJSON(b []byte, m Metadata) []byte {
	b = append(b, '{')
	first := true
	for _, f := range [...]struct{ key, val string }{
		{`"correlation_id":`, m.CorrelationID}, {`"causation_id":`, m.CausationID},
		{`"actor":`, m.Actor}, {`"request_id":`, m.RequestID},
	} {
		if f.val == "" {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, f.key...)
		b = appendJSONString(b, f.val)
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string the way encoding/json writes
// it with HTML escaping (its default).
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Leaf returns what the leaf of a committed event commits to (see
// verifier.LeafData): its fields as the log returns them, its metadata as
// AppendMetadataJSON writes it.
func Leaf(e Event) verifier.Event {
	return verifier.Event{
		Position: e.Position, ID: e.ID, StreamID: e.StreamID, StreamVersion: e.StreamVersion,
		Type: e.Type, SchemaVersion: e.SchemaVersion, Data: e.Data,
		Metadata: AppendMetadataJSON(nil, e.Metadata), RecordedAt: e.RecordedAt.UnixMicro(),
	}
}

// LeafHasher computes events' leaf hashes with one reusable buffer. It is
// not safe for concurrent use.
type LeafHasher struct {
	buf  []byte
	meta []byte
}

// Hash returns the leaf hash of the event e stands for, with metadata md
// (e.Metadata is ignored): SHA-256(0x00 || verifier.LeafData(e)). It
// fails only for an event verifier.LeafData refuses.
func (h *LeafHasher) Hash(e verifier.Event, md Metadata) ([verifier.HashSize]byte, error) {
	h.meta = AppendMetadataJSON(h.meta[:0], md)
	e.Metadata = h.meta
	buf, err := verifier.AppendLeafData(append(h.buf[:0], 0x00), e)
	if err != nil {
		return [verifier.HashSize]byte{}, err
	}
	h.buf = buf
	return sha256.Sum256(buf), nil
}

// HashEvent is the leaf hash of a committed event: Hash(Leaf(e)).
func (h *LeafHasher) HashEvent(e Event) ([verifier.HashSize]byte, error) {
	return h.Hash(verifier.Event{
		Position: e.Position, ID: e.ID, StreamID: e.StreamID, StreamVersion: e.StreamVersion,
		Type: e.Type, SchemaVersion: e.SchemaVersion, Data: e.Data, RecordedAt: e.RecordedAt.UnixMicro(),
	}, e.Metadata)
}
