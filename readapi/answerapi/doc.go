// Package answer is the answer service's HTTP server: question in, cited answer out, under /api/v1.
// Errors are {"error":{"status","code","message","field"}}; every route is in
// its OpenAPI document, served at /openapi.json.
package answerapi
