package responses

import (
	"encoding/hex"

	"github.com/arr-dev/arr/readapi/gateway/dialect"
)

// Dialect is the Responses API (POST /v1/responses) as the gateway's
// route runs it. Safe for concurrent use.
type Dialect struct{}

var _ dialect.Dialect = Dialect{}

// Parse validates a Responses body.
func (Dialect) Parse(body []byte) (dialect.Exchange, error) {
	r, err := ParseRequest(body)
	if err != nil {
		return nil, err
	}
	return exchange{r}, nil
}

// ID is resp_ and the random bytes in hex.
func (Dialect) ID(random [24]byte) string { return "resp_" + hex.EncodeToString(random[:]) }

// exchange holds the request: the Response echoes its fields.
type exchange struct{ r *Request }

func (e exchange) Chat() ([]byte, error) { return e.r.ChatBody() }

func (e exchange) Reply(completion []byte, t dialect.Turn, _ dialect.Usage) ([]byte, error) {
	return FromChat(completion, e.r, t.ID, t.Created)
}

func (e exchange) Stream(t dialect.Turn) dialect.Stream { return NewStream(e.r, t.ID, t.Created) }
