// Package upstreamtest is a real HTTP server on loopback that speaks the
// OpenAI chat-completions wire format (POST /v1/chat/completions, JSON and
// server-sent events with include_usage and [DONE], tool calls, JSON mode),
// for tests and benchmarks of the gateway. Per model it can be told to
// wait, fail with a status, hang, cut a stream off after some chunks, or
// report prompt tokens read from a prompt cache (Behavior.CachedTokens).
//
// Its replies are a deterministic function of the request: "Hello from
// <model>: <last user text>", a tool call per offered tool (two when
// parallel tool calls are allowed and two tools are offered), the tool
// results echoed back, or a JSON object in JSON mode.
//
// It embeds too (POST /v1/embeddings, embeddings.go): string, string-array
// and token-array input, encoding_format float or base64, dimensions. A
// vector is a deterministic function of the model and the input: unit
// length, as long as dimensions asks, else the model's own length
// (Behavior.Dimensions, or that of a well-known model, else 16).
//
// It stands in for Anthropic's Messages API too (POST /v1/messages,
// anthropic.go): it decodes the request with the official SDK's types
// (anthropic-sdk-go), refuses what the API refuses (no x-api-key: 401; no
// anthropic-version, a field the SDK does not know, no model, max_tokens
// or messages: 400), answers a message or its server-sent events
// (message_start … message_stop, with a ping), and counts prompt caching:
// the prefix through a cache_control breakpoint is written to the cache
// by the first request that carries it (cache_creation_input_tokens) and
// read by later ones (cache_read_input_tokens), a breakpoint looking back
// over the 20 blocks before it as Anthropic's does (blocks compared without
// their cache_control, so a breakpoint moved on to the next turn reads the
// prefix the last one wrote). AnthropicBehavior adds an
// error event, a stream without message_stop and a huge delta; LastBody
// is the last request's body byte for byte.
//
// It stands in for Azure OpenAI deployments too (POST
// /openai/deployments/{deployment}/chat/completions, azure.go: the base
// URL without /v1): a request without api-version is a 404, without
// api-key or a bearer token a 401, a body openai-go's
// ChatCompletionNewParams cannot read or with a field it does not have a
// 400; the rest is answered as the chat route answers. LastAzure is what
// it saw of a deployment's last request.
//
// It stands in for Google's Gemini API (POST /v1beta/models/{m}:generateContent
// and :streamGenerateContent?alt=sse, gemini.go) and for Gemini on Vertex
// AI (POST /v1/projects/{p}/locations/{l}/publishers/google/models/{m}:…):
// it decodes the request with the official SDK's types (google.golang.org/genai),
// refuses unknown fields, a missing x-goog-api-key (403) or one other
// than SetGeminiKey's (400 API_KEY_INVALID), a Vertex AI call without an
// access token its token endpoint granted (401), function responses that
// do not answer the turn before's calls and a call turn without its
// thought signature (400), and answers in Gemini's wire format. Its OAuth2
// token endpoint (POST /token, token.go) grants tokens for JWT assertions
// signed by the service accounts ServiceAccount made (their JSON's
// token_uri is it); SetTokenFailure makes it fail. Claude on Vertex AI
// (…/publishers/anthropic/models/{m}:rawPredict and :streamRawPredict,
// vertex.go) is the Messages stand-in behind the same token check, the
// body without model and with anthropic_version vertex-2023-10-16.
//
// And for AWS Bedrock's Converse API (POST {BedrockURL}/model/{id}/converse
// and /converse-stream, bedrock.go): it verifies the SigV4 signature by
// signing the request again with the AWS SDK's signer and the secret of
// its access key (BedrockAccessKey; a wrong key, secret or session token,
// a credential scope of another region than BedrockRegion, or an
// X-Amz-Date more than 5 minutes from the clock is a 403), reads the body
// with the SDK's own deserializer into bedrockruntime's types and writes
// it back with the SDK's serializer, refusing a body that does not come
// back the same or breaks the API's rules (roles alternating, toolUseIds
// and tool names of [a-zA-Z0-9_-]{1,64}, an input schema an object,
// temperature and topP within 0 to 1, no empty stop sequence: a 400
// ValidationException, named in X-Amzn-ErrorType), and answers a reply or
// ConverseStream's event-stream frames (messageStart … messageStop,
// metadata), encoded with the SDK's eventstream encoder. cachePoint blocks
// are cache breakpoints, counted as the Messages stand-in counts
// cache_control. BedrockBehavior adds exception events and a stream
// without messageStop.
//
// A Server is safe for concurrent use.
package upstreamtest
