// The proxy's cost: real sessions replayed request by request as Claude Code (Anthropic Messages,
// streamed) would send them, each request once straight to a local upstream and once through
// `smarter-compact proxy run` (a separate process, as users run it), alternately. The `proxy`
// phase of bench/run.mjs: added latency per request (p50/p95), time to first byte, the
// proxy's memory. PROXY_PROF=<dir> writes a CPU profile of the proxy process there.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadSession, requests } from "../../js/sessions.js";
import { sessionFiles } from "./real-sessions.mjs";
import { quantile } from "./stats.mjs";

/** The "largest bodies" columns: bodies at or above this quantile of the body sizes. */
export const LARGE_BODY_Q = 0.9;

const CLI = fileURLToPath(new URL("../../js/cli.js", import.meta.url));

/** OpenAI chat history → Anthropic Messages (tool_use / tool_result blocks), as Claude Code sends. */
function toAnthropic(history) {
  const system = [];
  const messages = [];
  for (const m of history) {
    if (m.role === "system") system.push({ type: "text", text: m.content });
    else if (m.role === "assistant") {
      const blocks = m.content ? [{ type: "text", text: m.content }] : [];
      for (const c of m.tool_calls ?? [])
        blocks.push({
          type: "tool_use",
          id: c.id,
          name: c.function.name,
          input: JSON.parse(c.function.arguments),
        });
      messages.push({ role: "assistant", content: blocks });
    } else if (m.role === "tool")
      messages.push({
        role: "user",
        content: [{ type: "tool_result", tool_use_id: m.tool_call_id, content: m.content }],
      });
    else messages.push({ role: "user", content: [{ type: "text", text: m.content }] });
  }
  const last = messages.at(-1)?.content?.at(-1);
  if (last) last.cache_control = { type: "ephemeral" };
  system.at(-1) && (system.at(-1).cache_control = { type: "ephemeral" });
  return { system, messages };
}

/** A scripted Anthropic upstream: reads the body, streams a short answer in 4 events. */
async function startUpstream() {
  const srv = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const ev = (type, data) =>
        res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
      ev("message_start", {
        message: {
          id: "msg_bench",
          type: "message",
          role: "assistant",
          model: "claude-bench",
          content: [],
          usage: { input_tokens: 1, output_tokens: 1 },
        },
      });
      ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
      ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: "ok" } });
      ev("message_stop", {});
      res.end();
    });
  });
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${srv.address().port}`,
    close: () => new Promise((r) => (srv.closeAllConnections(), srv.close(r))),
  };
}

async function freePort() {
  const s = http.createServer();
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  const p = s.address().port;
  await new Promise((r) => s.close(r));
  return p;
}

/** `smarter-compact proxy run` as a child process; resolves once it answers /health. */
async function startProxyProcess(upstream, stateDir, trimAt, backend) {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      ...(process.env.PROXY_PROF ? ["--cpu-prof", "--cpu-prof-dir", process.env.PROXY_PROF] : []),
      CLI,
      "proxy",
      "run",
      "--port",
      String(port),
      "--state-dir",
      stateDir,
      "--anthropic-upstream",
      upstream,
    ],
    {
      // No embedding model: the figures are the engine's and the store's, not a background worker's
      // (which would compete with client, upstream and proxy for the same two cores).
      env: {
        ...process.env,
        CONTEXT_TRIM_AT_TOKENS: String(trimAt),
        SMARTER_COMPACT_SQLITE: backend,
        SMARTER_COMPACT_MODEL_DIR: "/nonexistent-model-dir",
      },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  await new Promise((resolve, reject) => {
    child.on("exit", (c) => reject(new Error(`proxy exited (${c})`)));
    child.stdout.on("data", (d) => String(d).includes("smarter-compact proxy on") && resolve());
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    stop: () => new Promise((r) => (child.once("exit", r), child.kill("SIGTERM"))),
  };
}

/** One POST; `{ ms, firstByteMs }` measured at the client, the whole answer read. */
function post(base, body) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let first = null;
    const req = http.request(
      `${base}/v1/messages`,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "anthropic-version": "2023-06-01",
          "x-api-key": "sk-bench",
          "content-length": Buffer.byteLength(body),
        },
      },
      (res) => {
        res.on("data", () => (first ??= performance.now() - t0));
        res.on("end", () =>
          res.statusCode === 200
            ? resolve({ ms: performance.now() - t0, firstByteMs: first })
            : reject(new Error(`HTTP ${res.statusCode}`)),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** Resident set now and at its peak (kB), from /proc. */
function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? NaN);
  return { rssMB: kb("VmRSS") / 1024, peakRssMB: kb("VmHWM") / 1024 };
}

/** Replays `sessions` real sessions through the proxy at `trimAt` on one SQLite `backend`. */
async function proxyRun({ sessions, trimAt, stateRoot, backend }) {
  const up = await startUpstream();
  const stateDir = mkdtempSync(join(stateRoot, "proxy-"));
  const proxy = await startProxyProcess(up.url, stateDir, trimAt, backend);
  const idle = memoryOf(proxy.pid);
  const rows = [];
  for (const file of sessionFiles(sessions)) {
    const { history } = loadSession(file);
    for (const request of requests(history)) {
      const { system, messages } = toAnthropic(request);
      const body = JSON.stringify({
        model: "claude-bench",
        max_tokens: 1024,
        stream: true,
        system,
        tools: [
          {
            name: "bash",
            description: "Run a command",
            input_schema: { type: "object", properties: { command: { type: "string" } } },
          },
        ],
        messages,
      });
      const direct = await post(up.url, body);
      const via = await post(proxy.url, body);
      rows.push({
        bytes: Buffer.byteLength(body),
        direct: direct.ms,
        proxy: via.ms,
        added: via.ms - direct.ms,
        firstByteAdded: via.firstByteMs - direct.firstByteMs,
      });
    }
  }
  const health = await (await fetch(`${proxy.url}/health`)).json();
  const loaded = memoryOf(proxy.pid);
  await proxy.stop();
  await up.close();

  const q = (xs, p) => quantile(xs, p);
  const col = (k) => rows.map((r) => r[k]);
  const big = rows.filter((r) => r.bytes >= quantile(col("bytes"), LARGE_BODY_Q));
  return {
    backend,
    sessions: sessionFiles(sessions).length,
    requests: rows.length,
    trimAt,
    bodyKB: { p50: q(col("bytes"), 0.5) / 1024, max: Math.max(...col("bytes")) / 1024 },
    directMs: { p50: q(col("direct"), 0.5), p95: q(col("direct"), 0.95) },
    proxyMs: { p50: q(col("proxy"), 0.5), p95: q(col("proxy"), 0.95) },
    addedMs: {
      p50: q(col("added"), 0.5),
      p95: q(col("added"), 0.95),
      max: Math.max(...col("added")),
    },
    addedMsLargest10pct: {
      p50: q(
        big.map((r) => r.added),
        0.5,
      ),
      p95: q(
        big.map((r) => r.added),
        0.95,
      ),
    },
    firstByteAddedMs: { p50: q(col("firstByteAdded"), 0.5), p95: q(col("firstByteAdded"), 0.95) },
    memory: { idleRssMB: idle.rssMB, rssMB: loaded.rssMB, peakRssMB: loaded.peakRssMB },
    proxyStats: {
      requests: health.requests,
      rewritten: health.rewritten,
      unchanged: health.unchanged,
      fail_opens: health.fail_opens,
      sessions: health.sessions,
    },
  };
}

/** The proxy under Node 20 on the two stores it can have there: sql.js (what the npm package
 *  brings) and better-sqlite3 (when the user has it installed). The figures for the report. */
export async function proxyBench({ sessions = 32, trimAt = 16_000, stateRoot = tmpdir() } = {}) {
  const runs = [];
  for (const backend of ["sql.js", "better-sqlite3"])
    runs.push(await proxyRun({ sessions, trimAt, stateRoot, backend }));
  return { runs };
}
