// The loopback proxy against a fake upstream on 127.0.0.1: rewriting, what stays byte-identical,
// streaming as it arrives, headers, fail-open, and no open relay.
import assert from "node:assert/strict";
import http from "node:http";
import { existsSync } from "node:fs";
import Database from "better-sqlite3";
import { join } from "node:path";
import { test } from "node:test";
import zlib from "node:zlib";
import { startProxy } from "../../npm/js/proxy/server.js";
import { scratchDir } from "./helpers/scratch.mjs";

/** A fake upstream: records requests; answers with `reply(req, body, res)` or a small JSON. */
async function upstream(reply) {
  const seen = [];
  const srv = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      let body = null;
      try {
        body = JSON.parse(raw);
      } catch {
        body = null; // the proxy forwards what it cannot read byte for byte
      }
      seen.push({ method: req.method, url: req.url, headers: req.headers, raw, body });
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

async function withProxy(up, fn, config = { trimAtTokens: 3000 }) {
  const proxy = await startProxy({
    port: 0,
    upstreams: { anthropic: up.url, openai: `${up.url}/v1` },
    stateDir: scratchDir("sc-proxy-"),
    config,
  });
  try {
    return await fn(`http://127.0.0.1:${proxy.port}`, proxy);
  } finally {
    await proxy.close();
  }
}

const post = (url, body, headers = {}) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" || body instanceof Uint8Array ? body : JSON.stringify(body),
  });

/** A long Claude-Code-like conversation: system blocks with cache_control, tools, thinking. */
function claudeBody(turns) {
  const messages = [
    {
      role: "user",
      content: [
        { type: "text", text: "<system-reminder>attribution</system-reminder>" },
        { type: "text", text: "fix the failing test" },
      ],
    },
    { role: "system", content: "# Environment\ncwd: /repo" },
  ];
  for (let k = 0; k < turns; k++) {
    messages.push({
      role: "assistant",
      content: [
        { type: "thinking", thinking: `think ${k}`, signature: `sig-${k}` },
        { type: "tool_use", id: `tu_${k}`, name: "Bash", input: { command: `make test ${k}` } },
      ],
    });
    messages.push({
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: `tu_${k}`,
          content: `line of output ${k}\n`.repeat(k === 2 ? 800 : 40),
        },
      ],
    });
  }
  messages.at(-1).content.at(-1).cache_control = { type: "ephemeral" };
  return {
    model: "claude-sonnet-x",
    max_tokens: 32000,
    stream: true,
    system: [
      {
        type: "text",
        text: "x-anthropic-billing-header: cc_version=2.1.332.0b8; cc_entrypoint=sdk-cli;",
      },
      { type: "text", text: "You are a Claude agent.", cache_control: { type: "ephemeral" } },
    ],
    tools: [
      {
        name: "Bash",
        description: "run",
        input_schema: { type: "object", properties: { command: { type: "string" } } },
      },
    ],
    metadata: { user_id: '{"session_id":"abc"}' },
    thinking: { type: "adaptive" },
    messages,
  };
}

test("Anthropic: trimmed and compressed; system, tools, other fields and headers untouched", async () => {
  const up = await upstream();
  await withProxy(up, async (base) => {
    const body = claudeBody(30);
    const headers = {
      "anthropic-version": "2023-06-01",
      "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14",
      "x-api-key": "sk-test-secret",
      "x-claude-code-session-id": "s-1",
    };
    const r = await post(`${base}/v1/messages?beta=true`, body, headers);
    assert.equal(r.status, 200);
    const got = up.seen.at(-1);
    assert.equal(got.url, "/v1/messages?beta=true");
    for (const [k, v] of Object.entries(headers)) assert.equal(got.headers[k], v, k);
    for (const k of ["model", "max_tokens", "stream", "system", "tools", "metadata", "thinking"])
      assert.equal(JSON.stringify(got.body[k]), JSON.stringify(body[k]), k);
    assert.deepEqual(Object.keys(got.body), Object.keys(body), "top-level key order kept");
    assert.ok(got.body.messages.length < body.messages.length, "trimmed");
    const text = JSON.stringify(got.body.messages);
    assert.match(text, /\[smarter-compact\] This session continues\./);
    assert.equal(
      got.body.messages.at(-1).content.at(-1).cache_control.type,
      "ephemeral",
      "the rolling breakpoint stays on the last block",
    );
    const breakpoints = (JSON.stringify(got.body).match(/"cache_control"/g) ?? []).length;
    assert.ok(breakpoints <= 4, `${breakpoints} cache_control markers`);
    const signed = got.body.messages.filter(
      (m) => m.role === "assistant" && m.content.some((b) => b.type === "thinking"),
    );
    assert.ok(signed.length >= 1);
    assert.equal(
      signed.at(-1).content[0].signature,
      body.messages.at(-2).content[0].signature,
      "the latest thinking keeps its signature",
    );
    assert.equal(
      got.body.messages.find((m) => m.role === "system")?.content,
      "# Environment\ncwd: /repo",
      "mid-conversation system message kept",
    );
    // The next request (one more exchange) extends the previous one byte for byte.
    const next = claudeBody(31);
    await post(`${base}/v1/messages?beta=true`, next, headers);
    // On the raw bytes sent upstream: request 1's message array, closed, is in request 1's body, and
    // the same bytes, left open, begin request 2's message array (ignoring the moving cache marker).
    const strip = (s) => s.replace(/,"cache_control":\{"type":"ephemeral"\}/g, "");
    const rawA = strip(up.seen.at(-2).raw.toString());
    const rawB = strip(up.seen.at(-1).raw.toString());
    const arrayA =
      '"messages":[' +
      up.seen
        .at(-2)
        .body.messages.map((m) => strip(JSON.stringify(m)))
        .join(",");
    assert.ok(rawA.includes(arrayA + "]"), "request 1's messages as sent");
    assert.ok(rawB.includes(arrayA + ","), "request 2 extends request 1's messages byte for byte");
  });
  await up.close();
});

test("streaming is relayed as it arrives", async (t) => {
  let firstSent = 0;
  const up = await upstream((req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.flushHeaders();
    let n = 0;
    const tick = () => {
      if (n === 0) firstSent = performance.now();
      res.write(`event: content_block_delta\ndata: {"n":${n}}\n\n`);
      if (++n < 5) setTimeout(tick, 150);
      else res.end("event: message_stop\ndata: {}\n\n");
    };
    setTimeout(tick, 100);
  });
  /** Streams one answer with node:http: the first chunk's delay after the upstream wrote it, and
   *  the chunks seen before the upstream wrote its last one. */
  const stream = (base) =>
    new Promise((resolve, reject) => {
      const chunks = [];
      let firstMs = null;
      const req = http.request(
        `${base}/v1/messages`,
        { method: "POST", headers: { "content-type": "application/json" } },
        (res) => {
          res.on("data", (c) => {
            firstMs ??= performance.now() - firstSent;
            chunks.push(String(c));
          });
          res.on("end", () => resolve({ firstMs, chunks }));
        },
      );
      req.on("error", reject);
      req.end(
        JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content: "hi" }] }),
      );
    });
  const direct = await stream(up.url);
  await withProxy(up, async (base) => {
    const via = await stream(base);
    assert.match(via.chunks[0], /"n":0/);
    assert.ok(
      !via.chunks[0].includes("message_stop"),
      "the first event arrived on its own, not with the whole answer",
    );
    assert.ok(via.chunks.length >= 5, `the answer came in ${via.chunks.length} pieces`);
    assert.equal(
      via.chunks.join(""),
      direct.chunks.join(""),
      "the same bytes as straight from the upstream",
    );
    t.diagnostic(
      `first byte ${via.firstMs.toFixed(2)} ms after the upstream wrote it through the proxy, ${direct.firstMs.toFixed(2)} ms direct`,
    );
  });
  await up.close();
});

test("Responses: input rewritten, prompt_cache_key and tools untouched; gzip bodies read", async () => {
  const up = await upstream();
  await withProxy(up, async (base) => {
    const input = [
      {
        type: "message",
        role: "developer",
        content: [{ type: "input_text", text: "You are Codex." }],
      },
      { type: "message", role: "user", content: [{ type: "input_text", text: "fix it" }] },
    ];
    for (let k = 0; k < 30; k++) {
      input.push({ type: "reasoning", id: `rs_${k}`, summary: [], encrypted_content: `enc${k}` });
      input.push({
        type: "function_call",
        call_id: `c${k}`,
        name: "exec_command",
        arguments: "{}",
      });
      input.push({
        type: "function_call_output",
        call_id: `c${k}`,
        output: `out ${k}\n`.repeat(60),
      });
    }
    const body = {
      model: "gpt-x",
      input,
      tools: [{ type: "function", name: "exec_command" }],
      prompt_cache_key: "thread-1",
      store: false,
      stream: true,
    };
    await post(`${base}/v1/responses`, zlib.gzipSync(JSON.stringify(body)), {
      "content-encoding": "gzip",
      authorization: "Bearer sk-x",
    });
    const got = up.seen.at(-1);
    assert.equal(got.url, "/v1/responses");
    assert.equal(got.headers["content-encoding"], undefined, "sent decompressed");
    assert.equal(got.headers.authorization, "Bearer sk-x");
    assert.equal(got.body.prompt_cache_key, "thread-1");
    assert.equal(JSON.stringify(got.body.tools), JSON.stringify(body.tools));
    assert.ok(got.body.input.length < input.length);
    assert.equal(got.body.input[0].content[0].text, "You are Codex.");
  });
  await up.close();
});

test("a rewritten body keeps every byte outside the message list as the client sent it", async () => {
  const up = await upstream();
  await withProxy(up, async (base) => {
    const messages = JSON.stringify(claudeBody(30).messages);
    // What JSON.parse + JSON.stringify would change: 1.50, an integer above 2^53, \u escapes,
    // odd whitespace, a key after the list, and a duplicate key (the last one is the list).
    const head =
      '{ "model" :"claude-sonnet-x",\n\t"temperature": 1.50, "seed": 18446744073709551615,\r\n' +
      '  "metadata": {"note": "caf\\u00e9 \\u2028 \\"q\\""}, "messages": [], "messages"  :  ';
    const tail = ' ,\n "max_tokens": 32000 , "stream": true }\n';
    const raw = head + messages + tail;
    assert.ok(JSON.parse(raw).messages.length > 40, "the last duplicate key is the list");
    const r = await post(`${base}/v1/messages`, raw, { "x-claude-code-session-id": "bytes-1" });
    assert.equal(r.status, 200);
    const sent = up.seen.at(-1).raw.toString("utf8");
    const list = JSON.stringify(up.seen.at(-1).body.messages);
    assert.ok(list.length < messages.length, "the list was rewritten");
    assert.equal(sent, head + list + tail, "only the list differs from the client's bytes");
    // A compressed body is sent decompressed, with the same bytes outside the list.
    await post(`${base}/v1/messages`, zlib.gzipSync(raw), {
      "x-claude-code-session-id": "bytes-2",
      "content-encoding": "gzip",
    });
    const sentGz = up.seen.at(-1).raw.toString("utf8");
    assert.ok(sentGz.startsWith(head) && sentGz.endsWith(tail), sentGz.slice(0, 300));
  });
  await up.close();
});

test("fail-open, upstream errors as sent, no open relay", async () => {
  const up = await upstream((req, res) => {
    if (req.url.startsWith("/v1/messages")) {
      res.writeHead(400, { "content-type": "application/json", "x-upstream": "yes" });
      res.end(
        '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}',
      );
    } else {
      res.writeHead(200);
      res.end("{}");
    }
  });
  await withProxy(up, async (base) => {
    const odd = '{"model":"m","messages":[{"role":"user"}],"weird": 1.50}';
    const r = await post(`${base}/v1/messages`, odd);
    assert.equal(r.status, 400, "the upstream's status");
    assert.equal(r.headers.get("x-upstream"), "yes");
    assert.match(await r.text(), /prompt is too long/);
    assert.equal(
      up.seen.at(-1).raw.toString(),
      odd,
      "a request the engine cannot read goes out byte for byte",
    );
    assert.equal((await post(`${base}/v1/messages`, "not json")).status, 400);
    assert.equal(up.seen.at(-1).raw.toString(), "not json");
    const before = up.seen.length;
    assert.equal((await fetch(`${base}/v1/models`)).status, 404);
    assert.equal((await post(`${base}/anything/else`, {})).status, 404);
    assert.equal((await post(`${base}/v1/messages/../../etc`, {})).status, 404);
    assert.equal(up.seen.length, before, "nothing else reaches the upstream");
    const health = await (await fetch(`${base}/health`)).json();
    assert.equal(health.ok, true);
    assert.ok(health.passed_through + health.fail_opens >= 2);
  });
  await up.close();
  // Nothing listens upstream: a clear 502 in the provider's error shape.
  await withProxy({ url: "http://127.0.0.1:9" }, async (base) => {
    const r = await post(`${base}/v1/messages`, {
      model: "m",
      messages: [{ role: "user", content: "hi" }],
    });
    assert.equal(r.status, 502);
    assert.match((await r.json()).error.message, /upstream unreachable/);
  });
});

test("with sql.js the store is on disk before the request goes upstream (the MCP server reads the file)", async () => {
  // sql.js keeps the database in memory and writes it a second after the last change; the agent's
  // recall tools run in another process and read the file, so the proxy writes it at once.
  const stateDir = scratchDir("sc-proxy-");
  const up = await upstream();
  const proxy = await startProxy({
    port: 0,
    upstreams: { anthropic: up.url },
    stateDir,
    config: { trimAtTokens: 3000, sqlite: "sql.js" },
  });
  try {
    // The first request opens the store (which can take longer than sql.js's write delay); the
    // second, one exchange later, is the one whose new messages must be on disk at once.
    let body;
    for (const turns of [30, 31]) {
      body = claudeBody(turns);
      const r = await post(`http://127.0.0.1:${proxy.port}/v1/messages`, body, {
        "x-claude-code-session-id": "s-flush",
      });
      assert.equal(r.status, 200);
      await r.text();
    }
    const file = join(stateDir, "context", "sessions", "claude-s-flush.db");
    assert.ok(existsSync(file), "the store file exists when the upstream has the request");
    const db = new Database(file, { readonly: true });
    try {
      assert.equal(
        db.prepare("SELECT count(*) AS n FROM messages").get().n,
        body.messages.length,
        "every message of the request is in the file",
      );
    } finally {
      db.close();
    }
    const health = await (await fetch(`http://127.0.0.1:${proxy.port}/health`)).json();
    assert.equal(health.store_write_errors, 0);
  } finally {
    await proxy.close();
    await up.close();
  }
});
