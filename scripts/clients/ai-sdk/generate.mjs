// The Vercel AI SDK against the arr gateway: its default OpenAI provider,
// openai('auto'), which calls the Responses API (POST /v1/responses). Only
// the base URL and the API key differ from a call to OpenAI. It runs
// generateText, streamText, a tool call round trip (generateText and
// streamText, two steps each), and structured output (json_schema), reads
// the gateway's routing object from each, and prints one JSON report.
// Exit 1 on any failed check.
//
//   ARR_BASE_URL=http://127.0.0.1:8082/v1 ARR_API_KEY=arr_gw_... node generate.mjs
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, streamText, tool, stepCountIs, Output } from "ai";
import { z } from "zod";

const openai = createOpenAI({ baseURL: process.env.ARR_BASE_URL, apiKey: process.env.ARR_API_KEY });
const model = openai("auto");
const report = {};
const problems = [];
const check = (ok, what) => { if (!ok) problems.push(what); };
const isHash = (h) => typeof h === "string" && /^[0-9a-f]{64}$/.test(h);

// Reads a stream's raw Responses events; returns the routing object of
// response.completed and the event types seen.
async function drain(result) {
  let text = "", routing = null;
  const events = [];
  for await (const part of result.fullStream) {
    if (part.type === "text-delta") text += part.text;
    if (part.type === "raw" && part.rawValue && typeof part.rawValue === "object") {
      events.push(part.rawValue.type);
      if (part.rawValue.type === "response.completed") routing = part.rawValue.response?.routing ?? null;
    }
    if (part.type === "error") problems.push(`stream error: ${part.error?.message ?? part.error}`);
  }
  return { text, routing, events };
}

// 1. generateText: the text, the usage, routing from the response body and
// the tier header.
{
  const r = await generateText({ model, maxRetries: 0, system: "Be brief.", prompt: "Say hello", include: { responseBody: true } });
  report.generate = {
    text: r.text, finish: r.finishReason, usage: r.usage, routing: r.response.body?.routing,
    header_tier: r.response.headers?.["x-arr-tier"], response_id: r.response.id,
  };
  check(r.text.startsWith("Hello from"), "generate: text");
  check(r.finishReason === "stop", "generate: finish reason");
  check(r.usage.inputTokens > 0 && r.usage.outputTokens > 0, "generate: usage");
  check(isHash(r.response.body?.routing?.audit_hash), "generate: routing in the response body");
  check(r.response.body?.routing?.tier === r.response.headers?.["x-arr-tier"], "generate: routing tier matches X-Arr-Tier");
  check(typeof r.response.id === "string" && r.response.id.startsWith("resp_"), "generate: response id");
}

// 2. streamText: the text deltas, the usage of response.completed and its
// routing.
{
  const result = streamText({ model, maxRetries: 0, prompt: "Stream a few words", includeRawChunks: true });
  const s = await drain(result);
  const usage = await result.usage;
  report.stream = { ...s, usage, finish: await result.finishReason };
  check(s.text.startsWith("Hello from"), "stream: text");
  check(usage.inputTokens > 0 && usage.outputTokens > 0, "stream: usage from response.completed");
  check(isHash(s.routing?.audit_hash), "stream: routing on response.completed");
  check(s.events[0] === "response.created" && s.events.at(-1) === "response.completed", "stream: event sequence");
}

// 3. A tool call round trip, not streamed then streamed: step 1 calls the
// tool (a function_call item), step 2 sends its output back
// (function_call_output) and gets the answer.
const weather = tool({
  description: "The weather for a request",
  inputSchema: z.object({ input: z.string() }),
  execute: async ({ input }) => `sunny (${input})`,
});
{
  const r = await generateText({
    model, maxRetries: 0, prompt: "Weather in Paris?", tools: { get_weather: weather }, stopWhen: stepCountIs(2),
    include: { responseBody: true },
  });
  const first = r.steps[0];
  report.tools = {
    steps: r.steps.length, calls: first?.toolCalls.map((c) => ({ name: c.toolName, input: c.input })),
    results: first?.toolResults.map((t) => t.output), text: r.text, routing: r.response.body?.routing,
  };
  check(r.steps.length === 2 && first.finishReason === "tool-calls", "tools: two steps, the first ending in a tool call");
  check(first?.toolCalls[0]?.toolName === "get_weather" && first.toolCalls[0].input.input === "Weather in Paris?", "tools: the call and its arguments");
  check(r.text.includes("sunny (Weather in Paris?)"), "tools: the tool's output reaches the model");
  check(isHash(r.response.body?.routing?.audit_hash), "tools: routing");
}
{
  const result = streamText({
    model, maxRetries: 0, prompt: "Weather in Lyon?", tools: { get_weather: weather }, stopWhen: stepCountIs(2), includeRawChunks: true,
  });
  const s = await drain(result);
  const steps = await result.steps;
  report.tools_stream = { steps: steps.length, text: s.text, routing: s.routing, events: s.events };
  check(steps.length === 2 && steps[0].toolCalls[0]?.toolName === "get_weather", "tools stream: a streamed tool call");
  check(s.events.includes("response.function_call_arguments.delta"), "tools stream: function call argument deltas");
  check(s.text.includes("sunny (Weather in Lyon?)"), "tools stream: the tool's output reaches the model");
  check(isHash(s.routing?.audit_hash), "tools stream: routing");
}

// 4. Structured output: text.format json_schema.
{
  const r = await generateText({
    model, maxRetries: 0, prompt: "Describe yourself",
    output: Output.object({ schema: z.object({ model: z.string(), echo: z.string() }) }),
    include: { responseBody: true, requestBody: true },
  });
  const sent = typeof r.request.body === "string" ? JSON.parse(r.request.body) : r.request.body;
  report.object = { output: r.output, format: sent?.text?.format?.type, routing: r.response.body?.routing };
  check(r.output?.echo === "Describe yourself", "object: the parsed object");
  check(sent?.text?.format?.type === "json_schema", "object: sent as text.format json_schema");
  check(isHash(r.response.body?.routing?.audit_hash), "object: routing");
}

report.problems = problems;
console.log(JSON.stringify(report));
process.exit(problems.length === 0 ? 0 : 1);
