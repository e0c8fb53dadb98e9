// Package httpx is the plumbing the three arr HTTP services share: the base
// gin engine, API-key authentication, Prometheus HTTP metrics and the
// mapping from domain errors to HTTP statuses. Everything here is safe for
// concurrent use once built.
package httpx
