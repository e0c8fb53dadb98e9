// Package httpx is the plumbing the three arr HTTP services share: the base
// gin engine (with its request-body size limit and body deadline, and the
// query-parameter rule of JSON routes, CheckQuery, and the duplicate-key rule of
// JSON bodies, UniqueKeys; see docs/api-input.md), API-key
// authentication, Prometheus HTTP metrics, the
// mapping from domain errors to HTTP statuses (a table, see ProblemOf), the
// wrapper through which handlers return their errors to the service's one
// responder (Handler, Handle), each service's public site
// (the base URL of the links it builds and the hosts that may ask for
// them) and the trusted proxies whose forwarding headers are believed. Everything here is safe for
// concurrent use once built.
package httpx
