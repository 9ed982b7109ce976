// `smarter-compact proxy`: a loopback proxy that rewrites Anthropic Messages, OpenAI Responses
// and Chat Completions requests with the engine and forwards them to the configured upstreams.
// Only those routes exist (no open relay); headers and everything outside the message list go
// through untouched; responses stream back as they arrive; any error in the engine or the store
// forwards the request unchanged.
import http from "node:http";
import https from "node:https";
import zlib from "node:zlib";
import { compactorPool } from "../pool.js";
import { askedTtlMs, restoreMarkers, stripMarkers } from "./cache-control.js";
import { engineModule } from "../wasm.js";
import { conversationOf } from "./session.js";
import { spliceList } from "./splice.js";

/** Default port (CONTEXT_PROXY_PORT). */
export const DEFAULT_PORT = 4101;
/** Default upstreams: the vendors' public APIs. */
export const DEFAULT_UPSTREAMS = {
  anthropic: "https://api.anthropic.com",
  openai: "https://api.openai.com/v1",
};
/** Largest request body accepted. */
const MAX_BODY = 256 * 1024 * 1024;
const HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "te",
  "trailer",
  "host",
  "content-length",
]);

/** Which route a request is for: `{ name, upstream, path, field, format }` or null. */
function routeOf(method, url, upstreams) {
  const { pathname, search } = new URL(url, "http://proxy");
  if (method !== "POST") return null;
  const join = (base, p) => `${base.replace(/\/+$/, "")}${p}${search}`;
  switch (pathname.replace(/\/+$/, "")) {
    case "/v1/messages":
      return {
        name: "anthropic",
        target: join(upstreams.anthropic, "/v1/messages"),
        field: "messages",
        format: "anthropic",
      };
    case "/v1/messages/count_tokens":
      return {
        name: "count_tokens",
        target: join(upstreams.anthropic, "/v1/messages/count_tokens"),
      };
    case "/v1/responses":
      return {
        name: "responses",
        target: join(upstreams.openai, "/responses"),
        field: "input",
        format: "responses",
      };
    case "/v1/chat/completions":
      return {
        name: "chat",
        target: join(upstreams.openai, "/chat/completions"),
        field: "messages",
        format: "openai",
      };
    default:
      return null;
  }
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on("data", (c) => {
      size += c.length;
      if (size > MAX_BODY)
        reject(Object.assign(new Error("request body too large"), { status: 413 }));
      else chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** The request body as text, decompressing what Node can; null when it cannot be read. */
function bodyText(raw, encoding) {
  try {
    switch ((encoding ?? "identity").toLowerCase()) {
      case "identity":
        return raw.toString("utf8");
      case "gzip":
        return zlib.gunzipSync(raw).toString("utf8");
      case "deflate":
        return zlib.inflateSync(raw).toString("utf8");
      case "br":
        return zlib.brotliDecompressSync(raw).toString("utf8");
      default:
        return null; // e.g. zstd on Node 20: forwarded as it came
    }
  } catch {
    return null;
  }
}

/**
 * Rewrites a request body; returns the bytes to send upstream (the original bytes when nothing
 * changed or anything failed) and what happened.
 */
async function rewrite(route, headers, raw, pool, glue) {
  const text = bodyText(raw, headers["content-encoding"]);
  if (text === null) return { body: raw, encoded: true, outcome: "unreadable" };
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    return { body: raw, encoded: true, outcome: "not-json" };
  }
  const list = body?.[route.field];
  if (!Array.isArray(list)) return { body: raw, encoded: true, outcome: "no-messages" };
  const { sessionId, subagent } = conversationOf(route.name, headers, body);
  // A subagent's conversation with `subagents = false` goes upstream as the client sent it.
  if (subagent && !(await pool.trimsSubagents()))
    return { body: raw, encoded: true, outcome: "passed-through" };
  const outside = JSON.stringify([
    body.system ?? null,
    body.tools ?? null,
    body.instructions ?? null,
  ]);
  const c = await pool.get(sessionId);
  const { stripped, markers } =
    route.format === "anthropic" ? stripMarkers(list) : { stripped: list, markers: new Map() };
  const res = await c.transform(stripped, {
    format: route.format,
    model: String(body.model ?? ""),
    overheadTokens: glue.estimateTokens(outside),
    cacheTtlMs: route.format === "anthropic" ? askedTtlMs(body) : 0,
  });
  const stats = res.stats;
  // The agent's recall tools run in another process (the MCP server) and read the store's file:
  // what this request added must be on disk before the model can ask for it.
  const flushed = c.flush();
  if (stats.fail_open)
    return { body: raw, encoded: true, outcome: "fail-open", sessionId, stats, flushed };
  const messages = res.sources
    ? restoreMarkers(res.messages, res.sources, markers, { stripped, messages: list })
    : res.messages;
  const same = messages.length === list.length && messages.every((m, i) => m === list[i]);
  if (same) return { body: raw, encoded: true, outcome: "unchanged", sessionId, stats, flushed };
  // Only the list changes: the rest of the body goes upstream byte for byte.
  const spliced = spliceList(raw, text, route.field, messages);
  body[route.field] = messages;
  return {
    body: spliced ?? Buffer.from(JSON.stringify(body), "utf8"),
    encoded: false,
    outcome: "rewritten",
    sessionId,
    stats,
    flushed,
  };
}

function forward(target, req, res, body, keepEncoding) {
  const url = new URL(target);
  const headers = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (HOP.has(k) || (k === "content-encoding" && !keepEncoding)) continue;
    headers[k] = v;
  }
  headers["content-length"] = String(body.length);
  const lib = url.protocol === "https:" ? https : http;
  return new Promise((resolve) => {
    const up = lib.request(url, { method: req.method, headers }, (ur) => {
      const out = {};
      for (const [k, v] of Object.entries(ur.headers))
        if (!HOP.has(k) || k === "content-length") out[k] = v;
      res.writeHead(ur.statusCode ?? 502, out);
      res.flushHeaders();
      ur.on("data", (chunk) => res.write(chunk)); // relayed as it arrives, never buffered
      ur.on("end", () => {
        res.end();
        resolve(ur.statusCode);
      });
      ur.on("error", () => {
        res.destroy();
        resolve(ur.statusCode);
      });
    });
    up.on("error", (e) => {
      if (!res.headersSent) {
        res.writeHead(502, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            type: "error",
            error: {
              type: "api_error",
              message: `smarter-compact proxy: upstream unreachable (${e.code ?? e.message})`,
            },
          }),
        );
      } else res.destroy();
      resolve(502);
    });
    res.on("close", () => up.destroy());
    up.end(body);
  });
}

/**
 * Starts the proxy; resolves when it listens. `upstreams`: `{ anthropic, openai }` base URLs.
 * Returns `{ port, stats, close() }`.
 */
export async function startProxy({
  port = Number(process.env.CONTEXT_PROXY_PORT ?? DEFAULT_PORT),
  upstreams = {},
  stateDir,
  config,
} = {}) {
  const ups = {
    anthropic:
      upstreams.anthropic ??
      process.env.SMARTER_COMPACT_ANTHROPIC_UPSTREAM ??
      DEFAULT_UPSTREAMS.anthropic,
    openai:
      upstreams.openai ?? process.env.SMARTER_COMPACT_OPENAI_UPSTREAM ?? DEFAULT_UPSTREAMS.openai,
  };
  const glue = await engineModule();
  const pool = compactorPool({ stateDir, ...(config ?? {}) });
  const stats = {
    started_at: new Date().toISOString(),
    requests: 0,
    rewritten: 0,
    unchanged: 0,
    fail_opens: 0,
    passed_through: 0,
    upstream_errors: 0,
    store_write_errors: 0,
    sessions: new Set(),
  };
  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          type: "error",
          error: { type: "api_error", message: "smarter-compact proxy: internal error" },
        }),
      );
    });
  });
  async function handle(req, res) {
    if (req.method === "GET" && new URL(req.url, "http://proxy").pathname === "/health") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          ok: true,
          service: "smarter-compact-proxy",
          version: glue.version(),
          pid: process.pid,
          port: server.address().port,
          upstreams: ups,
          ...stats,
          sessions: stats.sessions.size,
        }),
      );
      return;
    }
    const route = routeOf(req.method, req.url, ups);
    if (!route) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          type: "error",
          error: {
            type: "not_found_error",
            message: `smarter-compact proxy: no route for ${req.method} ${new URL(req.url, "http://proxy").pathname}`,
          },
        }),
      );
      return;
    }
    let raw;
    try {
      raw = await readBody(req);
    } catch (e) {
      res.writeHead(e.status ?? 400, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          type: "error",
          error: { type: "invalid_request_error", message: `smarter-compact proxy: ${e.message}` },
        }),
      );
      return;
    }
    stats.requests++;
    let out = { body: raw, encoded: true, outcome: "passed-through" };
    if (route.field) {
      try {
        out = await rewrite(route, req.headers, raw, pool, glue);
      } catch {
        out = { body: raw, encoded: true, outcome: "fail-open" };
      }
    }
    if (out.sessionId) stats.sessions.add(out.sessionId);
    if (out.flushed === false) stats.store_write_errors++;
    if (out.outcome === "rewritten") stats.rewritten++;
    else if (out.outcome === "unchanged") stats.unchanged++;
    else if (out.outcome === "fail-open") stats.fail_opens++;
    else stats.passed_through++;
    const status = await forward(route.target, req, res, out.body, out.encoded);
    if (status >= 500) stats.upstream_errors++;
  }
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  return {
    port: server.address().port,
    upstreams: ups,
    stats,
    async close() {
      const closed = new Promise((r) => server.close(r));
      server.closeAllConnections?.(); // keep-alive clients would hold close() open
      await closed;
      await pool.closeAll();
    },
  };
}
