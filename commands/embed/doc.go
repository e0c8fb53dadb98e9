// Package embed is the gateway's embeddings as a use case: given a
// validated embeddings request (OpenAI's POST /v1/embeddings) and its
// caller, it lets domain/routing choose the embedding models that can
// answer (RouteEmbedding: a model id, an embedding tier or auto), admits
// the request against the key's limits (Admitter, before any upstream
// call), calls the upstreams through adapters/upstream (breakers,
// timeouts, failover between the tier's models), checks the vectors that
// come back (one per input, of the length asked for), and records the
// request in the audit chain like a completion (operation "embeddings"),
// which also makes it usage: the gateway-usage read model sums the chain.
//
// A reply is returned only once its audit entry is committed; a request
// that could not be recorded is an error. It knows nothing of HTTP.
//
// A Handler is safe for concurrent use.
package embed
