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
// to it (CacheCreationInputTokens, at the cache-write price).
type Usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
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
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
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
		{&u.CacheCreationInputTokens, d.CacheCreationInputTokens, "cache_creation_input_tokens"}}
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
	var m struct {
		Type  string      `json:"type"`
		Usage *deltaUsage `json:"usage"`
	}
	if err := json.Unmarshal(reply, &m); err != nil {
		return Usage{}, fmt.Errorf("%w: %v", ErrNoUsage, err)
	}
	if m.Type != "message" || m.Usage == nil {
		return Usage{}, ErrNoUsage
	}
	var u Usage
	if err := m.Usage.required(true); err != nil {
		return Usage{}, fmt.Errorf("%w: %w", ErrNoUsage, err)
	}
	if err := u.merge(*m.Usage, false); err != nil {
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
		var ev struct {
			Message struct {
				Usage *deltaUsage `json:"usage"`
			} `json:"message"`
		}
		if err := json.Unmarshal(data, &ev); err != nil || ev.Message.Usage == nil {
			return fmt.Errorf("anthropic: a message_start without usage: %v", err)
		}
		if err := ev.Message.Usage.required(true); err != nil {
			return err
		}
		return u.merge(*ev.Message.Usage, false)
	case EventMessageDelta:
		var ev struct {
			Usage *deltaUsage `json:"usage"`
		}
		if err := json.Unmarshal(data, &ev); err != nil || ev.Usage == nil {
			return fmt.Errorf("anthropic: a message_delta without usage: %v", err)
		}
		if err := ev.Usage.required(false); err != nil {
			return err
		}
		return u.merge(*ev.Usage, true)
	}
	return nil
}
