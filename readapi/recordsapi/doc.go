// Package records is the records service's HTTP server: read-only JSON over public records and over an account's own imported lists, under /api/v1. Keyed routes take Authorization: Bearer or X-API-Key.
// Errors are {"error":{"status","code","message","field"}}; every route is in
// its OpenAPI document, served at /openapi.json.
package recordsapi
