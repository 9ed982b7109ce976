// Shared machinery of the scripted upstreams (./anthropic-server.mjs, ./responses-server.mjs):
// an HTTP server on 127.0.0.1 that records every request byte for byte, a step cursor over a
// script, and a paced SSE writer that timestamps every byte it sends.
//
// Timestamps are high-resolution epoch milliseconds (performance.timeOrigin + performance.now(),
// floats), so they can be compared with `hrNow()` taken in the test process or, to within clock
// skew of a millisecond or so, with Date.now()-style stamps from another process on the machine.

import http from "node:http";
import fs from "node:fs";
import zlib from "node:zlib";
import { spawnSync } from "node:child_process";
import { EventEmitter } from "node:events";
import { performance } from "node:perf_hooks";

/** High-resolution wall clock in epoch milliseconds (float). */
export const hrNow = () => performance.timeOrigin + performance.now();

export const sleep = (ms) => (ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve());

/** Split a string into n-character pieces (at least `min` pieces when the string is long enough). */
export function pieces(s, n = 16, min = 1) {
  s = String(s ?? "");
  if (!s) return [];
  const size = Math.max(1, Math.min(n, Math.ceil(s.length / min)));
  const out = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

/** Decode a request body according to its content-encoding. Returns { buf, error }. */
export function decodeBody(raw, encoding) {
  const enc = String(encoding ?? "")
    .trim()
    .toLowerCase();
  if (!enc || enc === "identity") return { buf: raw };
  try {
    let buf = raw;
    // Encodings are listed in the order they were applied: undo them in reverse.
    for (const e of enc
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean)
      .reverse()) {
      if (e === "gzip" || e === "x-gzip") buf = zlib.gunzipSync(buf);
      else if (e === "deflate") buf = zlib.inflateSync(buf);
      else if (e === "br") buf = zlib.brotliDecompressSync(buf);
      else if (e === "zstd") {
        if (typeof zlib.zstdDecompressSync === "function") buf = zlib.zstdDecompressSync(buf);
        else {
          // Node 20 has no zstd in zlib; fall back to the zstd binary if the machine has one.
          const r = spawnSync("zstd", ["-d", "-c", "-q"], { input: buf, maxBuffer: 1 << 30 });
          if (r.status !== 0) throw new Error(`zstd -d failed: ${r.error ?? r.stderr}`);
          buf = r.stdout;
        }
      } else throw new Error(`unsupported content-encoding ${e}`);
    }
    return { buf };
  } catch (err) {
    return { buf: null, error: String(err?.message ?? err) };
  }
}

/**
 * Start a recording HTTP server. `handle(ctx)` answers one request; ctx has
 *   { req, res, entry, body, raw, url, path, query, nextStep(), sse(events, opts), json(status, obj), text(...) }
 * Returns { url, port, requests, events, agentRequests(), push(), remaining(), close() } (+ whatever
 * the protocol module adds).
 */
export async function startRecordingServer({
  script = [],
  log,
  port = 0,
  host = "127.0.0.1",
  isAgent = () => false,
  handle,
  compress = null,
  headersDelayMs = 0,
  delayMs = 0,
} = {}) {
  const steps = [...script];
  const requests = [];
  const events = new EventEmitter();
  let cursor = 0;
  if (log) fs.writeFileSync(log, "");

  const logLine = (obj) => {
    if (log) fs.appendFileSync(log, JSON.stringify(obj) + "\n");
  };

  async function nextStep(body, entry, { auxText, finalText }) {
    if (!entry.agent) return { text: auxText, aux: true };
    if (cursor >= steps.length) return { text: finalText, final: true };
    const index = cursor++;
    let step = steps[index];
    if (typeof step === "function") {
      step = await step(body, {
        index,
        entry,
        requests,
        agentRequests: requests.filter((r) => r.agent),
      });
    }
    if (typeof step === "string") step = { text: step };
    return step ?? { text: finalText, final: true };
  }

  const server = http.createServer(
    { noDelay: true, keepAliveTimeout: 30_000 },
    async (req, res) => {
      const tArrive = hrNow();
      const chunks = [];
      let entry;
      try {
        for await (const c of req) chunks.push(c);
        const raw = Buffer.concat(chunks);
        const tBody = hrNow();
        const q = req.url.indexOf("?");
        const path = q < 0 ? req.url : req.url.slice(0, q);
        const query = Object.fromEntries(new URLSearchParams(q < 0 ? "" : req.url.slice(q + 1)));
        const encoding = req.headers["content-encoding"] ?? null;
        const decoded = raw.length ? decodeBody(raw, encoding) : { buf: raw };
        let body = null;
        let bodyError = decoded.error ?? null;
        if (decoded.buf && decoded.buf.length) {
          try {
            body = JSON.parse(decoded.buf.toString("utf8"));
          } catch (err) {
            bodyError = `invalid JSON: ${err.message}`;
          }
        }
        entry = {
          n: requests.length + 1,
          t: Date.now(),
          method: req.method,
          url: req.url,
          path,
          query,
          httpVersion: req.httpVersion,
          headers: { ...req.headers },
          rawHeaders: [...req.rawHeaders],
          raw,
          decoded: encoding ? decoded.buf : raw,
          encoding,
          body,
          bodyError,
          agent: false,
          tArrive,
          tBody,
          tHeaders: null,
          tFirstByte: null,
          tEnd: null,
          sent: [],
          reply: null,
          response: null,
          status: null,
        };
        try {
          entry.agent = !!(body && isAgent(body, entry));
        } catch {
          // a body the classifier cannot read is not the agent's
        }
        requests.push(entry);
        logLine({
          ...entry,
          raw: encoding ? raw.toString("base64") : raw.toString("utf8"),
          rawEncoding: encoding ? "base64" : "utf8",
          decoded: undefined,
        });
        events.emit("request", entry);

        let aborted = false;
        res.on("close", () => {
          if (!res.writableFinished) aborted = true;
        });

        const accept = String(req.headers["accept-encoding"] ?? "");
        const enc = compress && new RegExp(`\\b${compress}\\b`).test(accept) ? compress : null;

        const markFirst = () => {
          if (entry.tFirstByte == null) {
            entry.tFirstByte = hrNow();
            events.emit("first-byte", entry);
          }
        };
        const finish = () => {
          entry.tEnd = hrNow();
          entry.aborted = aborted;
          logLine({
            n: entry.n,
            status: entry.status,
            reply: serialisable(entry.reply),
            response: entry.response,
            tArrive: entry.tArrive,
            tHeaders: entry.tHeaders,
            tFirstByte: entry.tFirstByte,
            tEnd: entry.tEnd,
            aborted,
          });
          events.emit("end", entry);
        };

        const ctx = {
          req,
          res,
          entry,
          body,
          raw,
          path,
          query,
          nextStep: (opts) => nextStep(body, entry, opts),
          /** Answer JSON (compressed if `compress` is set and the client accepts it). */
          json: (status, obj, headers = {}) => {
            entry.status = status;
            let data = Buffer.from(JSON.stringify(obj));
            const h = { "content-type": "application/json", ...headers };
            if (enc && req.method !== "HEAD") {
              data =
                enc === "gzip"
                  ? zlib.gzipSync(data)
                  : enc === "br"
                    ? zlib.brotliCompressSync(data)
                    : zlib.deflateSync(data);
              h["content-encoding"] = enc;
            }
            h["content-length"] = req.method === "HEAD" ? 0 : data.length;
            entry.tHeaders = hrNow();
            res.writeHead(status, h);
            markFirst();
            if (req.method === "HEAD") res.end();
            else res.end(data);
            entry.sent.push({ t: entry.tFirstByte, bytes: data.length });
            finish();
          },
          /**
           * Stream Server-Sent Events, one write per event, sleeping `delayMs` before each one
           * (default: the server's `delayMs`). events: [{ event?, data }] (data: object → JSON).
           */
          sse: async (
            list,
            { delayMs: d = delayMs, headersDelayMs: hd = headersDelayMs, headers = {} } = {},
          ) => {
            entry.status = 200;
            await sleep(hd);
            const h = {
              "content-type": "text/event-stream; charset=utf-8",
              "cache-control": "no-cache",
              connection: "keep-alive",
              ...headers,
            };
            let out = res;
            let z = null;
            if (enc) {
              h["content-encoding"] = enc;
              z =
                enc === "gzip"
                  ? zlib.createGzip()
                  : enc === "br"
                    ? zlib.createBrotliCompress()
                    : zlib.createDeflate();
              z.pipe(res);
              out = z;
            }
            res.writeHead(200, h);
            res.flushHeaders();
            entry.tHeaders = hrNow();
            for (const ev of list) {
              await sleep(d);
              if (aborted || res.destroyed) break;
              const data = typeof ev.data === "string" ? ev.data : JSON.stringify(ev.data);
              const frame = (ev.event ? `event: ${ev.event}\n` : "") + `data: ${data}\n\n`;
              out.write(frame);
              if (z) z.flush();
              markFirst();
              entry.sent.push({
                t: hrNow(),
                event: ev.event ?? ev.data?.type ?? null,
                bytes: Buffer.byteLength(frame),
              });
            }
            await new Promise((r) => out.end(r));
            finish();
          },
        };
        await handle(ctx);
      } catch (err) {
        try {
          if (!res.headersSent) {
            res.writeHead(500, { "content-type": "application/json" });
            res.end(
              JSON.stringify({
                type: "error",
                error: { type: "api_error", message: String(err?.stack ?? err) },
              }),
            );
          } else res.destroy(err);
        } catch {
          // the client has gone: nobody to tell
        }
        if (entry) {
          entry.error = String(err?.stack ?? err);
          entry.tEnd = hrNow();
        }
      }
    },
  );

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  const actualPort = server.address().port;

  return {
    origin: `http://${host}:${actualPort}`,
    port: actualPort,
    requests,
    events,
    agentRequests: () => requests.filter((r) => r.agent),
    /** Append steps (e.g. for the next turn of a multi-turn test). */
    push: (...more) => steps.push(...more),
    /** Steps not consumed yet. */
    remaining: () => steps.length - cursor,
    /** Resolves with the next request entry that satisfies `pred` (already recorded ones count). */
    waitFor: (pred = () => true, { timeoutMs = 30_000 } = {}) =>
      new Promise((resolve, reject) => {
        const hit = requests.find(pred);
        if (hit) return resolve(hit);
        const on = (e) => {
          if (pred(e)) {
            clearTimeout(timer);
            events.off("request", on);
            resolve(e);
          }
        };
        const timer = setTimeout(() => {
          events.off("request", on);
          reject(new Error("waitFor: timed out"));
        }, timeoutMs);
        events.on("request", on);
      }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

function serialisable(v) {
  if (v == null || typeof v !== "object") return v;
  try {
    return JSON.parse(JSON.stringify(v));
  } catch {
    return String(v);
  }
}

/** The raw request bytes as text (after undoing content-encoding). */
export function rawText(entry) {
  return (entry.decoded ?? entry.raw ?? Buffer.alloc(0)).toString("utf8");
}

/**
 * Parse an SSE byte stream (string) into [{ event, data }] (data JSON-parsed when possible).
 * Handy for asserting on what a proxy relayed to the client.
 */
export function parseSSE(text) {
  const out = [];
  for (const block of String(text).split(/\r?\n\r?\n/)) {
    if (!block.trim()) continue;
    let event = null;
    const data = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    const d = data.join("\n");
    let parsed = d;
    try {
      parsed = JSON.parse(d);
    } catch {
      // not JSON: kept as text
    }
    out.push({ event, data: parsed });
  }
  return out;
}

/**
 * POST (or any method) to `url` with raw bytes and time the answer on the same clock as the
 * upstreams: { status, headers, raw (Buffer, as received: still compressed if content-encoded),
 * text, tSent, tHeaders, tFirst (first body chunk), tEnd, chunks: [{ t, bytes }] }.
 * For measuring first-byte latency through a proxy: compare tFirst with the upstream entry's tFirstByte.
 */
export function timedRequest(url, body, { method = "POST", headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const buf =
      body == null
        ? null
        : Buffer.isBuffer(body)
          ? body
          : Buffer.from(typeof body === "string" ? body : JSON.stringify(body));
    const h = {
      ...(buf ? { "content-type": "application/json", "content-length": buf.length } : {}),
      ...headers,
    };
    const tSent = hrNow();
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers: h },
      (res) => {
        const tHeaders = hrNow();
        const parts = [];
        const chunks = [];
        res.on("data", (c) => {
          chunks.push({ t: hrNow(), bytes: c.length });
          parts.push(c);
        });
        res.on("end", () => {
          const raw = Buffer.concat(parts);
          resolve({
            status: res.statusCode,
            headers: res.headers,
            raw,
            text: raw.toString("utf8"),
            tSent,
            tHeaders,
            tFirst: chunks[0]?.t ?? null,
            tEnd: hrNow(),
            chunks,
          });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(buf ?? undefined);
  });
}
