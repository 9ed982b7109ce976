// The MCP server and the recall tools under hostile input (issue 15, findings 12 and 14), driven
// over raw stdio lines so that malformed and oversized lines can be sent: a line over 10 MB and
// a line that is not JSON are answered with JSON-RPC errors and the server keeps serving;
// smart_compact_get refuses a start_line past 2^32 instead of wrapping it to line 1; search's
// answer is capped however long the query; compact_context refuses an oversized list at once.
// Two properties held already before issue 15's fixes and are kept here: the server holds no
// store open between calls (finding 8: nothing to evict, its descriptors stay flat over many
// sessions), and read-only tools leave a sql.js store's file as it was (finding 13).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, readdirSync, readFileSync, statSync } from "node:fs";
import { before, test } from "node:test";
import { salvageId } from "../../npm/js/cli/mcp-transport.js";
import { sessionPath } from "../../npm/js/index.js";
import { CLI, cleanEnv, replayInto, tempDir } from "./helpers/cli.mjs";

const STATE = tempDir("sc-hard-state-");
const SID = "django-14034";

/** A server on raw stdio: `send(line)`, `next(id)` (its answer), `exited`. */
function startServer({ state = STATE, env = {} } = {}) {
  const child = spawn(process.execPath, [CLI, "mcp", "--state-dir", state, "--session", SID], {
    env: cleanEnv(env),
    stdio: ["pipe", "pipe", "pipe"],
  });
  let buf = "";
  const answers = new Map();
  const waiting = new Map();
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (c) => {
    buf += c;
    let nl;
    while ((nl = buf.indexOf("\n")) !== -1) {
      const msg = JSON.parse(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      const key = JSON.stringify(msg.id ?? null);
      if (waiting.has(key)) {
        waiting.get(key)(msg);
        waiting.delete(key);
      } else answers.set(key, msg);
    }
  });
  child.stderr.resume();
  child.stdin.on("error", () => {}); // a server that exited: its answers are null
  let code;
  const exited = new Promise((resolve) =>
    child.on("close", (c) => {
      code = c;
      for (const w of waiting.values()) w(null);
      resolve(c);
    }),
  );
  return {
    child,
    exited,
    get code() {
      return code;
    },
    send: (line) => new Promise((r) => child.stdin.write(`${line}\n`, r)),
    /** The answer to `id` (null once the server has exited without one, or after a generous
     * deadline: a server that never answers). */
    next(id, ms = 60_000) {
      const key = JSON.stringify(id);
      if (answers.has(key)) {
        const m = answers.get(key);
        answers.delete(key);
        return Promise.resolve(m);
      }
      if (code !== undefined) return Promise.resolve(null);
      return new Promise((r) => {
        const timer = setTimeout(() => {
          waiting.delete(key);
          r(null);
        }, ms);
        waiting.set(key, (m) => {
          clearTimeout(timer);
          r(m);
        });
      });
    },
  };
}

const call = (id, name, args) =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });

before(async () => {
  await replayInto(STATE, "django__django-14034.json", SID);
});

/** A fresh, initialised server for one test, killed after it. */
async function initialised(t, opts) {
  const server = startServer(opts);
  t.after(() => server.child.kill("SIGKILL"));
  await server.send(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      },
    }),
  );
  assert.ok((await server.next(0))?.result, "initialize");
  await server.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  return server;
}

test("a line over 10 MB is answered with an error and the server keeps serving", async (t) => {
  const server = await initialised(t);
  const huge = call(1, "smart_compact_search", { query: "x".repeat(11 * 2 ** 20) });
  await server.send(huge);
  await server.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }));
  const [big, list] = [await server.next(1), await server.next(2)];
  assert.equal(server.code, undefined, "the server exited");
  assert.equal(big?.error?.code, -32600, JSON.stringify(big)?.slice(0, 300));
  assert.match(big.error.message, /too large/);
  assert.equal(list?.result?.tools?.length, 5);
});

test("a line that is not JSON gets -32700 and the next request its answer", async (t) => {
  const server = await initialised(t);
  await server.send('{"jsonrpc": "2.0", "id": 3, "method": ');
  await server.send(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "ping" }));
  const parse = await server.next(null);
  assert.equal(parse?.error?.code, -32700, JSON.stringify(parse));
  assert.deepEqual((await server.next(4))?.result, {});
});

test("smart_compact_get refuses a start_line the wasm boundary cannot hold", async (t) => {
  const server = await initialised(t);
  for (const [id, start_line] of [
    [5, 2 ** 32],
    [6, 2 ** 32 + 3],
    [7, 2 ** 53],
  ]) {
    await server.send(call(id, "smart_compact_get", { id: "3", start_line }));
    const r = (await server.next(id))?.result;
    assert.equal(r?.isError, true, `${start_line}: ${r?.content?.[0]?.text.slice(0, 200)}`);
    assert.match(r.content[0].text, /^E_ARG: .*start_line/);
  }
  await server.send(call(8, "smart_compact_get", { id: "3", start_line: 1 }));
  assert.equal((await server.next(8))?.result?.isError, undefined);
});

test("search's answer is capped however long the query", async (t) => {
  const server = await initialised(t);
  const query = `MultiValueField ${"needle ".repeat(150_000)}`;
  await server.send(call(9, "smart_compact_search", { query, scope: "all" }));
  const r = (await server.next(9))?.result;
  const text = r?.content?.[0]?.text ?? "";
  assert.ok(text.length > 0 && text.length < 20_000, `${text.length} characters`);
  assert.match(text, /more bytes\]/);
});

test("compact_context refuses 50k messages at once with the limit in its error", async (t) => {
  const server = await initialised(t);
  const messages = Array.from({ length: 50_000 }, (_, i) => ({
    role: "user",
    content: `turn ${i}`,
  }));
  await server.send(call(10, "compact_context", { messages }));
  const r = (await server.next(10))?.result;
  assert.equal(r?.isError, true, r?.content?.[0]?.text.slice(0, 200));
  assert.match(
    r.content[0].text,
    /^E_ARG: .*compact_context takes at most 500 messages, got 50000/,
  );
});

test("the server keeps no store open between calls: its descriptors stay flat over 60 sessions", async (t) => {
  const state = tempDir("sc-hard-many-");
  await replayInto(state, "django__django-14034.json", SID);
  for (let i = 0; i < 60; i++) copyFileSync(sessionPath(state, SID), sessionPath(state, `s${i}`));
  const server = await initialised(t, { state });
  const fds = () => readdirSync(`/proc/${server.child.pid}/fd`).length;
  let id = 100;
  const round = async () => {
    for (let i = 0; i < 60; i++) {
      const args = i % 2 ? { session: `s${i}`, query: "MultiValueField" } : { session: `s${i}` };
      await server.send(call(id, i % 2 ? "smart_compact_search" : "context_status", args));
      assert.equal((await server.next(id++))?.result?.isError, undefined, `s${i}`);
    }
  };
  await round();
  const first = fds();
  await round();
  await round();
  assert.equal(fds(), first);
});

test("read-only tools leave a sql.js store's file as it was (same inode, time and bytes)", async (t) => {
  const state = tempDir("sc-hard-sqljs-");
  process.env.SMARTER_COMPACT_SQLITE = "sql.js";
  try {
    await replayInto(state, "django__django-14034.json", SID);
  } finally {
    delete process.env.SMARTER_COMPACT_SQLITE;
  }
  const path = sessionPath(state, SID);
  const look = () => {
    const s = statSync(path);
    const sha = createHash("sha256").update(readFileSync(path)).digest("hex");
    return { ino: s.ino, mtimeMs: s.mtimeMs, sha };
  };
  const before = look();
  const server = await initialised(t, { state, env: { SMARTER_COMPACT_SQLITE: "sql.js" } });
  const calls = [
    ["smart_compact_sql", { sql: "SELECT count(*) FROM messages" }],
    ["smart_compact_search", { query: "MultiValueField", scope: "all" }],
    ["smart_compact_get", { id: "3" }],
    ["context_status", {}],
  ];
  let id = 200;
  for (const [name, args] of calls) {
    await server.send(call(id, name, args));
    assert.equal((await server.next(id++))?.result?.isError, undefined, name);
  }
  assert.deepEqual(look(), before);
});

test("an oversized request's id is read from either end of its line, else null", () => {
  const body = "x".repeat(100);
  assert.equal(salvageId(`{"jsonrpc":"2.0","id":7,"method":"tools/call",${body}`, ""), 7);
  assert.equal(salvageId(`{"method":"tools/call"`, `${body}},"jsonrpc":"2.0","id":"a-1"}`), "a-1");
  assert.equal(salvageId(`{"method":"x"`, `${body}"args":{"id":3}}`), null); // nested, not the request's
  assert.equal(salvageId(`{"method":"x"`, `${body}"text":"\\"id\\":5}"}`), null);
});
