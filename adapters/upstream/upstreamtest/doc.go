// Package upstreamtest is a real HTTP server on loopback that speaks the
// OpenAI chat-completions wire format (POST /v1/chat/completions, JSON and
// server-sent events with include_usage and [DONE], tool calls, JSON mode),
// for tests and benchmarks of the gateway. Per model it can be told to
// wait, fail with a status, hang, cut a stream off after some chunks, or
// report prompt tokens read from a prompt cache (Behavior.CachedTokens).
//
// Its replies are a deterministic function of the request: "Hello from
// <model>: <last user text>", a tool call per offered tool (two when
// parallel tool calls are allowed and two tools are offered), the tool
// results echoed back, or a JSON object in JSON mode.
//
// It embeds too (POST /v1/embeddings, embeddings.go): string, string-array
// and token-array input, encoding_format float or base64, dimensions. A
// vector is a deterministic function of the model and the input: unit
// length, as long as dimensions asks, else the model's own length
// (Behavior.Dimensions, or that of a well-known model, else 16).
//
// A Server is safe for concurrent use.
package upstreamtest
