// `smarter-compact proxy`: a loopback proxy that rewrites Anthropic Messages, OpenAI Responses
// and Chat Completions requests with the engine and forwards them to the configured upstreams.
// Only those routes exist (no open relay); headers and everything outside the message list go
// through untouched; responses stream back as they arrive; any error in the engine or the store
// forwards the request unchanged.
import http from "node:http";
import { createCompactor } from "../compactor.js";
import { codedError } from "../errors.js";
import { compactorPool, configFrom } from "../pool.js";
import { askedTtlMs, restoreMarkers, stripMarkers } from "./cache-control.js";
import { engineModule, instanceExports } from "../wasm.js";
import { bodyBudget, decodeBody, readBody, refusal } from "./body.js";
import { errorBody, forward } from "./forward.js";
import { openSessions } from "./open-sessions.js";
import { proofOf } from "./secret.js";
import { conversationOf } from "./session.js";
import { spliceList } from "./splice.js";

/** Default port (CONTEXT_PROXY_PORT). */
export const DEFAULT_PORT = 4101;
/** Default upstreams: the vendors' public APIs. */
export const DEFAULT_UPSTREAMS = {
  anthropic: "https://api.anthropic.com",
  openai: "https://api.openai.com/v1",
};

/**
 * The proxy's limits, each a `startProxy` option; the first four also come from the environment
 * (`SMARTER_COMPACT_PROXY_MAX_BODY`, `SMARTER_COMPACT_PROXY_MAX_SESSIONS`,
 * `SMARTER_COMPACT_PROXY_MAX_CONNECTIONS`, `SMARTER_COMPACT_UPSTREAM_TIMEOUT_MS`).
 * - `maxBodyBytes`: the largest request body, compressed or decompressed (413 above it). Twice
 *   Anthropic's 32 MB request limit. A body at the cap costs the proxy several times its size
 *   while it is rewritten (the bytes, their text, the parsed JSON, the engine's copy): bench/REPORT.md
 *   ("Proxy soak") states the measured peak.
 * - `maxBufferedBytes`: the request bodies held at once, all requests together (503 beyond it);
 *   at least `maxBodyBytes`.
 * - `maxSessions`: session stores kept open (least recently used closed beyond it).
 * - `maxConnections`: client connections at once (more are dropped).
 * - `upstreamTimeoutMs`: how long the upstream may send nothing (no headers, or no byte of the
 *   answer) before the request is given up with a 504.
 * - `clientStallMs`: how long a client may read nothing of an answer before it is dropped.
 * - `headersTimeoutMs`, `requestTimeoutMs`: to receive a request's headers, and all of it (408).
 */
export const DEFAULT_LIMITS = {
  maxBodyBytes: 64 * 1024 * 1024,
  maxBufferedBytes: 256 * 1024 * 1024,
  maxSessions: 64,
  maxConnections: 128,
  upstreamTimeoutMs: 600_000,
  clientStallMs: 120_000,
  headersTimeoutMs: 30_000,
  requestTimeoutMs: 300_000,
};
const LIMIT_ENV = {
  maxBodyBytes: "SMARTER_COMPACT_PROXY_MAX_BODY",
  maxBufferedBytes: "SMARTER_COMPACT_PROXY_MAX_BUFFERED",
  maxSessions: "SMARTER_COMPACT_PROXY_MAX_SESSIONS",
  maxConnections: "SMARTER_COMPACT_PROXY_MAX_CONNECTIONS",
  upstreamTimeoutMs: "SMARTER_COMPACT_UPSTREAM_TIMEOUT_MS",
};

/** The limits in force: the option, else the environment, else the default; each a positive
 * integer (E_CONFIG otherwise). */
export function proxyLimits(options = {}, env = process.env) {
  const out = {};
  for (const [k, dflt] of Object.entries(DEFAULT_LIMITS)) {
    const raw = options[k] ?? (LIMIT_ENV[k] ? env[LIMIT_ENV[k]] : undefined);
    const v = raw === undefined || raw === "" ? dflt : Number(raw);
    if (!Number.isSafeInteger(v) || v < 1)
      throw codedError(
        "E_CONFIG",
        `the proxy's ${k}${LIMIT_ENV[k] ? ` (${LIMIT_ENV[k]})` : ""} must be a positive integer, got ${raw}`,
      );
    out[k] = v;
  }
  out.maxBufferedBytes = Math.max(out.maxBufferedBytes, out.maxBodyBytes);
  return out;
}

/** An upstream base URL, checked: http(s) with a host (E_CONFIG otherwise). */
export function upstreamUrl(name, value) {
  let url = null;
  try {
    url = new URL(String(value));
  } catch {
    url = null;
  }
  if (!url || !["http:", "https:"].includes(url.protocol) || !url.hostname)
    throw codedError(
      "E_CONFIG",
      `the ${name} upstream must be an http:// or https:// URL with a host, got ${JSON.stringify(String(value))}`,
    );
  return String(value);
}

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

/**
 * Rewrites a request body; returns the bytes to send upstream (the original bytes when nothing
 * changed or anything failed) and what happened. `decoded` is `decodeBody`'s answer (null: the
 * body could not be read). `sessions` leases the session's compactor; `settings` says whether
 * subagents are trimmed.
 */
async function rewrite(route, headers, raw, decoded, { sessions, settings, glue }) {
  if (decoded === null) return { body: raw, encoded: true, outcome: "unreadable" };
  const { bytes, text, exact } = decoded;
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
  if (subagent && !(await settings.trimsSubagents()))
    return { body: raw, encoded: true, outcome: "passed-through" };
  const outside = JSON.stringify([
    body.system ?? null,
    body.tools ?? null,
    body.instructions ?? null,
  ]);
  const lease = await sessions.lease(sessionId);
  let res;
  let flushed;
  const { stripped, markers } =
    route.format === "anthropic" ? stripMarkers(list) : { stripped: list, markers: new Map() };
  try {
    res = await lease.value.transform(stripped, {
      format: route.format,
      model: String(body.model ?? ""),
      overheadTokens: glue.estimateTokens(outside),
      cacheTtlMs: route.format === "anthropic" ? askedTtlMs(body) : 0,
    });
    // The agent's recall tools run in another process (the MCP server) and read the store's
    // file: what this request added must be on disk before the model can ask for it.
    flushed = lease.value.flush();
  } finally {
    lease.release();
  }
  const stats = res.stats;
  if (stats.fail_open)
    return { body: raw, encoded: true, outcome: "fail-open", sessionId, stats, flushed };
  const messages = res.sources
    ? restoreMarkers(res.messages, res.sources, markers, { stripped, messages: list })
    : res.messages;
  const same = messages.length === list.length && messages.every((m, i) => m === list[i]);
  if (same) return { body: raw, encoded: true, outcome: "unchanged", sessionId, stats, flushed };
  // Only the list changes: the rest of the body goes upstream byte for byte.
  const spliced = spliceList(bytes, text, exact, route.field, messages);
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

/** Answers `res` with an error in the providers' shape. */
function fail(res, status, type, message, headers = {}) {
  if (!res.headersSent) res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(errorBody(type, message));
}

/**
 * Starts the proxy; resolves when it listens. `upstreams`: `{ anthropic, openai }` base URLs
 * (checked here: E_CONFIG for one that is not an http(s) URL). `secret`: the install's secret,
 * with which `/health?challenge=…` proves who answers (see secret.js). The limits are
 * `DEFAULT_LIMITS`' keys. Returns `{ port, upstreams, limits, stats, close() }`.
 */
export async function startProxy({
  port = Number(process.env.CONTEXT_PROXY_PORT ?? DEFAULT_PORT),
  upstreams = {},
  stateDir,
  config,
  secret = null,
  ...limitOptions
} = {}) {
  const ups = {
    anthropic: upstreamUrl(
      "anthropic",
      upstreams.anthropic ??
        process.env.SMARTER_COMPACT_ANTHROPIC_UPSTREAM ??
        DEFAULT_UPSTREAMS.anthropic,
    ),
    openai: upstreamUrl(
      "openai",
      upstreams.openai ?? process.env.SMARTER_COMPACT_OPENAI_UPSTREAM ?? DEFAULT_UPSTREAMS.openai,
    ),
  };
  const limits = proxyLimits(limitOptions);
  const budget = bodyBudget(limits.maxBufferedBytes);
  const glue = await engineModule();
  const options = { stateDir, ...(config ?? {}) };
  const settings = compactorPool(options); // only for `trimsSubagents`: sessions open below
  const sessions = openSessions({
    max: limits.maxSessions,
    open: (sessionId) =>
      createCompactor({
        sessionId,
        stateDir: options.stateDir,
        sqlite: options.sqlite,
        config: configFrom(options),
        projectDir: options.projectDir,
      }),
    close: (c) => c.close(),
  });
  const stats = {
    started_at: new Date().toISOString(),
    requests: 0,
    rewritten: 0,
    unchanged: 0,
    fail_opens: 0,
    passed_through: 0,
    refused: 0,
    upstream_errors: 0,
    store_write_errors: 0,
    sessions: new Set(),
  };
  const server = http.createServer(
    {
      headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs), // Node's rule
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs),
    },
    (req, res) => {
      const lease = { bytes: 0 }; // the body's bytes reserved in `budget`, given back when done
      handle(req, res, lease)
        .catch(() => fail(res, 500, "api_error", "internal error"))
        .finally(() => budget.give(lease.bytes));
    },
  );
  server.maxConnections = limits.maxConnections;
  /** `/health`: who answers, its counters, and with `?challenge=` the proof it holds the secret. */
  function health(url, res) {
    const challenge = url.searchParams.get("challenge");
    const listening = server.address().port;
    const proof =
      secret && challenge && /^[0-9a-f]{16,128}$/.test(challenge)
        ? proofOf(secret, challenge, listening, process.pid)
        : undefined;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        ok: true,
        service: "smarter-compact-proxy",
        version: glue.version(),
        pid: process.pid,
        port: listening,
        upstreams: ups,
        ...stats,
        sessions: stats.sessions.size,
        open_sessions: sessions.size,
        // The engine's WebAssembly memory: it grows with the largest request and never shrinks.
        engine_memory_bytes: instanceExports(glue)?.memory?.buffer?.byteLength ?? null,
        ...(proof ? { proof } : {}),
      }),
    );
  }
  async function handle(req, res, lease) {
    const url = new URL(req.url, "http://proxy");
    if (req.method === "GET" && url.pathname === "/health") return health(url, res);
    const route = routeOf(req.method, req.url, ups);
    if (!route)
      return fail(
        res,
        404,
        "not_found_error",
        `no route for ${req.method} ${url.pathname.slice(0, 200)}`,
      );
    const refused = refusal(req.headers);
    if (refused) {
      stats.refused++;
      // `connection: close`: the body the client may still be sending is not read.
      return fail(res, refused.status, "invalid_request_error", refused.message, {
        connection: "close",
      });
    }
    let raw;
    let decoded;
    try {
      raw = await readBody(req, limits.maxBodyBytes, budget, lease);
      decoded = route.field
        ? decodeBody(raw, req.headers["content-encoding"], limits.maxBodyBytes)
        : null;
    } catch (e) {
      stats.refused++;
      const type = e.status === 503 ? "api_error" : "invalid_request_error";
      return fail(res, e.status ?? 400, type, e.message, {
        connection: "close",
      });
    }
    stats.requests++;
    let out = { body: raw, encoded: true, outcome: "passed-through" };
    if (route.field) {
      try {
        out = await rewrite(route, req.headers, raw, decoded, { sessions, settings, glue });
      } catch {
        out = { body: raw, encoded: true, outcome: "fail-open" };
      }
    }
    decoded = null; // what is not going upstream can be collected while the answer streams
    if (out.body !== raw) raw = null;
    if (out.sessionId) stats.sessions.add(out.sessionId);
    if (out.flushed === false) stats.store_write_errors++;
    if (out.outcome === "rewritten") stats.rewritten++;
    else if (out.outcome === "unchanged") stats.unchanged++;
    else if (out.outcome === "fail-open") stats.fail_opens++;
    else stats.passed_through++;
    const status = await forward(route.target, req, res, out.body, out.encoded, limits);
    if (status >= 500) stats.upstream_errors++;
  }
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  return {
    port: server.address().port,
    upstreams: ups,
    limits,
    stats,
    async close() {
      const closed = new Promise((r) => server.close(r));
      server.closeAllConnections?.(); // keep-alive clients would hold close() open
      await closed;
      await sessions.closeAll();
    },
  };
}
