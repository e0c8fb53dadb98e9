// Package dialect is what the gateway asks of an API it serves over chat
// completions: a Dialect parses its API's request into the chat request
// it asks for (domain/chat's wire types), names the reply, translates
// the chat reply back, and translates a stream chunk by chunk into its
// API's server-sent events. readapi/gateway runs every dialect with one
// route handler (dialect_route.go): the Messages API
// (readapi/gateway/messages), the Responses API (…/responses) and chat
// completions themselves (the identity).
//
// A native upstream adapter (a provider's own API behind the gateway)
// will be the same translation in the other direction, over the same
// chat types: a chat Request out in the provider's shape, its reply and
// stream back in as a chat Completion and Chunks. It belongs in
// adapters/ beside adapters/upstream, keyed by (ingress dialect,
// upstream API) only where a pair needs more than the two translations
// composed through chat.
//
// The package holds interfaces and plain values only.
package dialect
