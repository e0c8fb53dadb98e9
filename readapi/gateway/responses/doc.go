// Package responses translates the OpenAI Responses API (POST
// /v1/responses) to and from chat completions, so the gateway can serve it
// on the path that routes, counts, caches and audits chat completions.
//
// ParseRequest validates a Responses request strictly (errors are
// domain.Invalid with a stable code and the field at fault); ChatBody is
// the equivalent chat-completion request. FromChat turns a chat completion
// (with the gateway's routing object) into a Response object, and a Stream
// turns the chunks of a streamed chat completion into the response.*
// server-sent events, in the order and with the fields of the official
// schema (github.com/openai/openai-go's responses package, the openai npm
// package's types).
//
// Responses are not stored: previous_response_id, conversation, prompt
// templates and item_reference input items are refused with a 400 saying
// to send the conversation as input items. Only function tools are served;
// OpenAI's hosted tools (web search, file search, code interpreter, ...)
// are refused.
//
// The package is pure: no HTTP, no I/O. Values are not safe for concurrent
// use, but each request has its own.
package responses
