// A fake upstream on 127.0.0.1 and a proxy in front of it, for the proxy's hardening tests.
import http from "node:http";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { startProxy } from "../../../npm/js/proxy/server.js";
import { scratchDir } from "./scratch.mjs";

/** A fake upstream: records requests; answers with `reply(req, res)` or a small JSON. */
export async function upstream(reply) {
  const seen = [];
  const srv = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      seen.push({ url: req.url, headers: req.headers, raw: Buffer.concat(chunks) });
      if (reply) return reply(req, res);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ ok: true }));
    });
  });
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  return {
    seen,
    url: `http://127.0.0.1:${srv.address().port}`,
    close: () => {
      const closed = new Promise((r) => srv.close(r));
      srv.closeAllConnections();
      return closed;
    },
  };
}

/** Runs `fn(base, proxy, stateDir)` against a proxy in front of `up` with `options`. */
export async function withProxy(up, fn, options = {}) {
  const stateDir = scratchDir("sc-proxy-");
  const proxy = await startProxy({
    port: 0,
    upstreams: { anthropic: up.url, openai: `${up.url}/v1` },
    stateDir,
    config: { trimAtTokens: 3000 },
    ...options,
  });
  try {
    return await fn(`http://127.0.0.1:${proxy.port}`, proxy, stateDir);
  } finally {
    await proxy.close();
  }
}

/** POSTs JSON (or the bytes given) with a JSON content type unless `headers` say otherwise. */
export const post = (url, body, headers = {}) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" || body instanceof Uint8Array ? body : JSON.stringify(body),
  });

/** Rows in the `messages` table of every session store under `stateDir` (0 when there is none). */
export function storedMessages(stateDir) {
  const dir = join(stateDir, "context", "sessions");
  let files = [];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith(".db"));
  } catch {
    return 0;
  }
  let n = 0;
  for (const f of files) {
    const db = new Database(join(dir, f), { readonly: true });
    try {
      n += db.prepare("SELECT count(*) AS n FROM messages").get().n;
    } finally {
      db.close();
    }
  }
  return n;
}

/** A short Anthropic conversation of `turns` exchanges. */
export function anthropicBody(turns, text = "fix the failing test") {
  const messages = [{ role: "user", content: text }];
  for (let k = 0; k < turns; k++) {
    messages.push({
      role: "assistant",
      content: [{ type: "tool_use", id: `tu_${k}`, name: "Bash", input: { command: `ls ${k}` } }],
    });
    messages.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `tu_${k}`, content: `file ${k}\n` }],
    });
  }
  return { model: "claude-sonnet-x", max_tokens: 1000, messages };
}

/** Polls `check()` until it returns a truthy value or `ms` pass; returns the last value. */
export async function waitFor(check, ms = 20_000, every = 20) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, every));
  }
}
