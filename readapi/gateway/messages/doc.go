// Package messages translates Anthropic's Messages API (POST /v1/messages
// and POST /v1/messages/count_tokens) to and from chat completions, so the
// gateway serves it on the path that routes, limits, counts, caches and
// audits chat completions.
//
// ParseRequest validates a Messages request (errors are domain.Invalid
// with a stable code and the field at fault); ChatBody is the equivalent
// chat-completion request: the system prompt as a system message, text,
// image and document blocks as content parts, tool_use blocks as the
// assistant's tool_calls, tool_result blocks as tool messages, tools as
// function tools, tool_choice, stop_sequences as stop, max_tokens,
// temperature, top_p and metadata.user_id as user. Thinking and
// redacted_thinking blocks of earlier turns are dropped (chat completions
// have no place for them), and the thinking, top_k, service_tier and
// cache_control settings are accepted and have no effect.
//
// Models of the catalog's anthropic API take the request as it came
// (Dialect's exchange is a dialect.Passthrough); a request with what the
// translation does not serve (a server tool, a field or block it does not
// read) is parsed by ParseNative, its chat request only sizing and
// routing it, and goes to those models only.
//
// FromChat turns a chat completion (with the gateway's routing object)
// into a Message; a Stream turns the chunks of a streamed chat completion
// into Anthropic's server-sent events (message_start, ping,
// content_block_start, content_block_delta with text_delta or
// input_json_delta, content_block_stop, message_delta with the stop reason,
// the usage and the routing object, message_stop; error on failure).
// ErrorType is Anthropic's error type for an HTTP status.
//
// The package is pure: no HTTP, no I/O. Values are not safe for concurrent
// use, but each request has its own.
package messages
