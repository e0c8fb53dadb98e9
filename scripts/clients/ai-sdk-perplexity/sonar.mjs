// The Vercel AI SDK's Perplexity provider against arr's Sonar-compatible
// route (POST /v1/chat/completions on the answer service). Only the base
// URL and the API key differ from a call to Perplexity. It runs
// generateText and streamText on a question, then generateText with a
// domain filter and a recency filter (providerOptions.perplexity), and
// prints one JSON report with each call's text and sources (URLs, in
// order). Exit 1 on any failed check.
//
//   ARR_BASE_URL=http://127.0.0.1:8081/v1 ARR_API_KEY=arr_ans_... Q="…" KEEP_HOST=localhost node sonar.mjs
import { createPerplexity } from "@ai-sdk/perplexity";
import { generateText, streamText } from "ai";

const perplexity = createPerplexity({ baseURL: process.env.ARR_BASE_URL, apiKey: process.env.ARR_API_KEY });
const q = process.env.Q;
const report = {};
const problems = [];
const check = (ok, what) => { if (!ok) problems.push(what); };
const urls = (sources) => sources.filter((s) => s.sourceType === "url").map((s) => s.url);

// 1. generateText: the answer's text and its citations as sources.
{
  const r = await generateText({ model: perplexity("sonar"), maxRetries: 0, prompt: q });
  report.generate = { text: r.text, sources: urls(r.sources), finish: r.finishReason, body: r.response.body };
  check(r.text.length > 0, "generate: text");
  check(r.sources.length > 0, "generate: sources");
  check(r.finishReason === "stop", "generate: finish reason");
}

// 2. streamText: the deltas and the sources of the first chunk.
{
  const result = streamText({ model: perplexity("sonar"), maxRetries: 0, prompt: q });
  let text = "", deltas = 0;
  const sources = [];
  for await (const part of result.fullStream) {
    if (part.type === "text-delta") { text += part.text; deltas++; }
    if (part.type === "source" && part.sourceType === "url") sources.push(part.url);
    if (part.type === "error") problems.push(`stream error: ${part.error?.message ?? part.error}`);
  }
  report.stream = { text, sources, deltas, finish: await result.finishReason };
  check(text.length > 0 && deltas > 0, "stream: text deltas");
  check(sources.length > 0, "stream: sources");
}

// 3. Filters: a domain allow list and a recency window.
{
  const r = await generateText({
    model: perplexity("sonar"), maxRetries: 0, prompt: q,
    providerOptions: { perplexity: { search_domain_filter: [process.env.KEEP_HOST], search_recency_filter: "month" } },
  });
  report.filtered = { text: r.text, sources: urls(r.sources) };
  check(r.sources.length > 0, "filtered: sources");
}

// 4. An unknown model: the provider's error carries the 400's message.
{
  try {
    await generateText({ model: perplexity("sonar-ultra"), maxRetries: 0, prompt: q });
    problems.push("unknown model: no error");
  } catch (e) {
    report.unknown_model = { status: e.statusCode, message: e.message };
    check(e.statusCode === 400 && /sonar-pro/.test(e.message), "unknown model: a 400 naming the known models");
  }
}

report.problems = problems;
console.log(JSON.stringify(report));
process.exit(problems.length === 0 ? 0 : 1);
