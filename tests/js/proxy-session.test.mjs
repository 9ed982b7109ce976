// Which store a proxied request goes to: one per Claude Code session, side requests and its own
// /compact included, and one per subagent conversation (its own identity, never the parent's);
// with `subagents = false` a subagent's request goes upstream untouched and makes no store.
import assert from "node:assert/strict";
import http from "node:http";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { conversationOf } from "../../npm/js/proxy/session.js";
import { startProxy } from "../../npm/js/proxy/server.js";
import { scratchDir } from "./helpers/scratch.mjs";

const SESSION = "de965cb9-8c4d-4d0c-9628-d5367d19e9bc";
const billing = (suffix, sub = false) => ({
  type: "text",
  text: `x-anthropic-billing-header: cc_version=2.1.332.${suffix}; cc_entrypoint=sdk-cli;${sub ? " cc_is_subagent=true;" : ""}`,
});

/** A Claude Code request: billing block, agent prompt, a first user text and `turns` tool turns. */
function request({
  prompt = "fix the failing test",
  agent = "You are a Claude agent.",
  suffix = "0b8",
  sub = false,
  turns = 0,
} = {}) {
  const messages = [{ role: "user", content: [{ type: "text", text: prompt }] }];
  for (let k = 0; k < turns; k++) {
    messages.push({
      role: "assistant",
      content: [{ type: "tool_use", id: `tu_${k}`, name: "Bash", input: { command: `ls ${k}` } }],
    });
    messages.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `tu_${k}`, content: `out ${k}` }],
    });
  }
  return {
    model: "claude-x",
    system: [billing(suffix, sub), { type: "text", text: agent }],
    messages,
  };
}
const headers = (extra = {}) => ({ "x-claude-code-session-id": SESSION, ...extra });

test("a Claude Code session keeps one store over its turns, side requests and /compact", () => {
  const main = conversationOf("anthropic", headers(), request());
  assert.deepEqual(main, { sessionId: `claude-${SESSION}`, subagent: false });
  assert.deepEqual(conversationOf("anthropic", headers(), request({ turns: 5 })), main);
  const title = {
    model: "claude-haiku",
    system: "Write a 3-word title.",
    messages: [{ role: "user", content: "fix the failing test" }],
  };
  assert.deepEqual(conversationOf("anthropic", headers(), title), main, "a title request");
  const compacted = request({
    prompt: "This session is being continued from a previous conversation. Summary: ...",
  });
  assert.deepEqual(conversationOf("anthropic", headers(), compacted), main, "after /compact");
});

test("a subagent with its agent header gets its own store, stable over its turns", () => {
  const a = headers({ "x-claude-code-agent-id": "a1bf8f2d82feefe83" });
  const sub = {
    agent: "You are an agent for Claude Code.",
    prompt: "CHILD-JOB",
    suffix: "2a2",
    sub: true,
  };
  const first = conversationOf("anthropic", a, request(sub));
  assert.deepEqual(first, {
    sessionId: `claude-${SESSION}-agent-a1bf8f2d82feefe83`,
    subagent: true,
  });
  assert.deepEqual(conversationOf("anthropic", a, request({ ...sub, turns: 4 })), first);
  const other = headers({ "x-claude-code-agent-id": "b000000000000000f" });
  assert.notEqual(conversationOf("anthropic", other, request(sub)).sessionId, first.sessionId);
  assert.notEqual(first.sessionId, conversationOf("anthropic", headers(), request()).sessionId);
});

test("a subagent marked only in its billing block is keyed by how it starts", () => {
  const sub = (o) => request({ agent: "You are an agent for Claude Code.", sub: true, ...o });
  const one = conversationOf("anthropic", headers(), sub({ prompt: "job one", suffix: "2a2" }));
  assert.equal(one.subagent, true);
  assert.match(one.sessionId, new RegExp(`^claude-${SESSION}-sub-[0-9a-f]{16}$`));
  // the same subagent later (more turns; the billing hash is the client's, not part of the key)
  assert.deepEqual(
    conversationOf("anthropic", headers(), sub({ prompt: "job one", suffix: "ff1", turns: 3 })),
    one,
  );
  const two = conversationOf("anthropic", headers(), sub({ prompt: "job two", suffix: "2a2" }));
  assert.notEqual(two.sessionId, one.sessionId, "another subagent, another store");
  assert.notEqual(one.sessionId, `claude-${SESSION}`);
});

test("without a session header, conversations are told apart by how they start", () => {
  const a = conversationOf("anthropic", {}, request({ prompt: "one" }));
  const b = conversationOf("anthropic", {}, request({ prompt: "two" }));
  assert.match(a.sessionId, /^claude-[0-9a-f]{16}$/);
  assert.notEqual(a.sessionId, b.sessionId);
  assert.deepEqual(conversationOf("anthropic", {}, request({ prompt: "one", turns: 2 })), a);
  const odd = conversationOf(
    "anthropic",
    headers({ "x-claude-code-agent-id": "../x y" }),
    request(),
  );
  assert.match(odd.sessionId, /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/, "a safe file name");
  const codex = conversationOf("responses", {}, { prompt_cache_key: "thread-1", input: [] });
  assert.deepEqual(codex, { sessionId: "codex-thread-1", subagent: false });
});

/** A fake Anthropic upstream recording the bodies it receives. */
async function upstream() {
  const seen = [];
  const srv = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      seen.push(Buffer.concat(chunks).toString("utf8"));
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
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

/** A long request with big tool outputs: over a 3000-token threshold. */
function longRequest(o) {
  const body = request({ ...o, turns: 30 });
  for (const m of body.messages)
    for (const b of m.content)
      if (b.type === "tool_result") b.content = "line of output\n".repeat(60);
  return body;
}

for (const subagents of [true, false]) {
  test(`through the proxy with subagents = ${subagents}: parent and subagent stores`, async () => {
    const up = await upstream();
    const stateDir = scratchDir("sc-proxy-sub-");
    const proxy = await startProxy({
      port: 0,
      upstreams: { anthropic: up.url },
      stateDir,
      config: { trimAtTokens: 3000, subagents },
    });
    try {
      const send = (body, h) =>
        fetch(`http://127.0.0.1:${proxy.port}/v1/messages`, {
          method: "POST",
          headers: { "content-type": "application/json", ...h },
          body: JSON.stringify(body),
        });
      const parent = longRequest();
      const child = longRequest({
        agent: "You are an agent for Claude Code.",
        prompt: "CHILD-JOB",
        sub: true,
      });
      const agent = headers({ "x-claude-code-agent-id": "a1bf8f2d82feefe83" });
      assert.equal((await send(parent, headers())).status, 200);
      assert.equal((await send(child, agent)).status, 200);
      const [gotParent, gotChild] = up.seen;
      assert.ok(JSON.parse(gotParent).messages.length < parent.messages.length, "parent trimmed");
      const dir = join(stateDir, "context", "sessions");
      const stores = readdirSync(dir)
        .filter((f) => f.endsWith(".db"))
        .sort();
      const childStore = `claude-${SESSION}-agent-a1bf8f2d82feefe83.db`;
      if (subagents) {
        assert.deepEqual(
          stores,
          [`claude-${SESSION}-agent-a1bf8f2d82feefe83.db`, `claude-${SESSION}.db`].sort(),
        );
        assert.ok(JSON.parse(gotChild).messages.length < child.messages.length, "subagent trimmed");
      } else {
        assert.deepEqual(stores, [`claude-${SESSION}.db`]);
        assert.equal(gotChild, JSON.stringify(child), "the subagent's request went out as sent");
        assert.equal(existsSync(join(dir, childStore)), false);
      }
    } finally {
      await proxy.close();
      await up.close();
    }
  });
}
