// Package anthropic translates the gateway's chat completions to
// Anthropic's Messages API and back: the pair "chat ingress → Anthropic
// Messages upstream" (the other direction, a Messages request served by
// chat upstreams, is readapi/gateway/messages; the two apply the same
// rules in reverse, and a round trip of what both can say is the
// identity).
//
// Request turns a chat-completion body (as commands/complete sends it
// upstream) into a Messages body. It reads each member by its exact name
// (the body as a map first, then each known field from its member): a
// name that is not exactly a chat field is refused, null or not, so a
// name encoding/json would fold onto a field ("max_to\u212Aens" with a
// KELVIN SIGN, "stream_option\u017f" with a LONG S, "MAX_TOKENS") can
// never set or unset one, such as the max_tokens cap or include_usage
// arr adds. Then:
//   - system and developer messages before the first turn become the
//     system blocks; later ones stay system messages in place (as the
//     Messages ingress reads them);
//   - user, assistant and tool messages become alternating user and
//     assistant turns: consecutive messages of one role are merged, tool
//     messages become tool_result blocks at the head of a user turn, an
//     assistant's tool_calls tool_use blocks whose input is the parsed
//     arguments (arguments that are not a JSON object are an ErrInvalid);
//     a tool call id used twice, or answered by two tool messages, is
//     refused (Anthropic's tool_use ids are unique);
//   - a user message with no content ("", [], only empty text parts), or
//     an assistant one with neither text nor tool calls but the last, is
//     refused (Anthropic refuses an empty message but a final assistant
//     one);
//   - empty text parts and empty system messages are left out (Anthropic
//     refuses empty text blocks); a request of system messages only is
//     refused;
//   - image_url parts become image blocks (a data: URL a base64 source,
//     an http(s) URL a url source), PDF file parts document blocks; the
//     data must be padded base64 (RFC 4648, no line breaks);
//   - max_tokens is max_completion_tokens, else max_tokens, at most
//     Options.MaxTokens (the model's output limit; MaxOutputTokens, 128000,
//     when that is 0, so 2^63-1 is not sent as it is); a request without
//     one gets Options.MaxTokens, or DefaultMaxTokens when that is 0
//     (Anthropic requires max_tokens);
//   - temperature (0 to 1 only: Anthropic's range), top_p, stop as
//     stop_sequences, tools with input_schema, tool_choice (auto, none,
//     required as any, a named function as tool; parallel_tool_calls
//     false as disable_parallel_tool_use), user (else safety_identifier)
//     as metadata.user_id, stream;
//   - response_format json_schema becomes output_config.format (Anthropic's
//     structured outputs); json_object is refused (Anthropic has no
//     schemaless JSON mode: send a json_schema);
//   - reasoning_effort becomes extended thinking with a budget: low 1024,
//     medium 4096, high 16384, xhigh 32768 tokens (none and minimal: no
//     thinking), cut to half of max_tokens (at least 1024, and below
//     max_tokens: a request with less is refused); thinking refuses a temperature other
//     than 1, a top_p below 0.95 and a forced tool_choice, as Anthropic
//     does. A conversation whose last assistant turn has tool_use (a tool
//     loop under way) is sent without thinking: with thinking enabled
//     Anthropic requires that turn to start with a thinking block, which
//     chat cannot carry back (nor its signature), and thinking may not be
//     turned on in the middle of an assistant turn; the turn after the
//     next user message thinks again;
//   - prompt_cache_key (or Options.Cache) asks for Anthropic's automatic
//     prompt caching (a top-level cache_control); verbosity and store are
//     accepted and have no effect;
//   - n above 1, logprobs, top_logprobs, seed, penalties, logit_bias,
//     audio and the other fields Anthropic has no equivalent for are
//     refused with an ErrInvalid naming the field, and so is a field chat
//     completions do not have.
//
// Reply turns a Messages reply into a chat completion: text blocks
// joined, tool_use blocks as tool_calls, thinking as the message's
// reasoning_content (redacted thinking dropped), stop_reason as
// finish_reason (StopReason), and the usage with every input token in
// prompt_tokens, cache reads as prompt_tokens_details.cached_tokens and
// cache writes as prompt_tokens_details.cache_write_tokens; a usage
// without input_tokens or output_tokens is ErrMalformed. The counts
// come back as routing.Tokens too (CacheRead and CacheWrite apart), which
// is what the cost is priced by: chat's usage has no standard field for
// cache writes.
//
// A Stream turns a Messages stream, fed one event at a time, into
// chat.completion.chunk data (a usage chunk last when asked); its Tokens
// are the stream's counts as Reply's, message_delta's cumulative counts
// never below message_start's. A stream out of the API's order is
// ErrMalformed, never Done: message_start (its usage with input_tokens
// and output_tokens) first; blocks started and stopped, a tool_use
// block's whole input a JSON object; one message_delta after every block
// stopped, then message_stop alone (message_stop without message_delta,
// which carries the final usage, is a cut); each event's name its data's
// type. TranslateError turns an Anthropic
// error reply into OpenAI's error shape with its status (529 overloaded
// as 503); a stream's error event is the same *Error.
//
// The chat shapes written here that domain/chat does not have (a reply's
// object and role, reasoning_content, a tool call delta without its id,
// prompt_tokens_details.cache_write_tokens) are defined in wire.go.
//
// The package is pure: no I/O, no clock (the caller passes created
// times). Functions are safe for concurrent use; a Stream is not, but
// each stream has its own.
package anthropic
