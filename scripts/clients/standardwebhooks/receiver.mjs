// A webhook endpoint for the records service's end-to-end test of list
// monitors: every POST is verified with the standardwebhooks library
// (the specification's own JavaScript implementation) and logged; how
// each path answers is set by the test. It listens on 127.0.0.1 only and
// prints {"port": N} once listening.
//
// Control (JSON in, JSON out):
//   POST /_secret   body: the monitor's whsec_ secret
//   POST /_mode     {"path": "/hook", "mode": "ok" | "fail-first" | "fail" | "hold" | "guardrail"}
//                   (guardrail: answer a verified call as the gateway's
//                   webhook guardrail, {"verdict":"allow"}, refusing a
//                   prompt that says "forbidden")
//   GET  /_log      every request: path, webhook-id, verified, error,
//                   payload, answer (the status sent, "held", or "closed"
//                   when the sender hung up first) and acked (a 2xx
//                   answer was written out to a live connection)
import http from "node:http";
import { Webhook } from "standardwebhooks";

let secret = "";
const modes = new Map();
const log = [];
const seen = new Map();

function readBody(req, limit) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on("data", (c) => {
      size += c.length;
      if (size > limit) {
        reject(new Error("body too large"));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function json(res, status, v) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(v));
}

const server = http.createServer(async (req, res) => {
  let body;
  try {
    body = await readBody(req, 1 << 20);
  } catch (e) {
    return json(res, 413, { error: String(e) });
  }
  const path = new URL(req.url, "http://127.0.0.1").pathname;
  if (path === "/_secret" && req.method === "POST") {
    secret = body.trim();
    return json(res, 200, { ok: true });
  }
  if (path === "/_mode" && req.method === "POST") {
    const m = JSON.parse(body);
    modes.set(m.path, m.mode);
    return json(res, 200, { ok: true });
  }
  if (path === "/_log" && req.method === "GET") {
    return json(res, 200, log);
  }
  const id = req.headers["webhook-id"] || "";
  const entry = { path, id, at: new Date().toISOString(), verified: false, error: "", payload: null, answer: null, acked: false };
  try {
    entry.payload = new Webhook(secret).verify(body, req.headers);
    entry.verified = true;
  } catch (e) {
    entry.error = String(e && e.message ? e.message : e);
  }
  log.push(entry);
  const n = (seen.get(id) || 0) + 1;
  seen.set(id, n);
  const mode = modes.get(path) || "ok";
  let status = entry.verified ? 200 : 400;
  if (mode === "fail" || (mode === "fail-first" && n === 1)) status = 500;
  if (mode === "hold") {
    entry.answer = "held";
    res.on("close", () => {
      if (!res.writableEnded) entry.answer = "closed";
    });
    return;
  }
  entry.answer = status;
  res.on("finish", () => {
    entry.acked = status >= 200 && status < 300;
  });
  if (mode === "guardrail" && entry.verified) {
    const texts = (entry.payload && entry.payload.data && entry.payload.data.texts) || [];
    return json(res, status, { verdict: texts.some((t) => /forbidden/i.test(t)) ? "refuse" : "allow" });
  }
  json(res, status, { received: id });
});

server.listen(0, "127.0.0.1", () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + "\n");
});

process.on("SIGTERM", () => server.close(() => process.exit(0)));
