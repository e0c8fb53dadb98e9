// Package complete is the gateway's completion as a use case: given a
// validated chat-completion request and its caller, it lets domain/routing
// choose a tier and the failover order, answers exact repeats from a
// per-process cache (concurrent identical cacheable requests share one
// upstream call: flight.go), calls the upstreams through adapters/upstream (moving
// on to the next candidate on a retryable failure or an open breaker) in
// each model's own API (wire.go: the chat request translated to
// Anthropic's Messages or Gemini's generateContent and read back as chat;
// native.go: a request passed through to the API it was written in),
// counts the usage, and records the completion in the audit chain
// (commands.AuditChain). It returns a whole reply or a stream of chunks;
// it knows nothing of HTTP, so every route that completes a chat (the
// OpenAI chat-completions route, and any route translating another API
// into a chat request) calls the same Handler.
//
// The audit record tells the truth: a reply is returned, and a stream
// ends cleanly, only once its completion is committed to the chain; a
// completion that could not be recorded is an error, and is never in the
// chain.
//
// A Handler is safe for concurrent use; a Stream is read by one goroutine.
package complete
