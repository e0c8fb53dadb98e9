// Package readapi holds the gin HTTP servers of arr's three services. The
// sub-packages answer, gateway and records each build one service's routes,
// error responder and OpenAPI document; httpx holds what they share: the
// base engine (request ids, body limits, access log without secrets,
// metrics, /healthz, /metrics, /openapi.json), key authentication and the
// mapping from domain errors to HTTP statuses.
//
// Handlers answer queries from read models only; they change state by
// calling one command.
package readapi
