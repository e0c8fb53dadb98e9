// Package gateway is the routing gateway's HTTP server: OpenAI-compatible
// routes under /v1, errors in the OpenAI shape
// {"error":{"message","type","param","code"}}, and its OpenAPI document.
//
// POST /v1/chat/completions validates the request, runs it through the
// completion use case (commands/complete: routing, failover, the cache,
// usage and the audit record) and writes the reply as JSON with the
// routing object, or the stream as server-sent events chunk by chunk; it
// holds no routing, failover, cache or audit rules of its own.
// POST /v1/responses and POST /v1/messages are dialects
// (readapi/gateway/dialect) on the same route (dialect_route.go, relay.go):
// the request is translated into the chat completion it asks for (package
// responses, package messages, over domain/chat's wire types), run
// through the same use case, and the reply translated back, event by
// event for streams; chat completions are the identity dialect
// (completions.go).
// GET /v1/models, /v1/audit/{hash} and /v1/usage and POST /v1/feedback
// answer from the catalog and the audit, gateway_usage and tier_quality
// read models. GET /v1/audit/{hash} takes a key optionally: everyone sees
// the entry's place in the chain, the owning account's keys and the
// operator's auditor key (X-Auditor-Key) also its payload.
package gateway
