// `smarter-compact mcp` driven by the MCP SDK's own client over stdio, and `smarter-compact rpc`
// answering seed 000's one-line JSON-RPC example — both on a real session replayed into a temp
// state dir, from the built package.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CLI, cleanEnv, replayInto, run, tempDir } from "./helpers/cli.mjs";

const STATE = tempDir("sc-mcp-state-");
const SID = "django-14034";
const FIVE = [
  "compact_context",
  "context_status",
  "smart_compact_get",
  "smart_compact_search",
  "smart_compact_sql",
];
let replayed;

before(async () => {
  replayed = await replayInto(STATE, "django__django-14034.json", SID);
});

const textOf = (res) => {
  assert.equal(res.content.length, 1);
  assert.equal(res.content[0].type, "text");
  return res.content[0].text;
};

describe("mcp", () => {
  let client;
  let transport;
  const transportErrors = [];
  let stderr = "";

  before(async () => {
    // No --session: the server picks the state dir's only (most recently active) session.
    transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "mcp", "--state-dir", STATE],
      env: cleanEnv(),
      stderr: "pipe",
    });
    transport.stderr.on("data", (c) => (stderr += c));
    client = new Client({ name: "smarter-compact-test", version: "1.0.0" });
    client.onerror = (e) => transportErrors.push(e);
    await client.connect(transport);
  });

  after(async () => {
    await client?.close();
  });

  test("initialize: server info and the tools capability", () => {
    assert.equal(client.getServerVersion().name, "smarter-compact");
    assert.match(client.getServerVersion().version, /^\d+\.\d+\.\d+/);
    assert.ok(client.getServerCapabilities().tools);
  });

  test("tools/list: exactly the five tools with their JSON schemas", async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), FIVE);
    for (const t of tools) {
      assert.equal(t.inputSchema.type, "object", t.name);
      assert.ok(t.description.length > 40, t.name);
      assert.equal("session" in t.inputSchema.properties, t.name !== "compact_context", t.name);
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    assert.deepEqual(byName.smart_compact_search.inputSchema.required, ["query"]);
    assert.deepEqual(byName.smart_compact_search.inputSchema.properties.scope.enum, [
      "trimmed",
      "all",
    ]);
    assert.deepEqual(byName.compact_context.inputSchema.required, ["messages"]);
    assert.equal(byName.compact_context.inputSchema.properties.target_ratio.default, 0.4);
    assert.match(byName.smart_compact_sql.description, /messages/);
  });

  test("smart_compact_search finds a trimmed turn", async () => {
    const res = await client.callTool({
      name: "smart_compact_search",
      arguments: { query: "MultiValueField", limit: 3 },
    });
    assert.notEqual(res.isError, true, textOf(res));
    const text = textOf(res);
    assert.match(text, /^<smarter-compact-results untrusted="true">/);
    assert.match(text, /\[1\] message \d+ .*trimmed\n.*MultiValueField/);
    assert.doesNotMatch(text, /\[4\] /);
  });

  test("smart_compact_sql answers from the session's store", async () => {
    const res = await client.callTool({
      name: "smart_compact_sql",
      arguments: { sql: "SELECT count(*) AS n FROM messages" },
    });
    assert.notEqual(res.isError, true, textOf(res));
    assert.match(textOf(res), new RegExp(`\\nn\\n${replayed.status.messages}\\n\\(1 row`));
  });

  test("smart_compact_get reads a message and pages a compressed output", async () => {
    const msg = await client.callTool({ name: "smart_compact_get", arguments: { id: "8" } });
    assert.match(textOf(msg), /966:class MultiValueField\(Field\):/);
    const blob = await client.callTool({
      name: "smart_compact_sql",
      arguments: { sql: "SELECT id FROM blobs ORDER BY seq LIMIT 1" },
    });
    const id = /\n([0-9a-f]{16})\n/.exec(textOf(blob))[1];
    const page = await client.callTool({
      name: "smart_compact_get",
      arguments: { id, start_line: 1, end_line: 4, session: SID },
    });
    assert.notEqual(page.isError, true, textOf(page));
    assert.match(textOf(page), new RegExp(`\\[smart_compact_get id=${id} lines 1–4 of \\d+\\]`));
    const msgGrep = await client.callTool({
      name: "smart_compact_get",
      arguments: { id: "8", grep: "class multivaluefield" },
    });
    assert.notEqual(msgGrep.isError, true, textOf(msgGrep));
    assert.match(
      textOf(msgGrep),
      /grep="class multivaluefield": 1 of lines 1–\d+ \(of \d+\) match\]\n\d+: 966:class MultiValueField\(Field\):\n/,
    );
    const bad = await client.callTool({ name: "smart_compact_get", arguments: { id, grep: 7 } });
    assert.equal(bad.isError, true);
    assert.match(textOf(bad), /E_ARG/);
  });

  test("context_status: this session's figures", async () => {
    const text = textOf(await client.callTool({ name: "context_status", arguments: {} }));
    assert.match(text, new RegExp(`session ${SID}`));
    assert.match(text, new RegExp(`requests: ${replayed.status.usage.requests};`));
    assert.match(text, new RegExp(`trims: ${replayed.status.trims}`));
  });

  test("compact_context: {messages, stats} as text and structured content", async () => {
    const messages = replayed.history
      .slice(0, 12)
      .map((m) => ({ role: m.role, content: m.content ?? "" }));
    const res = await client.callTool({
      name: "compact_context",
      arguments: { messages, query: "MultiValueField required sub field", target_ratio: 0.4 },
    });
    assert.notEqual(res.isError, true, textOf(res));
    const out = JSON.parse(textOf(res));
    assert.deepEqual(res.structuredContent, out);
    assert.deepEqual(Object.keys(out.stats).sort(), [
      "after_tokens",
      "before_tokens",
      "dropped",
      "dropped_pct",
      "embedding",
    ]);
    assert.equal(out.stats.embedding, false);
    assert.equal(out.stats.dropped, messages.length - out.messages.length);
    assert.ok(out.stats.dropped > 0 && out.stats.after_tokens < out.stats.before_tokens);
    assert.deepEqual(out.messages[0], messages[0]); // the system message always stays
  });

  test("bad calls come back as isError results with their code; the server keeps serving", async () => {
    const cases = [
      [
        { name: "smart_compact_sql", arguments: { sql: "DROP TABLE messages" } },
        /^E_SQL_REFUSED: /,
      ],
      [{ name: "smart_compact_search", arguments: { query: "x", limit: 0 } }, /^E_ARG: /],
      [{ name: "smart_compact_get", arguments: { id: "1", session: "nosuch" } }, /^E_NO_SESSION: /],
      [{ name: "smart_compact_get", arguments: { id: "1", session: "../../etc" } }, /^E_BAD_ID: /],
      [{ name: "compact_context", arguments: { messages: "not an array" } }, /^E_ARG: /],
      [{ name: "no_such_tool", arguments: {} }, /^E_ARG: unknown tool/],
    ];
    for (const [call, code] of cases) {
      const res = await client.callTool(call);
      assert.equal(res.isError, true, call.name);
      assert.match(textOf(res), code);
    }
    const still = await client.callTool({
      name: "smart_compact_sql",
      arguments: { sql: "SELECT 1 AS one" },
    });
    assert.notEqual(still.isError, true);
    assert.deepEqual(transportErrors, []); // stdout carried nothing but protocol
  });
});

describe("mcp without sessions", () => {
  test("a session tool says there is no session; compact_context still works", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "mcp"],
      env: cleanEnv({ SMARTER_COMPACT_STATE_DIR: tempDir() }),
      stderr: "pipe",
    });
    const client = new Client({ name: "t", version: "1" });
    await client.connect(transport);
    try {
      const res = await client.callTool({ name: "context_status", arguments: {} });
      assert.equal(res.isError, true);
      assert.match(textOf(res), /^E_NO_SESSION: no sessions yet/);
      const messages = [
        { role: "system", content: "You are terse." },
        { role: "user", content: "hi" },
      ];
      const cc = await client.callTool({ name: "compact_context", arguments: { messages } });
      assert.notEqual(cc.isError, true);
      assert.deepEqual(cc.structuredContent.messages[0], messages[0]);
      assert.equal(cc.structuredContent.stats.embedding, false);
    } finally {
      await client.close();
    }
  });
});

describe("rpc", () => {
  // Seed 000's example, as its hook builds it: the messages of a transcript, a query, a ratio.
  const seedRequest = (messages) =>
    `{\n  "jsonrpc": "2.0", "id": 1, "method": "tools/call",\n  "params": {\n    "name": "compact_context",\n    "arguments": {\n      "messages": ${JSON.stringify(messages)},\n      "query": "implement the new feature",\n      "target_ratio": 0.4\n    }\n  }\n}\n`;

  test("answers seed 000's compact_context example", () => {
    const messages = replayed.history
      .slice(0, 30)
      .map((m) => ({ role: m.role, content: m.content ?? "" }));
    const r = run(["rpc"], { input: seedRequest(messages) });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim().split("\n").length, 1);
    const res = JSON.parse(r.stdout);
    assert.equal(res.jsonrpc, "2.0");
    assert.equal(res.id, 1);
    assert.equal(res.error, undefined);
    const out = JSON.parse(res.result.content[0].text);
    assert.equal(res.result.content[0].type, "text");
    assert.deepEqual(res.result.structuredContent, out);
    assert.deepEqual(Object.keys(out.stats).sort(), [
      "after_tokens",
      "before_tokens",
      "dropped",
      "dropped_pct",
      "embedding",
    ]);
    assert.equal(out.stats.embedding, false);
    assert.ok(
      out.stats.after_tokens <= 0.4 * out.stats.before_tokens + 1,
      JSON.stringify(out.stats),
    );
    assert.equal(out.stats.dropped, messages.length - out.messages.length);
    const pct =
      (100 * (out.stats.before_tokens - out.stats.after_tokens)) / out.stats.before_tokens;
    assert.ok(
      Math.abs(out.stats.dropped_pct - pct) <= 0.05,
      `dropped_pct ${out.stats.dropped_pct} vs ${pct}`,
    ); // of the tokens, as in seed 000
    // survivors verbatim, in their original order
    let at = -1;
    for (const m of out.messages) {
      const i = messages.findIndex((x, j) => j > at && JSON.stringify(x) === JSON.stringify(m));
      assert.ok(i > at, "kept message not found in order");
      at = i;
    }
    // the same request on one line (the hook's jq form) gives the same answer
    const oneLine = run(["rpc"], { input: JSON.stringify(JSON.parse(seedRequest(messages))) });
    assert.equal(oneLine.stdout, r.stdout);
  });

  test("with the model, compact_context keeps what the query is about (embedding: true)", () => {
    // Mid-session turns about a failed migration between CSS chores: recency alone drops them.
    const chores = (from) =>
      Array.from({ length: 4 }, (_, i) => [
        {
          role: "user",
          content: `Please tidy the CSS of the settings page, step ${from + i}: spacing, colours and font sizes.`,
        },
        {
          role: "assistant",
          content: `Adjusted the stylesheet margins and the button colours, round ${from + i}.`,
        },
      ]).flat();
    const messages = [
      ...chores(1),
      {
        role: "user",
        content:
          "The database migration failed: a foreign key constraint on orders.customer_id was violated.",
      },
      {
        role: "assistant",
        content:
          "The orders table references customers that were deleted earlier in the migration.",
      },
      ...chores(5),
    ];
    const request = (query) =>
      JSON.stringify({
        jsonrpc: "2.0",
        id: 5,
        method: "tools/call",
        params: { name: "compact_context", arguments: { messages, query, target_ratio: 0.3 } },
      });
    const modelDir = new URL("../../npm-embed/models/", import.meta.url).pathname;
    const answer = (env) => {
      const r = run(["rpc"], {
        env,
        input: request("why did the schema change break the relation between tables?"),
      });
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(JSON.parse(r.stdout).result.content[0].text);
    };
    const withModel = answer({ SMARTER_COMPACT_MODEL_DIR: modelDir });
    assert.equal(withModel.stats.embedding, true);
    assert.ok(
      withModel.messages.some((m) => m.content.includes("foreign key")),
      JSON.stringify(withModel.messages),
    );
    const without = answer({});
    assert.equal(without.stats.embedding, false);
    assert.ok(!without.messages.some((m) => m.content.includes("foreign key")));
  });

  test("tools/list, initialize and a session tool", () => {
    const list = JSON.parse(
      run(["rpc"], { input: '{"jsonrpc":"2.0","id":"a","method":"tools/list"}' }).stdout,
    );
    assert.equal(list.id, "a");
    assert.deepEqual(list.result.tools.map((t) => t.name).sort(), FIVE);
    const init = JSON.parse(
      run(["rpc"], {
        input:
          '{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}',
      }).stdout,
    );
    assert.equal(init.result.protocolVersion, "2025-06-18");
    assert.equal(init.result.serverInfo.name, "smarter-compact");
    const status = JSON.parse(
      run(["rpc", "--state-dir", STATE], {
        input:
          '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"context_status","arguments":{}}}',
      }).stdout,
    );
    assert.match(status.result.content[0].text, new RegExp(`session ${SID}`));
    const refused = run(["rpc"], {
      env: { SMARTER_COMPACT_STATE_DIR: STATE, SMARTER_COMPACT_SESSION: SID },
      input:
        '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"smart_compact_sql","arguments":{"sql":"DELETE FROM messages"}}}',
    });
    assert.equal(refused.code, 0);
    const body = JSON.parse(refused.stdout);
    assert.equal(body.result.isError, true);
    assert.match(body.result.content[0].text, /^E_SQL_REFUSED: /);
  });

  test("JSON-RPC errors: parse, method, params", () => {
    const parse = run(["rpc"], {
      input:
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"compact_context","arguments":{"messages":[...]}}}',
    });
    assert.equal(parse.code, 1);
    assert.deepEqual(
      { ...JSON.parse(parse.stdout).error, message: undefined },
      { code: -32700, message: undefined },
    );
    assert.equal(JSON.parse(parse.stdout).id, null);
    assert.equal(JSON.parse(run(["rpc"], { input: "" }).stdout).error.code, -32700);
    assert.equal(JSON.parse(run(["rpc"], { input: "[1]" }).stdout).error.code, -32600);
    const method = JSON.parse(
      run(["rpc"], { input: '{"jsonrpc":"2.0","id":7,"method":"tools/frob"}' }).stdout,
    );
    assert.deepEqual([method.id, method.error.code], [7, -32601]);
    const params = JSON.parse(
      run(["rpc"], {
        input:
          '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"compact_context","arguments":{"messages":[],"target_ratio":"half"}}}',
      }).stdout,
    );
    assert.deepEqual(
      [params.id, params.error.code, params.error.data],
      [8, -32602, { code: "E_ARG" }],
    );
    const noName = JSON.parse(
      run(["rpc"], { input: '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{}}' }).stdout,
    );
    assert.equal(noName.error.code, -32602);
    const notification = run(["rpc"], { input: '{"jsonrpc":"2.0","method":"tools/list"}' });
    assert.deepEqual([notification.code, notification.stdout], [0, ""]);
  });

  test("a request over 10 MiB on stdin: -32600 with id null, exit 1; just under it is answered", () => {
    const huge = `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"compact_context","arguments":{"messages":[{"role":"user","content":"${"x".repeat(11 * 1024 * 1024)}"}]}}}`;
    const r = run(["rpc"], { input: huge });
    assert.equal(r.code, 1, r.stderr);
    const res = JSON.parse(r.stdout);
    assert.equal(res.id, null);
    assert.equal(res.error.code, -32600);
    assert.match(res.error.message, /too large/);
    // Just under the limit is read and answered as usual.
    const fits = `{"jsonrpc":"2.0","id":6,"method":"ping","pad":"${"y".repeat(10 * 1024 * 1024 - 60)}"}`;
    assert.ok(Buffer.byteLength(fits) <= 10 * 1024 * 1024);
    const ok = JSON.parse(run(["rpc"], { input: fits }).stdout);
    assert.deepEqual([ok.id, ok.result], [6, {}]);
  });
});
