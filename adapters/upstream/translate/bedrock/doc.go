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
//   - tools become toolConfig.tools, tool_choice auto, required and a
//     named function toolChoice auto, any and tool ("none" sends no tools
//     unless the conversation already holds tool blocks, which Converse
//     reads only with a toolConfig);
//   - response_format json_object and json_schema are asked for with one
//     forced tool whose input schema is the format's (json_object: any
//     object); its toolUse comes back as the reply's text with
//     finish_reason "stop". JSON mode together with the request's own
//     tools is refused (Converse forces one tool or none);
//   - max_completion_tokens, temperature, top_p and stop become
//     inferenceConfig's maxTokens, temperature, topP and stopSequences;
//   - Options.CachePoints puts a cachePoint after the system blocks and
//     after the tools: the prefix Bedrock's prompt cache keeps.
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
// cache writes for the gateway's count (routing.Tokens.CacheWrite).
// Reasoning blocks are not passed on (chat has no field for them).
//
// It imports the standard library and domain only.
package bedrock
