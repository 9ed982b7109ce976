// The scripted Anthropic Messages and OpenAI Responses upstreams alone (no CLI binaries, < 2 s).
import { test } from "node:test";
import assert from "node:assert/strict";
import zlib from "node:zlib";
import { spawnSync } from "node:child_process";
import {
  startAnthropicServer,
  parseSSE,
  hrNow,
  timedRequest,
  cacheControlPaths,
  stripCacheControl,
} from "./lib/anthropic-server.mjs";
import { startResponsesServer } from "./lib/responses-server.mjs";

const post = (url, body, headers = {}) => timedRequest(url, body, { headers });

const BASH_TOOL = { name: "Bash", description: "run", input_schema: { type: "object" } };

test("anthropic: exact SSE sequence for thinking + text + tool_use, deltas reassemble", async () => {
  const input = { command: "echo hi && printf '%s' \"quoted\"", description: "Print hi" };
  const srv = await startAnthropicServer({
    chunkSize: 8,
    script: [{ thinking: "Let me think about it.", text: "Running.", tool: "Bash", input }],
  });
  try {
    const r = await post(`${srv.url}/v1/messages?beta=true`, {
      model: "m",
      stream: true,
      tools: [BASH_TOOL],
      messages: [{ role: "user", content: "hi" }],
    });
    assert.equal(r.status, 200);
    assert.match(r.headers["content-type"], /^text\/event-stream/);
    const evs = parseSSE(r.text);
    for (const e of evs) assert.equal(e.event, e.data.type, "event: name matches data.type");
    const types = evs.map(
      (e) =>
        e.event +
        (e.data.delta?.type
          ? `:${e.data.delta.type}`
          : e.data.content_block
            ? `:${e.data.content_block.type}`
            : ""),
    );
    const collapse = (xs) => xs.filter((x, i) => x !== xs[i - 1]);
    assert.deepEqual(collapse(types), [
      "message_start",
      "ping",
      "content_block_start:thinking",
      "content_block_delta:thinking_delta",
      "content_block_delta:signature_delta",
      "content_block_stop",
      "content_block_start:text",
      "content_block_delta:text_delta",
      "content_block_stop",
      "content_block_start:tool_use",
      "content_block_delta:input_json_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const json = evs
      .filter((e) => e.data.delta?.type === "input_json_delta")
      .map((e) => e.data.delta.partial_json);
    assert.ok(json.filter(Boolean).length >= 2, "tool input streamed in several pieces");
    assert.deepEqual(JSON.parse(json.join("")), input);
    const thinking = evs
      .filter((e) => e.data.delta?.type === "thinking_delta")
      .map((e) => e.data.delta.thinking)
      .join("");
    assert.equal(thinking, "Let me think about it.");
    const sig = evs.find((e) => e.data.delta?.type === "signature_delta").data.delta.signature;
    const sent = srv.requests[0].response.content[0];
    assert.equal(sig, sent.signature);
    assert.equal(evs.find((e) => e.event === "message_delta").data.delta.stop_reason, "tool_use");
    assert.deepEqual(evs[0].data.message.content, []);
    const q = srv.requests[0];
    assert.equal(q.agent, true);
    assert.equal(q.path, "/v1/messages");
    assert.deepEqual(q.query, { beta: "true" });
    assert.equal(q.sent.length, evs.length, "one write per event, each timestamped");
    assert.equal(srv.remaining(), 0);
  } finally {
    await srv.close();
  }
});

test("anthropic: JSON mode, count_tokens, GET/HEAD, aux requests, errors, function steps, raw bytes", async () => {
  const seen = [];
  const srv = await startAnthropicServer({
    script: [
      { redactedThinking: "opaque==", text: "plain" },
      (body, ctx) => {
        seen.push([body.messages.length, ctx.index, ctx.agentRequests.length]);
        return { status: 529, error: "Overloaded", type: "overloaded_error" };
      },
    ],
    finalText: "all done",
  });
  try {
    const rawBody =
      '{"model":"m",  "stream":false,\n "tools":[{"name":"Bash","input_schema":{}}],"messages":[{"role":"user","content":"x"}]}';
    const r1 = await post(`${srv.url}/v1/messages`, rawBody);
    assert.equal(r1.status, 200);
    const m = JSON.parse(r1.text);
    assert.deepEqual(m.content, [
      { type: "redacted_thinking", data: "opaque==" },
      { type: "text", text: "plain" },
    ]);
    assert.equal(m.stop_reason, "end_turn");
    assert.equal(srv.requests[0].raw.toString(), rawBody, "raw is byte-exact");

    const r2 = await post(`${srv.url}/v1/messages`, {
      stream: true,
      tools: [BASH_TOOL],
      messages: [
        { role: "user", content: "x" },
        { role: "assistant", content: "y" },
        { role: "user", content: "z" },
      ],
    });
    assert.equal(r2.status, 529);
    assert.deepEqual(JSON.parse(r2.text), {
      type: "error",
      error: { type: "overloaded_error", message: "Overloaded" },
    });
    assert.deepEqual(seen, [[3, 1, 2]]);

    const r3 = await post(`${srv.url}/v1/messages`, {
      stream: false,
      tools: [BASH_TOOL],
      messages: [],
    });
    assert.equal(JSON.parse(r3.text).content[0].text, "all done", "exhausted script → finalText");
    const r4 = await post(`${srv.url}/v1/messages`, { stream: false, messages: [] });
    assert.equal(JSON.parse(r4.text).content[0].text, "ok", "non-agent → auxText");
    assert.equal(srv.requests.at(-1).agent, false);

    const c = await post(`${srv.url}/v1/messages/count_tokens?beta=true`, {
      messages: [{ role: "user", content: "x".repeat(400) }],
    });
    assert.ok(JSON.parse(c.text).input_tokens > 100);
    const g = await fetch(`${srv.url}/api/hello`);
    assert.equal(g.status, 200);
    assert.deepEqual(await g.json(), {});
    const h = await fetch(`${srv.url}/`, { method: "HEAD" });
    assert.equal(h.status, 200);
    const n = await post(`${srv.url}/v1/other`, {});
    assert.equal(n.status, 404);
  } finally {
    await srv.close();
  }
});

test("anthropic: compressed request bodies are decoded, raw keeps the wire bytes", async () => {
  const srv = await startAnthropicServer();
  try {
    const body = JSON.stringify({ stream: false, messages: [{ role: "user", content: "zip" }] });
    const gz = zlib.gzipSync(body);
    await post(`${srv.url}/v1/messages`, gz, { "content-encoding": "gzip" });
    assert.deepEqual(srv.requests[0].raw, gz);
    assert.equal(srv.requests[0].encoding, "gzip");
    assert.equal(srv.requests[0].body.messages[0].content, "zip");
    const zstd = spawnSync("zstd", ["-q", "-c"], { input: body });
    if (zstd.status === 0 || typeof zlib.zstdCompressSync === "function") {
      const z =
        typeof zlib.zstdCompressSync === "function" ? zlib.zstdCompressSync(body) : zstd.stdout;
      await post(`${srv.url}/v1/messages`, z, { "content-encoding": "zstd" });
      assert.equal(srv.requests[1].bodyError, null);
      assert.equal(srv.requests[1].body.messages[0].content, "zip");
    }
  } finally {
    await srv.close();
  }
});

test("anthropic: slow upstream (delayMs) and first-byte timestamps", async () => {
  const srv = await startAnthropicServer({ delayMs: 15, script: [{ text: "slow answer" }] });
  try {
    const t0 = hrNow();
    const r = await post(`${srv.url}/v1/messages`, {
      stream: true,
      tools: [BASH_TOOL],
      messages: [],
    });
    const t1 = hrNow();
    const q = srv.requests[0];
    const n = q.sent.length;
    assert.ok(n >= 7);
    assert.ok(t1 - t0 >= 14 * n, `took ${t1 - t0} ms for ${n} events at 15 ms`);
    assert.ok(q.tHeaders <= q.tFirstByte);
    assert.ok(q.tFirstByte - q.tHeaders >= 10, "first event waits delayMs after the headers");
    assert.ok(r.tFirst >= q.tFirstByte - 1, "client saw the first byte after the server sent it");
    // Loose bound (loaded CI machines): the point is that the first event is not held back until the end.
    assert.ok(
      r.tFirst < q.tEnd,
      `first byte arrived ${r.tFirst - q.tFirstByte} ms after it was sent, after the stream ended`,
    );
    for (let i = 1; i < n; i++) assert.ok(q.sent[i].t - q.sent[i - 1].t >= 10);
  } finally {
    await srv.close();
  }
});

test("anthropic: gzip-compressed responses when asked for and accepted", async () => {
  const srv = await startAnthropicServer({
    compress: "gzip",
    script: [{ text: "zipped" }, { text: "plain" }],
  });
  try {
    const r = await post(
      `${srv.url}/v1/messages`,
      { stream: true, tools: [BASH_TOOL], messages: [] },
      { "accept-encoding": "gzip" },
    );
    assert.equal(r.headers["content-encoding"], "gzip");
    assert.match(zlib.gunzipSync(r.raw).toString(), /zipped/);
    const p = await post(
      `${srv.url}/v1/messages`,
      { stream: true, tools: [BASH_TOOL], messages: [] },
      { "accept-encoding": "identity" },
    );
    assert.equal(p.headers["content-encoding"], undefined);
    assert.match(p.text, /plain/);
  } finally {
    await srv.close();
  }
});

test("anthropic helpers: cacheControlPaths / stripCacheControl", () => {
  const body = {
    system: [
      { type: "text", text: "a" },
      { type: "text", text: "b", cache_control: { type: "ephemeral" } },
    ],
    messages: [
      {
        role: "user",
        content: [{ type: "text", text: "x", cache_control: { type: "ephemeral" } }],
      },
      { role: "system", content: "env" },
    ],
  };
  assert.deepEqual(cacheControlPaths(body), ["system[1]", "messages[0].content[0]"]);
  assert.deepEqual(stripCacheControl(body.messages), [
    { role: "user", content: [{ type: "text", text: "x" }] },
    { role: "system", content: "env" },
  ]);
});

const EXEC = {
  type: "function",
  name: "exec_command",
  parameters: { type: "object", properties: { cmd: { type: "string" } } },
};

test("responses: SSE sequence for reasoning + text + function_call, JSON mode, tool_search, namespace", async () => {
  const srv = await startResponsesServer({
    chunkSize: 6,
    script: [
      {
        reasoning: "thinking hard",
        encryptedContent: "gAAAAABenc==",
        text: "Working.",
        tool: "exec_command",
        args: { cmd: "echo hi" },
      },
      { toolSearch: { query: "echo", limit: 2 } },
      { tool: "echo", namespace: "mcp__echo", args: { text: "x" } },
      { custom: "apply_patch", input: "*** Begin Patch\n*** End Patch\n" },
      { failed: "boom" },
    ],
  });
  try {
    const r = await post(`${srv.url}/responses`, {
      model: "gpt-x",
      stream: true,
      tools: [EXEC],
      input: [],
    });
    const evs = parseSSE(r.text);
    for (const e of evs) assert.equal(e.event, e.data.type);
    assert.deepEqual(
      evs.map((e) => e.data.sequence_number),
      evs.map((_, i) => i),
    );
    const collapse = (xs) => xs.filter((x, i) => x !== xs[i - 1]);
    assert.deepEqual(collapse(evs.map((e) => e.event)), [
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.reasoning_summary_part.added",
      "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.done",
      "response.reasoning_summary_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const done = evs.filter((e) => e.event === "response.output_item.done").map((e) => e.data.item);
    assert.equal(done[0].type, "reasoning");
    assert.equal(done[0].encrypted_content, "gAAAAABenc==");
    assert.equal(
      evs
        .filter((e) => e.event === "response.function_call_arguments.delta")
        .map((e) => e.data.delta)
        .join(""),
      '{"cmd":"echo hi"}',
    );
    const completed = evs.at(-1).data.response;
    assert.equal(completed.status, "completed");
    assert.deepEqual(completed.output, done);
    assert.ok(
      completed.usage.input_tokens > 0 &&
        completed.usage.total_tokens > completed.usage.input_tokens,
    );
    assert.equal(srv.requests[0].agent, true);

    const j = JSON.parse(
      (await post(`${srv.url}/responses`, { stream: false, tools: [EXEC], input: [] })).text,
    );
    assert.equal(j.object, "response");
    assert.deepEqual(
      j.output.map((o) => [o.type, o.execution, o.arguments]),
      [["tool_search_call", "client", { query: "echo", limit: 2 }]],
    );
    const ns = JSON.parse(
      (await post(`${srv.url}/responses`, { stream: false, tools: [EXEC], input: [] })).text,
    );
    assert.deepEqual([ns.output[0].namespace, ns.output[0].name], ["mcp__echo", "echo"]);
    const ct = parseSSE(
      (await post(`${srv.url}/responses`, { stream: true, tools: [EXEC], input: [] })).text,
    );
    assert.ok(ct.some((e) => e.event === "response.custom_tool_call_input.delta"));
    assert.equal(ct.at(-2).data.item.type, "custom_tool_call");
    const failed = parseSSE(
      (await post(`${srv.url}/responses`, { stream: true, tools: [EXEC], input: [] })).text,
    );
    assert.equal(failed.at(-1).event, "response.failed");

    const aux = JSON.parse((await post(`${srv.url}/responses`, { stream: false, input: [] })).text);
    assert.equal(aux.output[0].content[0].text, "ok");
    assert.deepEqual(await (await fetch(`${srv.url}/models`)).json(), {
      object: "list",
      data: [],
      models: [],
    });
    assert.equal((await post(`${srv.url}/chat/completions`, {})).status, 404);
  } finally {
    await srv.close();
  }
});

test("responses: slow upstream and first byte, gzip only when accepted", async () => {
  const srv = await startResponsesServer({
    delayMs: 10,
    compress: "gzip",
    script: [{ text: "hello" }, { text: "again" }],
  });
  try {
    const r = await post(
      `${srv.url}/responses`,
      { stream: true, tools: [EXEC], input: [] },
      { "accept-encoding": "zstd,gzip" },
    );
    assert.equal(r.headers["content-encoding"], "gzip");
    const q = srv.requests[0];
    assert.ok(q.tFirstByte - q.tHeaders >= 8);
    assert.ok(r.tFirst >= q.tFirstByte - 1);
    assert.equal(parseSSE(zlib.gunzipSync(r.raw).toString()).at(-1).event, "response.completed");
    const p = await post(
      `${srv.url}/responses`,
      { stream: true, tools: [EXEC], input: [] },
      { "accept-encoding": "br" },
    );
    assert.equal(p.headers["content-encoding"], undefined);
  } finally {
    await srv.close();
  }
});
