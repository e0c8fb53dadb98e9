package messages

import (
	"encoding/hex"

	"github.com/arr-dev/arr/domain/routing"
	"github.com/arr-dev/arr/readapi/gateway/dialect"
)

// Dialect is the Messages API (POST /v1/messages) as the gateway's
// route runs it. Safe for concurrent use.
type Dialect struct{}

var _ dialect.Dialect = Dialect{}

// Parse validates a Messages body.
func (Dialect) Parse(body []byte) (dialect.Exchange, error) {
	r, err := ParseRequest(body)
	var only error
	if untranslatable(err) {
		// Only an Anthropic model can take it, as it came.
		only = err
		r, err = ParseNative(body)
	}
	if err != nil {
		return nil, err
	}
	chat, err := r.ChatBody()
	if err != nil {
		return nil, err
	}
	return exchange{model: r.Model(), chat: chat, only: only}, nil
}

// Native: a Messages request goes to Anthropic models as it came, less
// arr's routing fields (quality_floor, max_cost_usd, brand_pref); one
// with what the translation does not serve (a server tool, a field or
// block arr does not read) to them only.
func (e exchange) Native() (string, []string, error) {
	return routing.APIAnthropic, append([]string(nil), arrFields...), e.only
}

// ID is msg_ and the random bytes in hex.
func (Dialect) ID(random [24]byte) string { return "msg_" + hex.EncodeToString(random[:]) }

// exchange holds the model asked for and the chat request, not the
// parsed Messages request, so that a completion in flight holds the
// body and its chat request only.
type exchange struct {
	model string
	chat  []byte
	// only is the translation's refusal of a request that only Anthropic
	// models can take (nil: any model can).
	only error
}

func (e exchange) Chat() ([]byte, error) { return e.chat, nil }

func (e exchange) Reply(completion []byte, t dialect.Turn, counted dialect.Usage) ([]byte, error) {
	return FromChat(completion, t.ID, counted.Prompt, counted.Completion)
}

// Stream's every failure is an api_error event.
func (e exchange) Stream(t dialect.Turn) dialect.Stream { return apiErrors{NewStream(t.ID, e.model)} }

type apiErrors struct{ *Stream }

func (a apiErrors) Fail(code, msg string) []Event { return a.Stream.Fail("api_error", code, msg) }
