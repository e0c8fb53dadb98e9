package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
)

// DefaultVersion is the anthropic-version sent when the client named none.
const DefaultVersion = "2023-06-01"

// Usage is the token counts of a Messages reply or stream. InputTokens
// are the uncached input tokens; the cached ones are counted apart: read
// from the cache (CacheReadInputTokens, at the cached price) and written
// to it (CacheCreationInputTokens, at the cache-write price; of them,
// CacheCreation1hInputTokens were written to the 1-hour cache, which
// Anthropic prices at twice the input price). WebSearchRequests is the
// web searches the upstream ran (server_tool_use.web_search_requests),
// billed apart from the tokens.
//
// Usage is read by exact member names (members): encoding/json's
// case-insensitive matching would read an alias ("Usage",
// "output_to\u212aens") that the client's SDK, reading the same body,
// does not.
type Usage struct {
	InputTokens                int64 `json:"input_tokens"`
	OutputTokens               int64 `json:"output_tokens"`
	CacheReadInputTokens       int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens   int64 `json:"cache_creation_input_tokens"`
	CacheCreation1hInputTokens int64 `json:"-"`
	WebSearchRequests          int64 `json:"-"`
}

// PromptTokens is every input token: uncached, read from and written to
// the cache.
func (u Usage) PromptTokens() int64 {
	return u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
}

// deltaUsage is a usage object whose counts may be absent (null or left
// out): message_delta's, whose counts are cumulative and carry at least
// output_tokens.
type deltaUsage struct {
	InputTokens                *int64
	OutputTokens               *int64
	CacheReadInputTokens       *int64
	CacheCreationInputTokens   *int64
	CacheCreation1hInputTokens *int64
	WebSearchRequests          *int64
}

// members is a JSON object's members by their exact names (nil: not an
// object).
func members(data []byte) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// count reads a count member of m: nil when absent or null.
func count(m map[string]json.RawMessage, name string) (*int64, error) {
	v, ok := m[name]
	if !ok || string(v) == "null" {
		return nil, nil
	}
	var n int64
	if err := json.Unmarshal(v, &n); err != nil {
		return nil, fmt.Errorf("anthropic: usage %s is not an integer", name)
	}
	return &n, nil
}

// readUsage reads a usage object by its exact member names, with its
// nested cache_creation.ephemeral_1h_input_tokens and
// server_tool_use.web_search_requests.
func readUsage(raw json.RawMessage) (*deltaUsage, error) {
	m, err := members(raw)
	if err != nil || m == nil {
		return nil, fmt.Errorf("anthropic: usage is not an object")
	}
	var d deltaUsage
	for _, f := range []struct {
		to   **int64
		obj  string
		name string
	}{{&d.InputTokens, "", "input_tokens"}, {&d.OutputTokens, "", "output_tokens"},
		{&d.CacheReadInputTokens, "", "cache_read_input_tokens"}, {&d.CacheCreationInputTokens, "", "cache_creation_input_tokens"},
		{&d.CacheCreation1hInputTokens, "cache_creation", "ephemeral_1h_input_tokens"},
		{&d.WebSearchRequests, "server_tool_use", "web_search_requests"}} {
		in := m
		if f.obj != "" {
			v, ok := m[f.obj]
			if !ok || string(v) == "null" {
				continue
			}
			if in, err = members(v); err != nil {
				return nil, fmt.Errorf("anthropic: usage %s is not an object", f.obj)
			}
		}
		if *f.to, err = count(in, f.name); err != nil {
			return nil, err
		}
	}
	return &d, nil
}

// MaxTokens bounds each count an upstream reports: a count below zero
// (a credit to whoever is billed by it) or above 2^40 (no request is a
// trillion tokens; four of them still sum without overflow) is refused.
const MaxTokens = 1 << 40

// required says that a usage object must carry input_tokens and
// output_tokens (a reply's and message_start's do: Anthropic's API
// always sends both) or output_tokens (message_delta's).
func (d deltaUsage) required(input bool) error {
	if input && d.InputTokens == nil {
		return errors.New("anthropic: a usage without input_tokens")
	}
	if d.OutputTokens == nil {
		return errors.New("anthropic: a usage without output_tokens")
	}
	return nil
}

// merge sets the counts d carries, or fails on one out of range (u then
// unchanged). With cumulative, d is a later report of the same counts
// (message_delta's): a count never goes down, so one below u's keeps
// u's (an upstream that sends 0 for the input counts it gave in
// message_start does not erase them).
func (u *Usage) merge(d deltaUsage, cumulative bool) error {
	fs := []struct {
		to   *int64
		from *int64
		name string
	}{{&u.InputTokens, d.InputTokens, "input_tokens"}, {&u.OutputTokens, d.OutputTokens, "output_tokens"},
		{&u.CacheReadInputTokens, d.CacheReadInputTokens, "cache_read_input_tokens"},
		{&u.CacheCreationInputTokens, d.CacheCreationInputTokens, "cache_creation_input_tokens"},
		{&u.CacheCreation1hInputTokens, d.CacheCreation1hInputTokens, "cache_creation.ephemeral_1h_input_tokens"},
		{&u.WebSearchRequests, d.WebSearchRequests, "server_tool_use.web_search_requests"}}
	for _, f := range fs {
		if f.from != nil && (*f.from < 0 || *f.from > MaxTokens) {
			return fmt.Errorf("anthropic: usage %s %d is out of range (0 to 2^40)", f.name, *f.from)
		}
	}
	for _, f := range fs {
		switch {
		case f.from == nil:
		case cumulative:
			*f.to = max(*f.to, *f.from)
		default:
			*f.to = *f.from
		}
	}
	return nil
}

// ErrNoUsage: a reply that is not a message with a usage object.
var ErrNoUsage = errors.New("anthropic: the reply is not a message with usage")

// ReplyUsage reads the usage of a non-streamed reply (a message object);
// one without input_tokens or output_tokens is an ErrNoUsage (a count
// left out is not a count of zero).
func ReplyUsage(reply []byte) (Usage, error) {
	m, err := members(reply)
	if err != nil || m == nil {
		return Usage{}, fmt.Errorf("%w: %v", ErrNoUsage, err)
	}
	var typ string
	if json.Unmarshal(m["type"], &typ) != nil || typ != "message" || m["usage"] == nil {
		return Usage{}, ErrNoUsage
	}
	d, err := readUsage(m["usage"])
	if err != nil {
		return Usage{}, fmt.Errorf("%w: %w", ErrNoUsage, err)
	}
	var u Usage
	if err := d.required(true); err != nil {
		return Usage{}, fmt.Errorf("%w: %w", ErrNoUsage, err)
	}
	if err := u.merge(*d, false); err != nil {
		return Usage{}, fmt.Errorf("%w: %w", ErrNoUsage, err)
	}
	return u, nil
}

// AddEvent updates u, a stream's usage so far, with one of its events
// (name and data): message_start's message.usage sets the input counts
// (and the first output count; input_tokens and output_tokens are
// required), message_delta's usage the cumulative counts it carries
// (output_tokens at least), each kept at the larger of the two (a
// cumulative count never goes down). Other events leave u as it is; an
// error is a message_start or message_delta that cannot be read.
func (u *Usage) AddEvent(name string, data []byte) error {
	switch name {
	case EventMessageStart:
		d, err := eventUsage(data, "message")
		if err != nil {
			return fmt.Errorf("anthropic: a message_start without usage: %w", err)
		}
		if err := d.required(true); err != nil {
			return err
		}
		return u.merge(*d, false)
	case EventMessageDelta:
		d, err := eventUsage(data, "")
		if err != nil {
			return fmt.Errorf("anthropic: a message_delta without usage: %w", err)
		}
		if err := d.required(false); err != nil {
			return err
		}
		return u.merge(*d, true)
	}
	return nil
}

// eventUsage reads an event's usage (under in, when not ""), by exact
// member names.
func eventUsage(data []byte, in string) (*deltaUsage, error) {
	m, err := members(data)
	if err == nil && m != nil && in != "" {
		m, err = members(m[in])
	}
	if err != nil || m == nil || m["usage"] == nil {
		return nil, errors.New("no usage object")
	}
	return readUsage(m["usage"])
}
