// The proxy soak (`node bench/run.mjs --only=soak`, part of `make bench`): `smarter-compact proxy
// run` as its own process, on loopback, in front of a local upstream, takes a fixed schedule of
// requests across many sessions: normal ones on the three routes, compressed ones, malformed ones,
// bodies over the cap and decompression bombs, clients that do not read their answer and clients
// that never finish their headers. Measured on the proxy's process (/proc): resident memory
// (start, peak, after), open file descriptors (peak), latency of the normal requests (p50/p99),
// statuses, crashes. Then, in a fresh process each, the peak memory of one body at a few sizes up
// to the cap: what a body costs the proxy.
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import http from "node:http";
import net from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import zlib from "node:zlib";
import { rng } from "./rng.mjs";
import { quantile } from "./stats.mjs";

const CLI = fileURLToPath(new URL("../../js/cli.js", import.meta.url));
const MB = 1024 * 1024;
/** The proxy's default body cap (js/proxy/server.js `DEFAULT_LIMITS.maxBodyBytes`). */
const CAP = 64 * MB;

/** The schedule's mix for `requests` requests: kind → count (sums to `requests`). */
export function soakMix(requests) {
  const share = {
    normal: 0.8,
    gzip: 0.04,
    br: 0.03,
    deflate: 0.03,
    "not-json": 0.015,
    "not-a-list": 0.015,
    "bad-items": 0.015,
    "text-plain": 0.0075,
    origin: 0.0075,
    "declared-over-cap": 0.01,
    "chunked-over-cap": 0.005,
    bomb: 0.005,
    "not-reading": 0.01,
    "slow-headers": 0.01,
  };
  const mix = {};
  let used = 0;
  for (const [k, s] of Object.entries(share)) used += mix[k] = Math.round(requests * s);
  mix.normal += requests - used;
  return mix;
}

/** A local upstream: a small JSON answer, or with `x-soak-answer: big` 32 MB sent as fast as the
 * proxy takes it (with backpressure). */
async function startUpstream() {
  const big = Buffer.alloc(64 * 1024, "z");
  const srv = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.headers["x-soak-answer"] !== "big") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end('{"id":"msg_soak","type":"message","content":[{"type":"text","text":"ok"}]}');
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      let left = 512;
      const more = () => {
        while (left-- > 0) if (!res.write(big)) return void res.once("drain", more);
        res.end();
      };
      res.on("close", () => (left = 0));
      more();
    });
  });
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${srv.address().port}`,
    close: () => new Promise((r) => (srv.closeAllConnections(), srv.close(r))),
  };
}

/** `smarter-compact proxy run` on a free port; resolves once it listens. */
async function startProxy(upstream, stateDir) {
  const child = spawn(
    process.execPath,
    [
      CLI,
      "proxy",
      "run",
      "--port",
      "0",
      "--state-dir",
      stateDir,
      "--anthropic-upstream",
      upstream,
      "--openai-upstream",
      `${upstream}/v1`,
    ],
    {
      // No embedding model: the figures are the proxy's, not a background worker's.
      env: {
        ...process.env,
        CONTEXT_TRIM_AT_TOKENS: "1500",
        SMARTER_COMPACT_MODEL_DIR: "/nonexistent-model-dir",
      },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const port = await new Promise((resolve, reject) => {
    child.once("exit", (c) => reject(new Error(`proxy exited (${c})`)));
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = /proxy on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
  });
  let exited = null;
  child.on("exit", (code, signal) => (exited = { code, signal }));
  return {
    port,
    pid: child.pid,
    exited: () => exited,
    stop: () =>
      exited
        ? Promise.resolve()
        : new Promise((r) => (child.once("exit", r), child.kill("SIGTERM"))),
  };
}

/** Resident set now and at its peak (MB) and open descriptors of a process, from /proc. */
function sample(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return {
    rssMB: kb("VmRSS") / 1024,
    peakMB: kb("VmHWM") / 1024,
    fds: readdirSync(`/proc/${pid}/fd`).length,
  };
}

/** A session's conversation at `turn`: Anthropic, Responses or Chat Completions by `s % 3`. */
function sessionBody(s, turn) {
  const out = (k) => `session ${s} step ${k}: ${"result line ok\n".repeat(20)}`;
  const route = ["anthropic", "responses", "chat"][s % 3];
  if (route === "anthropic") {
    const messages = [{ role: "user", content: `soak task ${s}` }];
    for (let k = 0; k < turn; k++)
      messages.push(
        {
          role: "assistant",
          content: [{ type: "tool_use", id: `t${k}`, name: "Bash", input: { command: `ls ${k}` } }],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: `t${k}`, content: out(k) }] },
      );
    return {
      path: "/v1/messages",
      headers: { "x-claude-code-session-id": `soak-${s}` },
      body: { model: "claude-sonnet-x", max_tokens: 1000, messages },
    };
  }
  if (route === "responses") {
    const input = [
      { type: "message", role: "user", content: [{ type: "input_text", text: `soak ${s}` }] },
    ];
    for (let k = 0; k < turn; k++)
      input.push(
        { type: "function_call", call_id: `c${k}`, name: "exec", arguments: "{}" },
        { type: "function_call_output", call_id: `c${k}`, output: out(k) },
      );
    return {
      path: "/v1/responses",
      headers: {},
      body: { model: "gpt-x", prompt_cache_key: `soak-${s}`, input },
    };
  }
  const messages = [{ role: "user", content: `soak chat ${s}` }];
  for (let k = 0; k < turn; k++)
    messages.push(
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: `c${k}`, type: "function", function: { name: "exec", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: `c${k}`, content: out(k) },
    );
  return { path: "/v1/chat/completions", headers: {}, body: { model: "gpt-x", messages } };
}

/** One request with node:http; resolves to `{ status, ms }` (status 0: the connection failed). */
function request(port, path, headers, body, { chunked = false } = {}) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const h = { ...headers };
    if (!chunked) h["content-length"] = String(body.length);
    const req = http.request(
      { host: "127.0.0.1", port, path, method: "POST", headers: h },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode, ms: performance.now() - t0 }));
        res.on("error", () => resolve({ status: 0, ms: performance.now() - t0 }));
      },
    );
    req.on("error", () => resolve({ status: 0, ms: performance.now() - t0 }));
    req.end(body);
  });
}

/** A raw client: writes `text`, holds the connection `holdMs` reading nothing, then drops it
 * (status -1). With `answer`, it reads instead and resolves to the status the proxy sent (0 when
 * the connection closed without one) without waiting for the rest. */
function rudeClient(port, text, holdMs, { answer = false } = {}) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const sock = net.connect(port, "127.0.0.1");
    sock.on("error", () => {});
    let got = "";
    const settle = (status) => {
      sock.destroy();
      resolve({ status, ms: performance.now() - t0 });
    };
    sock.on("close", () => settle(Number(/^HTTP\/1\.1 (\d+)/.exec(got)?.[1] ?? 0)));
    sock.on("connect", () => {
      sock.write(text);
      if (answer) {
        sock.on("data", (c) => {
          got += c;
          const m = /^HTTP\/1\.1 (\d+)/.exec(got);
          if (m) settle(Number(m[1]));
        });
      } else sock.pause();
      setTimeout(() => settle(-1), holdMs);
    });
  });
}

const JSON_TYPE = { "content-type": "application/json" };
const bombBody = () =>
  zlib.gzipSync(
    Buffer.concat([
      Buffer.from('{"model":"m","messages":[{"role":"user","content":"'),
      Buffer.alloc(CAP + MB, "a"),
      Buffer.from('"}]}'),
    ]),
    { level: 1 },
  );

/** Sends one request of `kind` for session `s` at `turn`. */
async function send(port, kind, s, turn, bomb) {
  const { path, headers, body } = sessionBody(s, turn);
  const json = Buffer.from(JSON.stringify(body));
  const h = { ...JSON_TYPE, ...headers };
  switch (kind) {
    case "normal":
      return request(port, path, h, json);
    case "gzip":
      return request(port, path, { ...h, "content-encoding": "gzip" }, zlib.gzipSync(json));
    case "br":
      return request(port, path, { ...h, "content-encoding": "br" }, zlib.brotliCompressSync(json));
    case "deflate":
      return request(port, path, { ...h, "content-encoding": "deflate" }, zlib.deflateSync(json));
    case "not-json":
      return request(port, path, h, json.subarray(0, json.length - 7));
    case "not-a-list":
      return request(port, path, h, Buffer.from('{"model":"m","messages":{"a":1},"input":"x"}'));
    case "bad-items":
      return request(
        port,
        path,
        h,
        Buffer.from('{"model":"m","messages":[null,1,{"role":7}],"input":[null,[]]}'),
      );
    case "text-plain":
      return request(port, path, { ...headers, "content-type": "text/plain" }, json);
    case "origin":
      return request(port, path, { ...h, origin: "https://evil.example" }, json);
    case "declared-over-cap":
      return rudeClient(
        port,
        `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${CAP + 1}\r\n\r\n{"messages":[`,
        60_000,
        { answer: true },
      );
    case "chunked-over-cap":
      return request(port, path, h, Buffer.alloc(CAP + MB, " "), { chunked: true });
    case "bomb":
      return request(port, path, { ...h, "content-encoding": "gzip" }, bomb);
    case "not-reading":
      return rudeClient(
        port,
        `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nx-soak-answer: big\r\ncontent-length: ${json.length}\r\n\r\n${json}`,
        1000,
      );
    case "slow-headers":
      return rudeClient(port, `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-ty`, 1000);
    default:
      throw new Error(`unknown kind ${kind}`);
  }
}

/** `xs` shuffled in place (Fisher–Yates) with the generator `r`. */
function shuffle(xs, r) {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(r.next() * (i + 1));
    [xs[i], xs[j]] = [xs[j], xs[i]];
  }
  return xs;
}

/** RSS (MB) once it is steady (five samples 500 ms apart within 1% of each other), at most
 * `ms` later. */
async function settledRss(pid, ms = 30_000) {
  const seen = [sample(pid).rssMB];
  for (let t = 0; t < ms; t += 500) {
    await new Promise((r) => setTimeout(r, 500));
    seen.push(sample(pid).rssMB);
    const last = seen.slice(-5);
    if (last.length === 5 && Math.max(...last) - Math.min(...last) <= Math.min(...last) * 0.01)
      return seen.at(-1);
  }
  return seen.at(-1);
}

/** The peak memory of one request of `sizeMB` (a conversation of 64 kB tool outputs), in a
 * fresh proxy process, and what stays resident after it: `{ sizeMB, idleMB, peakMB, afterMB, engineMB (the engine's
 * WebAssembly memory after it), ms, status }`. */
async function bodyCost(upstream, stateDir, sizeMB) {
  const proxy = await startProxy(upstream, stateDir);
  try {
    // One small request first: the engine loaded and the code compiled, as in a running proxy.
    const small = sessionBody(0, 1);
    await request(proxy.port, small.path, JSON_TYPE, Buffer.from(JSON.stringify(small.body)));
    const idle = await settledRss(proxy.pid, 5000);
    const chunk = "x".repeat(64 * 1024 - 64);
    const messages = [{ role: "user", content: "big" }];
    const n = Math.floor((sizeMB * MB - 4096) / (64 * 1024 + 160));
    for (let k = 0; k < n; k++)
      messages.push(
        {
          role: "assistant",
          content: [{ type: "tool_use", id: `t${k}`, name: "Bash", input: { command: "cat" } }],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: `t${k}`, content: chunk }] },
      );
    const body = Buffer.from(JSON.stringify({ model: "claude-sonnet-x", messages }));
    const r = await request(proxy.port, "/v1/messages", JSON_TYPE, body);
    const s = sample(proxy.pid);
    const afterMB = await settledRss(proxy.pid, 10_000);
    const health = await (await fetch(`http://127.0.0.1:${proxy.port}/health`)).json();
    return {
      afterMB,
      engineMB: health.engine_memory_bytes / MB,
      sizeMB: +(body.length / MB).toFixed(1),
      idleMB: idle,
      peakMB: s.peakMB,
      ms: r.ms,
      status: r.status,
    };
  } finally {
    await proxy.stop();
  }
}

/**
 * The soak: `requests` requests over `sessions` sessions, `concurrency` at a time, after a warm-up
 * of each kind. Returns the figures the report's "Proxy soak" section shows.
 */
export async function soakPhase({
  requests = 10_000,
  sessions = 1000,
  concurrency = 16,
  stateRoot,
  log = () => {},
  bodySizesMB = [8, 32],
} = {}) {
  const stateDir = join(stateRoot, "soak");
  rmSync(stateDir, { recursive: true, force: true });
  mkdirSync(stateDir, { recursive: true });
  const upstream = await startUpstream();
  const proxy = await startProxy(upstream.url, stateDir);
  const bomb = bombBody();
  const r = rng(15);
  const mix = soakMix(requests);
  const kinds = shuffle(
    Object.entries(mix).flatMap(([k, n]) => Array(n).fill(k)),
    r,
  );
  const turns = new Array(sessions + 100).fill(0);
  const samples = [];
  const timer = setInterval(() => {
    if (!proxy.exited()) samples.push(sample(proxy.pid));
  }, 100);
  const run = async (list, sessionOf) => {
    const results = [];
    let next = 0;
    const worker = async () => {
      while (next < list.length && !proxy.exited()) {
        const i = next++;
        const s = sessionOf(i);
        const res = await send(proxy.port, list[i], s, ++turns[s], bomb);
        results.push({ kind: list[i], ...res });
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return results;
  };
  try {
    // Warm-up on 100 sessions of their own (more than the proxy keeps open): a tenth of the soak,
    // the same mix, so the start figure has the engine loaded, the code paths compiled, as many
    // stores open as there will be and the allocators at the size this load takes them to: what
    // the soak then checks is that 10 times as many requests do not add to it.
    const warm = shuffle(
      Object.entries(soakMix(Math.round(requests / 10))).flatMap(([k, n]) => Array(n).fill(k)),
      r,
    );
    await run(warm, (i) => sessions + (i % 100));
    const start = { rssMB: await settledRss(proxy.pid), ...sample(proxy.pid) };
    log(`soak: warm, RSS ${start.rssMB.toFixed(0)} MB; ${requests} requests, ${sessions} sessions`);
    const t0 = performance.now();
    // Sessions come and go as an agent's would: most requests go to the ~40 sessions active at
    // that point of the schedule (a window moving through all of them), the rest to any session
    // (an old one coming back: its store is opened again).
    const results = await run(kinds, (i) =>
      r.next() < 0.85
        ? (Math.floor((i * sessions) / requests) + r.int(0, 39)) % sessions
        : r.int(0, sessions - 1),
    );
    const seconds = (performance.now() - t0) / 1000;
    const after = proxy.exited() ? null : await settledRss(proxy.pid);
    clearInterval(timer);
    const end = proxy.exited() ? null : sample(proxy.pid);
    const statuses = {};
    for (const x of results) {
      const by = (statuses[x.kind] ??= {});
      by[x.status] = (by[x.status] ?? 0) + 1;
    }
    const ok = results.filter((x) => ["normal", "gzip", "br", "deflate"].includes(x.kind));
    const lat = ok.filter((x) => x.status === 200).map((x) => x.ms);
    let health = null;
    if (!proxy.exited()) {
      const res = await fetch(`http://127.0.0.1:${proxy.port}/health`);
      health = await res.json();
    }
    const out = {
      requests,
      sessions,
      concurrency,
      sent: results.length,
      seconds,
      mix,
      statuses,
      crashes: proxy.exited() ? 1 : 0,
      failed: ok.filter((x) => x.status !== 200).length,
      p50Ms: quantile(lat, 0.5),
      p99Ms: quantile(lat, 0.99),
      maxMs: Math.max(...lat),
      startRssMB: start.rssMB,
      peakRssMB: Math.max(end?.peakMB ?? 0, ...samples.map((x) => x.peakMB)),
      afterRssMB: after,
      startFds: start.fds,
      peakFds: Math.max(...samples.map((x) => x.fds)),
      endFds: end?.fds ?? null,
      openSessions: health?.open_sessions ?? null,
      sessionsSeen: health?.sessions ?? null,
      load: loadavg()[0], // the machine's 1-minute load average at the end of the soak
    };
    out.rssRatio = after === null ? null : after / start.rssMB;
    log(
      `soak: ${out.sent} sent in ${seconds.toFixed(0)} s, p99 ${out.p99Ms?.toFixed(1)} ms, peak RSS ${out.peakRssMB.toFixed(0)} MB, after ${after?.toFixed(0)} MB (start ${start.rssMB.toFixed(0)}), peak fds ${out.peakFds}, crashes ${out.crashes}`,
    );
    await proxy.stop();
    out.bodyCost = [];
    for (const size of bodySizesMB) {
      const c = await bodyCost(upstream.url, join(stateDir, `cost-${size}`), size);
      out.bodyCost.push(c);
      log(
        `soak: one ${c.sizeMB} MB body: peak ${c.peakMB.toFixed(0)} MB (idle ${c.idleMB.toFixed(0)} MB)`,
      );
    }
    return out;
  } finally {
    clearInterval(timer);
    await proxy.stop();
    await upstream.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}
