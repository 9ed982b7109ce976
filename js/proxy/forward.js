// One request to the upstream and its answer back to the client, chunk by chunk as it arrives,
// with backpressure: when the client stops reading, the upstream is paused (its bytes wait in
// TCP, not in the proxy), and a client that reads nothing for `clientStallMs` is dropped. An
// upstream silent for `upstreamTimeoutMs` (no headers, or no byte of the answer) is given up on.
import http from "node:http";
import https from "node:https";

/** Hop-by-hop headers, and those the proxy sets itself. */
export const HOP = new Set([
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

/** An error answer in the providers' shape. */
export function errorBody(type, message) {
  return JSON.stringify({
    type: "error",
    error: { type, message: `smarter-compact proxy: ${message}` },
  });
}

/**
 * Sends `body` to `target` with the client's headers (less hop-by-hop ones, and less
 * `content-encoding` unless `keepEncoding`), relays the answer to `res`; resolves to the
 * upstream's status (502 unreachable, 504 timed out).
 */
export function forward(
  target,
  req,
  res,
  body,
  keepEncoding,
  { upstreamTimeoutMs, clientStallMs },
) {
  const url = new URL(target);
  const headers = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (HOP.has(k) || (k === "content-encoding" && !keepEncoding)) continue;
    headers[k] = v;
  }
  headers["content-length"] = String(body.length);
  const lib = url.protocol === "https:" ? https : http;
  return new Promise((resolve) => {
    let stall = null;
    const up = lib.request(url, { method: req.method, headers }, (ur) => {
      const out = {};
      for (const [k, v] of Object.entries(ur.headers))
        if (!HOP.has(k) || k === "content-length") out[k] = v;
      res.writeHead(ur.statusCode ?? 502, out);
      res.flushHeaders();
      ur.on("data", (chunk) => {
        if (res.write(chunk)) return;
        ur.pause(); // the client is not keeping up: wait for it
        stall = setTimeout(() => {
          res.destroy();
          up.destroy();
        }, clientStallMs);
        res.once("drain", () => {
          clearTimeout(stall);
          ur.resume();
        });
      });
      ur.on("end", () => {
        res.end();
        resolve(ur.statusCode);
      });
      ur.on("error", () => {
        res.destroy();
        resolve(ur.statusCode);
      });
    });
    up.setTimeout(upstreamTimeoutMs, () => {
      // Only while the proxy waits on the upstream: a paused answer waits on the client instead.
      if (!up.res?.isPaused())
        up.destroy(Object.assign(new Error("timeout"), { code: "ETIMEDOUT" }));
    });
    up.on("error", (e) => {
      clearTimeout(stall);
      const timedOut = e.code === "ETIMEDOUT";
      if (!res.headersSent) {
        res.writeHead(timedOut ? 504 : 502, { "content-type": "application/json" });
        res.end(
          errorBody(
            "api_error",
            timedOut
              ? `the upstream sent nothing for ${upstreamTimeoutMs} ms (SMARTER_COMPACT_UPSTREAM_TIMEOUT_MS)`
              : `upstream unreachable (${e.code ?? e.message})`,
          ),
        );
      } else res.destroy();
      resolve(timedOut ? 504 : 502);
    });
    res.on("close", () => {
      clearTimeout(stall);
      up.destroy();
      resolve(res.statusCode); // the client went away (or the answer ended: already resolved)
    });
    up.end(body);
  });
}
