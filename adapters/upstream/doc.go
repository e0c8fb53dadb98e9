// Package upstream calls OpenAI-compatible chat-completion servers (OpenAI,
// vLLM, Ollama, llama.cpp, any /v1/chat/completions) for the gateway: one
// pooled HTTP client, a timeout on every call, and a circuit breaker per
// upstream model (github.com/sony/gobreaker) so a failing upstream is
// skipped at once instead of being waited on. Errors say whether another
// upstream should be tried (5xx, 429, timeouts, connection failures, an
// open breaker) or the request itself is at fault (other 4xx).
//
// A Client is safe for concurrent use.
package upstream
