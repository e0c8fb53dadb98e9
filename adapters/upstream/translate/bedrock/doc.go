// Package bedrock translates between the gateway's chat completions
// (domain/chat) and AWS Bedrock's Converse API, both ways, as pure
// functions: a chat request to a Converse request body (FromChat), a
// Converse reply to a chat completion (ToChat), ConverseStream's events
// to chat chunks (Streamer), and Bedrock's error replies and stream
// exceptions to what the gateway does with them (Classify).
//
// What maps, chat to Converse:
//   - system and developer messages, wherever they stand, become the
//     top-level system blocks (Converse has no system role);
//   - user text and image parts become text and image blocks (an image
//     must be a data: URL of PNG, JPEG, GIF or WebP: Converse takes the
//     bytes, never a URL to fetch); file parts are refused;
//   - an assistant's tool_calls become toolUse blocks (their arguments a
//     JSON object), tool messages toolResult blocks of a user message;
//     consecutive messages of one role are merged, as Converse wants the
//     roles to alternate;
//   - a tool call id Converse does not take as a toolUseId (it takes
//     [a-zA-Z0-9_-]{1,64}; another upstream's ids need not fit: arr's
//     own Gemini ids carry a thought signature, Kimi's a dot and a colon)
//     is sent as "t" and a prefix of its SHA-256 in hex (16 digits, more
//     should that collide with another id of the request): one to one
//     within the request, the same for the call and its result. Plan
//     keeps the mapping, and a reply that names such an id gets the
//     client's own back;
//   - tools become toolConfig.tools, tool_choice auto, required and a
//     named function toolChoice auto, any and tool ("none" sends no tools
//     unless the conversation already holds tool blocks, which Converse
//     reads only with a toolConfig);
//   - response_format json_object and json_schema are asked for with one
//     forced tool whose input schema is the format's (json_object: any
//     object); that toolUse's input is the reply's whole text (whatever
//     text the model wrote before it is dropped, as it is not JSON), with
//     finish_reason "stop". JSON mode together with the request's own
//     tools is refused (Converse forces one tool or none);
//   - max_completion_tokens, temperature, top_p and stop become
//     inferenceConfig's maxTokens, temperature, topP and stopSequences
//     ("stop": null and empty strings are no stop sequence);
//   - Options.CachePoints puts a cachePoint after the system blocks and
//     after the tools: the prefix Bedrock's prompt cache keeps (only
//     models Bedrock documents as caching prompts take cache points).
//
// The rest of a chat request (user, safety_identifier, verbosity,
// reasoning_effort, parallel_tool_calls, prompt_cache_key) has no
// Converse counterpart and is not sent.
//
// Back: stopReason end_turn and stop_sequence are "stop", max_tokens and
// model_context_window_exceeded "length", tool_use "tool_calls",
// guardrail_intervened and content_filtered "content_filter". Usage:
// Bedrock's inputTokens are the uncached input tokens, its
// cacheReadInputTokens and cacheWriteInputTokens counted apart (as
// Anthropic counts them), so prompt_tokens is their sum and
// prompt_tokens_details.cached_tokens the cache reads; Usage keeps the
// cache writes for the gateway's count (routing.Tokens.CacheWrite). A
// count below zero or over routing.MaxTokenCount, or input counts whose
// sum is over it, make the reply malformed. A stream ends with its
// metadata event (the usage) after messageStop: Streamer.Ended.
// Reasoning blocks are not passed on (chat has no field for them).
//
// It imports the standard library and domain only.
package bedrock
