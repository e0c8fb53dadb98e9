// The official Anthropic TypeScript SDK (@anthropic-ai/sdk) against the
// arr gateway's Messages API. Only the base URL and the API key differ
// from a call to Anthropic (the SDK sends the key in x-api-key). It runs a
// plain message, a stream, a tool round trip, count_tokens and a request
// the gateway refuses (400), reads `routing` from each answer, and prints
// one JSON report. Exit 1 on any failed check.
//
//   ARR_BASE_URL=http://127.0.0.1:8082 ARR_API_KEY=arr_gw_... node check.mjs
import Anthropic from "@anthropic-ai/sdk";

const client = new Anthropic({ baseURL: process.env.ARR_BASE_URL, apiKey: process.env.ARR_API_KEY, maxRetries: 0 });
const model = process.env.ARR_MODEL ?? "claude-sonnet-4-5";
const report = {};
const problems = [];
const check = (ok, what) => { if (!ok) problems.push(what); };
const isHash = (h) => typeof h === "string" && /^[0-9a-f]{64}$/.test(h);

// 1. Plain message, with a system prompt; routing from the body and the headers.
{
  const { data, response } = await client.messages
    .create({ model, max_tokens: 256, system: "Be brief.", messages: [{ role: "user", content: "Say hello" }] })
    .withResponse();
  const text = data.content.filter((b) => b.type === "text").map((b) => b.text).join("");
  report.plain = { id: data.id, model: data.model, text, stop_reason: data.stop_reason, usage: data.usage, routing: data.routing, header_tier: response.headers.get("x-arr-tier") };
  check(data.type === "message" && data.role === "assistant" && data.id.startsWith("msg_"), "plain: envelope");
  check(text.startsWith("Hello from"), "plain: text");
  check(data.stop_reason === "end_turn", "plain: stop_reason");
  check(data.usage.input_tokens > 0 && data.usage.output_tokens > 0, "plain: usage");
  check(data.routing && isHash(data.routing.audit_hash) && data.routing.tier === response.headers.get("x-arr-tier"), "plain: routing");
}

// 2. Streamed: the SDK's MessageStream assembles the events into the final message.
{
  const stream = client.messages.stream({ model, max_tokens: 256, messages: [{ role: "user", content: "Stream a few words" }] });
  const types = [];
  let deltas = "", routing = null;
  stream.on("streamEvent", (ev) => {
    types.push(ev.type);
    if (ev.type === "message_delta" && ev.routing) routing = ev.routing;
  });
  stream.on("text", (t) => { deltas += t; });
  const final = await stream.finalMessage();
  const text = final.content.filter((b) => b.type === "text").map((b) => b.text).join("");
  report.stream = { text, deltas, stop_reason: final.stop_reason, usage: final.usage, routing, types: [...new Set(types)] };
  check(text.startsWith("Hello from") && deltas === text, "stream: text");
  check(types[0] === "message_start" && types.at(-1) === "message_stop" && types.includes("content_block_delta") && types.includes("message_delta"), "stream: event sequence");
  check(final.stop_reason === "end_turn" && final.usage.output_tokens > 0 && final.usage.input_tokens > 0, "stream: stop_reason and usage");
  check(routing && isHash(routing.audit_hash), "stream: routing on message_delta");
}

// 3. Tool round trip: two tool_use blocks (the second streamed, its input as
// input_json_delta), then their tool_result blocks.
{
  const tools = ["get_weather", "get_time"].map((name) => ({
    name, description: `The ${name.slice(4)} in a city`,
    input_schema: { type: "object", properties: { input: { type: "string" } } },
  }));
  const messages = [{ role: "user", content: "Weather and time in Paris?" }];
  const first = await client.messages.create({ model, max_tokens: 256, messages, tools, tool_choice: { type: "auto" } });
  const uses = first.content.filter((b) => b.type === "tool_use");
  check(first.stop_reason === "tool_use" && uses.length === 2 && uses[0].name === "get_weather" && typeof uses[0].input === "object", "tools: two tool_use blocks");
  const streamed = await client.messages.stream({ model, max_tokens: 256, messages, tools }).finalMessage();
  const streamedUses = streamed.content.filter((b) => b.type === "tool_use");
  check(streamed.stop_reason === "tool_use" && streamedUses.length === 2 && streamedUses[1].input.input === "Weather and time in Paris?", "tools: streamed tool_use input");
  messages.push({ role: "assistant", content: first.content });
  messages.push({ role: "user", content: uses.map((u) => ({ type: "tool_result", tool_use_id: u.id, content: `${u.name}: ok` })) });
  const second = await client.messages.create({ model, max_tokens: 256, messages, tools });
  const answer = second.content.filter((b) => b.type === "text").map((b) => b.text).join("");
  report.tools = { calls: uses.map((u) => u.name), streamed: streamedUses.map((u) => u.input), answer, routing: second.routing };
  check(answer.includes("get_weather: ok; get_time: ok"), "tools: results reach the model");
  check(isHash(second.routing?.audit_hash), "tools: routing");
}

// 4. count_tokens.
{
  const c = await client.messages.countTokens({ model, messages: [{ role: "user", content: "Count these words for me" }] });
  report.count = c;
  check(Number.isInteger(c.input_tokens) && c.input_tokens > 0, "count_tokens");
}

// 5. A request the gateway refuses: the SDK's typed error, Anthropic's shape.
{
  let err = null;
  try {
    await client.messages.create({ model, max_tokens: 0, messages: [{ role: "user", content: "x" }] });
  } catch (e) {
    err = e;
  }
  report.bad_request = { name: err?.constructor?.name, status: err?.status, type: err?.error?.type, error: err?.error?.error };
  check(err instanceof Anthropic.BadRequestError && err.status === 400, "400: BadRequestError");
  check(err?.error?.type === "error" && err?.error?.error?.type === "invalid_request_error" && err?.error?.error?.code === "invalid_value", "400: Anthropic's error shape");
}

report.problems = problems;
console.log(JSON.stringify(report));
process.exit(problems.length === 0 ? 0 : 1);
