// Package gemini translates between the gateway's chat wire types
// (domain/chat, OpenAI's chat completions) and Google's Gemini
// generateContent API, as served by the Gemini API
// ({base}/models/{m}:generateContent) and by Vertex AI
// (…/publishers/google/models/{m}:generateContent): one translator for
// the pair, in one place, both ways.
//
//   - Request: a chat.Request out as a GenerateContentRequest body:
//     system and developer messages as systemInstruction, the rest as
//     contents (assistant as role "model", tool results as
//     functionResponse parts of a user turn), images and files in data:
//     URLs as inlineData, an image's http(s) URL as fileData (any other
//     scheme, gs:// or file://, is the client's 400), function tools as functionDeclarations (their
//     JSON Schema as parametersJsonSchema), tool_choice as toolConfig,
//     temperature, top_p, max_completion_tokens, stop and response_format
//     as generationConfig (a JSON schema as responseJsonSchema, Gemini's
//     field for JSON Schema as it is).
//   - Completion and CompletionBody: a GenerateContentResponse in as a
//     chat completion (finishReason as finish_reason, functionCall parts
//     as tool_calls, usageMetadata as usage with cached_tokens and
//     reasoning_tokens).
//   - Stream: the events of streamGenerateContent?alt=sse in as
//     chat.completion.chunk bodies, ending with a usage chunk.
//   - ParseError and ChatError: Google's error body, read and told in
//     OpenAI's error shape.
//
// Gemini's function calls carry no id in the Gemini API; a reply's tool
// call ids are made from the call (deterministic; Gemini's own id when it
// sends one of the alphabet below), and carry the call's thoughtSignature
// after SignatureSep, its bytes in URL-safe base64 without padding, so
// the next request can send it back as Gemini 3 requires; a turn whose
// first call has none (begun on another model) sends SkipSignature. An id
// keeps to [A-Za-z0-9_-], the alphabet of Anthropic's tool_use ids, so a
// conversation can go on on a Claude model; it can be long (a signature
// is opaque, often hundreds of characters), past the 40 characters some
// clients assume of an id. A tool result is matched to its call
// by id within the request, for the function's name.
//
// Usage counts are clamped to [0, routing.MaxTokenCount] and their sums
// saturate there. A stream drops what comes for a choice after its
// finish_reason (Stream).
//
// Everything here is a pure function of its input (no I/O); a Stream is
// not safe for concurrent use, everything else is.
package gemini
