// The official OpenAI Node client against the arr gateway. Only the base
// URL and the API key differ from a call to OpenAI. It runs a plain
// completion, a stream with usage, a tool-call round trip and JSON mode,
// reads `routing` from each, and prints one JSON report. Exit 1 on any
// failed check.
//
//   ARR_BASE_URL=http://127.0.0.1:8082/v1 ARR_API_KEY=arr_gw_... node check.mjs
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.env.ARR_BASE_URL, apiKey: process.env.ARR_API_KEY, maxRetries: 0 });
const report = {};
const problems = [];
const check = (ok, what) => { if (!ok) problems.push(what); };
const isHash = (h) => typeof h === "string" && /^[0-9a-f]{64}$/.test(h);

// 1. Plain completion; routing from the raw response (body and headers).
{
  const { data, response } = await client.chat.completions
    .create({ model: "auto", messages: [{ role: "user", content: "Say hello" }] })
    .withResponse();
  report.plain = { content: data.choices[0].message.content, routing: data.routing, header_tier: response.headers.get("x-arr-tier") };
  check(data.choices[0].message.content.startsWith("Hello from"), "plain: content");
  check(data.routing && isHash(data.routing.audit_hash) && data.routing.tier === response.headers.get("x-arr-tier"), "plain: routing");
}

// 2. Streamed, with usage; routing on the final chunk.
{
  const stream = await client.chat.completions.create({
    model: "auto", stream: true, stream_options: { include_usage: true },
    messages: [{ role: "user", content: "Stream a few words" }],
  });
  let text = "", usage = null, routing = null, chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    text += chunk.choices[0]?.delta?.content ?? "";
    if (chunk.usage) usage = chunk.usage;
    if (chunk.routing) routing = chunk.routing;
  }
  report.stream = { text, usage, routing, chunks };
  check(text.startsWith("Hello from"), "stream: text");
  check(usage && usage.completion_tokens > 0 && usage.prompt_tokens > 0, "stream: usage");
  check(routing && isHash(routing.audit_hash), "stream: routing on the final chunk");
}

// 3. Tool-call round trip (two parallel calls, then their results).
{
  const tools = ["get_weather", "get_time"].map((name) => ({
    type: "function",
    function: { name, parameters: { type: "object", properties: { city: { type: "string" } } } },
  }));
  const messages = [{ role: "user", content: "Weather and time in Paris?" }];
  const first = await client.chat.completions.create({ model: "auto", messages, tools, tool_choice: "auto" });
  const msg = first.choices[0].message;
  check(first.choices[0].finish_reason === "tool_calls" && msg.tool_calls?.length === 2, "tools: two parallel tool calls");
  messages.push(msg);
  for (const call of msg.tool_calls ?? []) {
    messages.push({ role: "tool", tool_call_id: call.id, content: `${call.function.name}: ok` });
  }
  const second = await client.chat.completions.create({ model: "auto", messages, tools });
  report.tools = { calls: msg.tool_calls?.map((c) => c.function.name), answer: second.choices[0].message.content, routing: second.routing };
  check(second.choices[0].message.content.includes("get_weather: ok"), "tools: results reach the model");
  check(isHash(second.routing?.audit_hash), "tools: routing");
}

// 4. response_format json_object.
{
  const r = await client.chat.completions.create({
    model: "auto", response_format: { type: "json_object" },
    messages: [{ role: "system", content: "Answer in JSON." }, { role: "user", content: "Give me a JSON object" }],
  });
  let parsed = null;
  try { parsed = JSON.parse(r.choices[0].message.content); } catch { /* reported below */ }
  report.json_object = { parsed, routing: r.routing };
  check(parsed !== null && typeof parsed === "object", "json_object: content parses");
  check(isHash(r.routing?.audit_hash), "json_object: routing");
}

report.problems = problems;
console.log(JSON.stringify(report));
process.exit(problems.length === 0 ? 0 : 1);
