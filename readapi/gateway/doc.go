// Package gateway is the routing gateway's HTTP server: OpenAI-compatible
// routes under /v1, errors in the OpenAI shape
// {"error":{"message","type","param","code"}}, and its OpenAPI document.
//
// POST /v1/chat/completions validates the request, lets domain/routing
// choose a tier and the failover order, calls the upstreams through
// adapters/upstream (relaying streams chunk by chunk), serves exact repeats
// from a per-process cache, records every completion in the audit chain
// (commands.AuditChain) before answering, and adds the routing object.
// POST /v1/responses (responses_route.go) translates an OpenAI Responses
// request into a chat completion (package responses), serves it on that
// same path and translates the reply back, event by event for streams.
// GET /v1/models, /v1/audit/{hash} and /v1/usage and POST /v1/feedback
// answer from the catalog and the audit, gateway_usage and tier_quality
// read models. GET /v1/audit/{hash} takes a key optionally: everyone sees
// the entry's place in the chain, the owning account's keys and the
// operator's auditor key (X-Auditor-Key) also its payload.
package gateway
