// The official OpenAI Node client's embeddings against the arr gateway.
// Only the base URL and the API key differ from a call to OpenAI. It runs
// the SDK's default (it asks for base64 and decodes the float32s itself),
// an array with dimensions as floats, an explicit base64 request, token
// arrays, and two refusals, and prints one JSON report: each vector's
// length and first numbers (the Go test compares them with the loopback
// upstream's vectors), routing, usage and the audit hash header. Exit 1 on
// any failed check.
//
//   ARR_BASE_URL=http://127.0.0.1:8082/v1 ARR_API_KEY=arr_gw_... node embeddings.mjs
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.env.ARR_BASE_URL, apiKey: process.env.ARR_API_KEY, maxRetries: 0 });
const report = {};
const problems = [];
const check = (ok, what) => { if (!ok) problems.push(what); };
const isHash = (h) => typeof h === "string" && /^[0-9a-f]{64}$/.test(h);
const head = (v) => Array.from(v).slice(0, 8);
const summary = (data) => data.map((d) => ({ index: d.index, length: d.embedding.length, head: head(d.embedding) }));

// 1. The SDK's default: base64 on the wire, floats for the caller.
{
  const { data, response } = await client.embeddings
    .create({ model: "text-embedding-3-small", input: "hello from node" })
    .withResponse();
  report.default = { vectors: summary(data.data), routing: data.routing, usage: data.usage, model: data.model, audit_header: response.headers.get("x-arr-audit-hash") };
  check(data.data.length === 1 && data.data[0].embedding.length === 1536, "default: one vector of 1536");
  check(data.routing && isHash(data.routing.audit_hash) && data.routing.audit_hash === response.headers.get("x-arr-audit-hash"), "default: routing and header");
  check(data.usage && data.usage.prompt_tokens > 0, "default: usage");
}

// 2. An array of strings, shortened, as JSON numbers.
{
  const data = await client.embeddings.create({ model: "embed-small", input: ["alpha", "beta"], dimensions: 64, encoding_format: "float" });
  report.array = { vectors: summary(data.data), routing: data.routing };
  check(data.data.length === 2 && data.data.every((d, i) => d.index === i && d.embedding.length === 64), "array: two vectors of 64");
}

// 3. base64 asked for explicitly: the caller decodes.
{
  const data = await client.embeddings.create({ model: "auto", input: "gamma", dimensions: 32, encoding_format: "base64" });
  const raw = data.data[0].embedding;
  check(typeof raw === "string", "base64: a string");
  const buf = Buffer.from(raw, "base64");
  const floats = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  report.base64 = { vectors: [{ index: 0, length: floats.length, head: head(floats) }], routing: data.routing };
  check(floats.length === 32, "base64: 32 float32s");
}

// 4. Token arrays.
{
  const data = await client.embeddings.create({ model: "auto", input: [[1, 2, 3], [4, 5]] });
  report.tokens = { vectors: summary(data.data), usage: data.usage };
  check(data.data.length === 2 && data.usage.prompt_tokens === 5, "tokens: two vectors, 5 tokens");
}

// 5. Refusals surface as the SDK's typed errors.
const refusal = async (body) => {
  try {
    await client.embeddings.create(body);
    return { status: 200 };
  } catch (e) {
    return { status: e.status, code: e.code, type: e.type, param: e.param, message: e.message };
  }
};
report.empty = await refusal({ model: "auto", input: "" });
check(report.empty.status === 400 && report.empty.code === "empty_input", "empty input: 400 empty_input");
report.chat_model = await refusal({ model: "gpt-4.1-nano", input: "x" });
check(report.chat_model.status === 400 && report.chat_model.code === "not_an_embedding_model", "chat model: 400 not_an_embedding_model");

report.problems = problems;
console.log(JSON.stringify(report));
process.exit(problems.length ? 1 : 0);
