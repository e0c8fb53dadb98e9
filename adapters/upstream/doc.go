// Package upstream calls OpenAI-compatible chat-completion servers (OpenAI,
// vLLM, Ollama, llama.cpp, any /v1/chat/completions), Anthropic's
// Messages API (/v1/messages, anthropic.go), Google's Gemini, on the
// Gemini API (x-goog-api-key) and on Vertex AI (an OAuth2 token of a
// service account), gemini.go, and AWS Bedrock's Converse API
// (bedrock.go: a chat request translated by translate/bedrock, signed
// with SigV4 from the standard AWS credential chain, its reply and its
// event-stream frames translated back to a chat completion and chat
// chunks); chosen per call by Request.API, each body in its API's format
// (translate/gemini makes and reads Gemini's from the chat types) for
// the gateway: one
// pooled HTTP client, a timeout on every call, and a circuit breaker per
// upstream model (github.com/sony/gobreaker) so a failing upstream is
// skipped at once instead of being waited on. Errors say whether another
// upstream should be tried (5xx, 429, timeouts, connection failures, an
// open breaker; Anthropic's 529 overloaded; a Vertex AI token that could
// not be had; Bedrock's throttling, a failing model, the operator's
// credentials) or the request itself is at fault (other 4xx, such as
// Bedrock's ValidationException, whose status and body are kept for the
// client and never count against the breaker).
//
// Vertex AI's access tokens (vertexauth.go): the credentials variable's
// file read strictly as a service-account key (no other credential kind,
// no browser flow, no metadata server), afresh at each fetch (a rotated
// key is used by the next one), and traded by golang.org/x/oauth2's JWT
// flow (google.JWTConfigFromJSON) at the file's token_uri, every request
// of it bound to the call's context and timeout, one fetch at a time per
// variable and no call waiting on it past its own context. A token
// Vertex AI refuses (a 401 answer, or a stream's first event with code
// 401) is dropped; a token error leaves none held. No error carries the
// variable's value or the file's text. A Vertex AI project and location
// are checked against Google's characters before they go in the URL.
//
// A Client is safe for concurrent use.
package upstream
