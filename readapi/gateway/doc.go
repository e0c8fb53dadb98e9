// Package gateway is the routing gateway's HTTP server: OpenAI-compatible
// routes under /v1, errors in the OpenAI shape
// {"error":{"message","type","param","code"}}, and its OpenAPI document.
package gateway
