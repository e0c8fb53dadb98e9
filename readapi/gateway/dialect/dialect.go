package dialect

// Dialect is an API served over chat completions. Implementations are
// safe for concurrent use (they hold no state: each request has its own
// Exchange).
type Dialect interface {
	// Parse validates a request body (an error is domain.Invalid, with
	// a stable code and the field at fault) and returns its exchange.
	Parse(body []byte) (Exchange, error)
	// ID is the id of a reply, made from 24 random bytes ("" where the
	// API keeps the upstream's id, as chat completions do).
	ID(random [24]byte) string
}

// Exchange is one request of a dialect, from its chat request to its
// reply. Not safe for concurrent use.
type Exchange interface {
	// Chat is the chat-completion request body the request asks for.
	Chat() ([]byte, error)
	// Reply translates a chat completion (the gateway's routing object
	// spliced in) into the API's reply body; counted is the usage the
	// gateway counted, for a reply that reports none.
	Reply(completion []byte, t Turn, counted Usage) ([]byte, error)
	// Stream starts the translation of a streamed reply.
	Stream(t Turn) Stream
}

// Passthrough is an Exchange whose request an upstream of its own API
// takes as it came: the gateway sends it to a model of that API with
// only the model and the gateway's own fields changed, and relays that
// upstream's reply and events as they come (its routing object added).
type Passthrough interface {
	// Native names the API (a catalog "api": anthropic) and the request's
	// fields that are the gateway's own, left out upstream; untranslatable
	// is the translation's refusal of a request only models of that API
	// can take as it came (a field or block the chat translation does not
	// serve), nil when any model can.
	Native() (api string, gatewayFields []string, untranslatable error)
}

// Turn names a reply: its id (Dialect.ID) and when it was made (Unix
// seconds).
type Turn struct {
	ID      string
	Created int64
}

// Usage is the prompt and completion tokens the gateway counted.
type Usage struct {
	Prompt, Completion int64
}

// Stream translates the chunks of a streamed chat completion into a
// dialect's events. Not safe for concurrent use.
type Stream interface {
	// Chunk translates one chunk (the gateway's last one carries the
	// routing object and the usage).
	Chunk(data []byte) ([]Event, error)
	// Fail is the events that end a failed stream, with arr's code.
	Fail(code, msg string) []Event
	// Finish is the events that end a complete one.
	Finish() []Event
}

// Event is one server-sent event: its name (the data's "type"; "" for a
// data line without one) and its data. Closing marks an event that ends
// the stream, which may be written up to the stream's grace past the
// request's deadline.
type Event struct {
	Type    string
	Data    []byte
	Closing bool
}
