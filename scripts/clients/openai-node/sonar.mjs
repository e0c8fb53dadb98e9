// The official OpenAI Node client against arr's Sonar-compatible route
// (POST /v1/chat/completions on the answer service), as Perplexity
// documents using it: only the base URL and the API key change, and the
// search filters go in the body. It runs a plain completion, a stream, and
// a completion with search_domain_filter and search_recency_filter, and
// prints one JSON report with each call's text, citations and
// search_results. Exit 1 on any failed check.
//
//   ARR_BASE_URL=http://127.0.0.1:8081/v1 ARR_API_KEY=arr_ans_... Q="…" KEEP_HOST=localhost node sonar.mjs
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.env.ARR_BASE_URL, apiKey: process.env.ARR_API_KEY, maxRetries: 0 });
const q = process.env.Q;
const report = {};
const problems = [];
const check = (ok, what) => { if (!ok) problems.push(what); };
const messages = [{ role: "system", content: "Be precise and concise." }, { role: "user", content: q }];

// 1. Plain: the message, citations and search_results in the same order.
{
  const r = await client.chat.completions.create({ model: "sonar", messages });
  report.plain = { text: r.choices[0].message.content, citations: r.citations, search_results: r.search_results, object: r.object, usage: r.usage };
  check(r.object === "chat.completion" && r.choices[0].finish_reason === "stop", "plain: a chat.completion that stopped");
  check(r.citations?.length > 0 && r.citations.every((u, i) => r.search_results[i]?.url === u), "plain: citations are search_results' URLs");
}

// 2. Streamed: content deltas; citations on every chunk; [DONE] ends it.
{
  const stream = await client.chat.completions.create({ model: "sonar", messages, stream: true });
  let text = "", chunks = 0, citations = null, last = null;
  for await (const chunk of stream) {
    chunks++;
    text += chunk.choices[0]?.delta?.content ?? "";
    check(Array.isArray(chunk.citations), "stream: citations on every chunk");
    citations = chunk.citations;
    last = chunk;
  }
  report.stream = { text, chunks, citations, finish: last?.choices[0]?.finish_reason, object: last?.object };
  check(text.length > 0 && chunks > 2, "stream: content chunks");
  check(last?.choices[0]?.finish_reason === "stop", "stream: the last chunk stops");
}

// 3. Filters in the body, as Perplexity's extra parameters.
{
  const r = await client.chat.completions.create({
    model: "sonar", messages, search_domain_filter: [process.env.KEEP_HOST], search_recency_filter: "month",
  });
  report.filtered = { text: r.choices[0].message.content, citations: r.citations, search_results: r.search_results };
  check(r.citations?.length > 0, "filtered: citations");
}

// 4. A bad filter: a 400 with the OpenAI error shape.
{
  try {
    await client.chat.completions.create({ model: "sonar", messages, search_recency_filter: "decade" });
    problems.push("bad recency: no error");
  } catch (e) {
    report.bad_filter = { status: e.status, message: e.message, type: e.type, param: e.param };
    check(e.status === 400 && e.param === "search_recency_filter", "bad recency: a 400 naming the parameter");
  }
}

report.problems = problems;
console.log(JSON.stringify(report));
process.exit(problems.length === 0 ? 0 : 1);
