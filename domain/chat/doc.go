// Package chat holds the chat-completion wire types (OpenAI's
// /v1/chat/completions), the one language the gateway speaks inside:
// the request a dialect translates its API's request into (Request,
// Message, Part, Tool, ToolCall…), the reply and the stream chunks it
// reads back (Completion, Chunk, Usage…), and the encoder options
// (Escaping) with which each route has always written them.
//
// The gateway's dialects (readapi/gateway/messages, …/responses) and
// commands/complete use these types and define no copies of their own
// (readapi/gateway's TestDialectsDefineNoChatTypes fails on one). A
// native upstream adapter will be the same translation in the other
// direction: a Request out to a provider's API, its reply and stream in
// as a Completion and Chunks.
//
// It sits under domain/ because every layer that speaks chat imports it:
// commands/complete, readapi/gateway and adapters/upstream (domain is
// the one folder all three may import; adapters may not be imported by
// readapi). Like the rest of domain it imports the standard library
// only. The reading types hold the fields some reader uses; decoding
// ignores the rest. Values are plain data: safe for concurrent reads.
package chat
