// The proxy between the real Claude Code / Codex CLIs and a scripted upstream, headless and
// offline, the proxy and the MCP server taken from the packed tarball. A recording relay sits
// between the CLI and the proxy, so every request is compared with what the CLI actually sent.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { startAnthropicServer } from "./lib/anthropic-server.mjs";
import { startResponsesServer } from "./lib/responses-server.mjs";
import { runClaude, runCodex, setupClaudeHome, setupCodexHome } from "./lib/cli-hosts.mjs";
import { installedPackage } from "./lib/package.mjs";
import { scratchDir } from "../js/helpers/scratch.mjs";

const POINTER = "[smarter-compact] This session continues.";
const COMPRESSED = "[smarter-compact] output compressed:";
const MARKER = "MARKER-bravo-4417";
const TRIM_AT = 16_000;

/** A relay that records the raw request bodies the CLI sends, then forwards them to `target`. */
async function recordingRelay(target) {
  const seen = [];
  const srv = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      if (req.method === "POST")
        seen.push({ url: req.url, raw, body: JSON.parse(raw.toString("utf8") || "null") });
      const headers = { ...req.headers };
      delete headers.host;
      const up = http.request(`${target}${req.url}`, { method: req.method, headers }, (ur) => {
        res.writeHead(ur.statusCode, ur.headers);
        ur.pipe(res);
      });
      up.on("error", () => res.destroy());
      up.end(raw);
    });
  });
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${srv.address().port}`,
    seen,
    close: () => new Promise((r) => (srv.closeAllConnections(), srv.close(r))),
  };
}

/** The proxy from the installed tarball in front of the scripted server `up`, restartable on the same port. */
async function packagedProxy(pkg, up, stateDir, port = 0) {
  const { startProxy } = await import(path.join(pkg.dir, "js", "proxy", "server.js"));
  return startProxy({
    port,
    upstreams: { anthropic: up.origin, openai: `${up.origin}/v1` },
    stateDir,
    config: { trimAtTokens: TRIM_AT },
  });
}

/** A message as the model reads it: no cache breakpoints, one lone text block the same as a string
 *  (Claude Code turns the last message into blocks to hang its breakpoint on). */
const strip = (v) =>
  JSON.parse(JSON.stringify(v, (k, x) => (k === "cache_control" ? undefined : x))).map((m) =>
    Array.isArray(m.content) &&
    m.content.length === 1 &&
    m.content[0].type === "text" &&
    Object.keys(m.content[0]).length === 2
      ? { ...m, content: m.content[0].text }
      : m,
  );
const sessionDbs = (stateDir) =>
  fs
    .readdirSync(path.join(stateDir, "context", "sessions"))
    .filter((f) => f.endsWith(".db"))
    .map((f) => path.join(stateDir, "context", "sessions", f));

function breakStore(stateDir) {
  for (const db of sessionDbs(stateDir)) {
    for (const ext of ["", "-wal", "-shm"]) fs.rmSync(db + ext, { force: true });
    fs.mkdirSync(db);
  }
}

/** True when the list `cur` starts with every item of `prev` (as the model reads them). */
const extendsList = (prev, cur) => {
  const [p, c] = [
    strip(prev).map((m) => JSON.stringify(m)),
    strip(cur).map((m) => JSON.stringify(m)),
  ];
  return p.every((m, i) => m === c[i]);
};

/** Checks common to both CLIs on the requests the CLI sent (`sent`) and the upstream got (`got`):
 *  nothing outside `field` touched, no broken tool pairs, and between two requests with the same
 *  cut (the same number of items left out) the upstream request extends the one before it, as the
 *  CLI's own did, so the provider's prompt cache keeps hitting. Returns how many were trimmed. */
function checkRequests(sent, got, { field, pairs, outside }) {
  assert.equal(got.length, sent.length, "one upstream request per CLI request");
  let trims = 0;
  for (let k = 0; k < got.length; k++) {
    const [a, b] = [sent[k].body, got[k].body];
    for (const key of outside)
      assert.equal(JSON.stringify(b[key]), JSON.stringify(a[key]), `request ${k}: ${key} changed`);
    assert.deepEqual(Object.keys(b), Object.keys(a), `request ${k}: top-level fields`);
    assert.deepEqual(pairs(b[field]), [], `request ${k}: tool pairs`);
    const dropped = a[field].length - b[field].length;
    if (dropped > 0) trims++;
    if (k === 0 || !extendsList(sent[k - 1].body[field], a[field])) continue;
    if (dropped === sent[k - 1].body[field].length - got[k - 1].body[field].length) {
      assert.ok(
        extendsList(got[k - 1].body[field], b[field]),
        `request ${k} does not extend request ${k - 1} under the same cut`,
      );
    }
  }
  return trims;
}

test(
  "Claude Code through the proxy: trimmed, compressed, signatures and cache layout kept, recall over MCP, broken store survived",
  { timeout: 240_000 },
  async () => {
    const pkg = installedPackage();
    const sig = (n) => `EqQBsig${n}${"A".repeat(40)}==`;
    const up = await startAnthropicServer({
      script: [
        {
          thinking: "Start with the marker.",
          signature: sig(1),
          tool: "Bash",
          input: { command: `echo ${MARKER}; seq 1 400`, description: "marker" },
        },
        {
          thinking: "Now the big log.",
          signature: sig(2),
          tool: "Bash",
          input: { command: "seq 100000 101900", description: "big" },
        },
        { tool: "Bash", input: { command: "seq 300000 300700", description: "a" } },
        { tool: "Bash", input: { command: "seq 400000 400700", description: "b" } },
        {
          thinking: "Last one.",
          signature: sig(3),
          tool: "Bash",
          input: { command: "seq 600000 600700", description: "c" },
        },
        { text: "The logs are checked." },
        {
          tool: "ToolSearch",
          input: { query: "select:mcp__smarter-compact__smart_compact_search" },
        },
        { tool: "mcp__smarter-compact__smart_compact_search", input: { query: MARKER } },
        { text: "Found the marker." },
        { tool: "Bash", input: { command: "echo still-working", description: "d" } },
        { text: "Still fine." },
      ],
    });
    const stateDir = scratchDir("sc-e2e-claude-");
    let proxy = await packagedProxy(pkg, up, stateDir);
    const relay = await recordingRelay(`http://127.0.0.1:${proxy.port}`);
    const mcp = {
      "smarter-compact": {
        command: process.execPath,
        args: [path.join(pkg.dir, "js", "cli.js"), "mcp", "--state-dir", stateDir],
      },
    };
    const home = setupClaudeHome({ server: up, baseURL: relay.url, mcpServers: mcp });
    try {
      for (const [i, prompt] of ["Check the build logs.", "What was the marker line?"].entries()) {
        const r = await runClaude({ home, prompt, resume: i > 0, timeoutMs: 90_000 });
        assert.equal(r.code, 0, r.stderr.slice(-2000));
      }
      const sent = relay.seen.filter((q) => q.url.startsWith("/v1/messages"));
      const got = up.requests.filter(
        (q) => q.path.startsWith("/v1/messages") && !q.path.endsWith("count_tokens"),
      );
      const pairs = (messages) => {
        const open = new Set();
        const bad = [];
        for (const m of messages)
          for (const b of Array.isArray(m.content) ? m.content : []) {
            if (b.type === "tool_use") open.add(b.id);
            if (b.type === "tool_result" && !open.delete(b.tool_use_id))
              bad.push(`orphan result ${b.tool_use_id}`);
          }
        return [
          ...bad,
          ...[...open]
            .filter((id) => !messages.at(-1)?.content?.some?.((b) => b.id === id))
            .map((id) => `orphan call ${id}`),
        ];
      };
      const trims = checkRequests(sent, got, {
        field: "messages",
        pairs,
        outside: [
          "model",
          "system",
          "tools",
          "thinking",
          "metadata",
          "max_tokens",
          "stream",
          "context_management",
          "output_config",
        ],
      });
      assert.ok(trims >= 1, "no request was trimmed");
      const text = got.map((q) => JSON.stringify(q.body.messages));
      assert.ok(
        text.some((t) => t.includes(POINTER)),
        "no pointer reached the model",
      );
      assert.ok(
        text.some((t) => t.includes(COMPRESSED)),
        "no compressed output reached the model",
      );
      for (const [k, q] of got.entries()) {
        const marks = (v) => JSON.stringify(v).match(/"cache_control"/g)?.length ?? 0;
        assert.equal(marks(q.body), marks(sent[k].body), `request ${k}: breakpoints added or lost`);
        assert.ok(marks(q.body) <= 4, `request ${k}: ${marks(q.body)} breakpoints`);
        const last = q.body.messages.at(-1).content;
        assert.ok(
          !Array.isArray(last) || last.at(-1).cache_control,
          `request ${k}: the rolling breakpoint left the last block`,
        );
        for (const m of q.body.messages)
          for (const b of Array.isArray(m.content) ? m.content : []) {
            if (b.type === "thinking")
              assert.match(
                b.signature,
                /^EqQBsig[123]A{40}==$/,
                "a thinking signature was altered",
              );
          }
      }
      const recall = got
        .flatMap((q) => q.body.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])))
        .find(
          (b) =>
            b.type === "tool_result" &&
            JSON.stringify(b.content).includes("smarter-compact-results"),
        );
      assert.ok(
        recall && JSON.stringify(recall.content).includes(MARKER),
        "the MCP search did not return the trimmed marker",
      );
      // The store becomes unusable: the proxy (restarted, so it reopens it) forwards unchanged.
      const port = proxy.port;
      await proxy.close();
      breakStore(stateDir);
      proxy = await packagedProxy(pkg, up, stateDir, port);
      const r3 = await runClaude({ home, prompt: "Go on.", resume: true, timeoutMs: 90_000 });
      assert.equal(r3.code, 0, r3.stderr.slice(-2000));
      assert.ok(proxy.stats.fail_opens >= 1, "the fail-opens are counted");
      assert.equal(
        up.requests.at(-1).body.messages.length,
        relay.seen.at(-1).body.messages.length,
        "sent unchanged",
      );
    } finally {
      await relay.close();
      await proxy.close();
      await up.close();
    }
  },
);

test(
  "Codex through the proxy: trimmed, compressed, reasoning kept verbatim, recall over MCP, broken store survived",
  { timeout: 240_000 },
  async () => {
    const pkg = installedPackage();
    const up = await startResponsesServer({
      script: [
        {
          reasoning: "Marker first.",
          tool: "exec_command",
          args: { cmd: `echo ${MARKER}; seq 1 400` },
        },
        { reasoning: "The big log.", tool: "exec_command", args: { cmd: "seq 100000 101900" } },
        { tool: "exec_command", args: { cmd: "seq 300000 300700" } },
        { tool: "exec_command", args: { cmd: "seq 400000 400700" } },
        { reasoning: "One more.", tool: "exec_command", args: { cmd: "seq 600000 600700" } },
        { text: "The logs are checked." },
        { toolSearch: { query: "smart_compact_search" } },
        {
          tool: "smart_compact_search",
          namespace: "mcp__smarter_compact",
          args: { query: MARKER },
        },
        { text: "Found the marker." },
        { tool: "exec_command", args: { cmd: "echo still-working" } },
        { text: "Still fine." },
      ],
    });
    const stateDir = scratchDir("sc-e2e-codex-");
    let proxy = await packagedProxy(pkg, up, stateDir);
    const relay = await recordingRelay(`http://127.0.0.1:${proxy.port}`);
    const mcp = {
      "smarter-compact": {
        command: process.execPath,
        args: [path.join(pkg.dir, "js", "cli.js"), "mcp", "--state-dir", stateDir],
      },
    };
    const home = setupCodexHome({ server: up, baseURL: `${relay.url}/v1`, mcpServers: mcp });
    try {
      for (const [i, prompt] of ["Check the build logs.", "What was the marker line?"].entries()) {
        const r = await runCodex({ home, prompt, resume: i > 0, timeoutMs: 90_000 });
        assert.equal(r.code, 0, r.stderr.slice(-2000));
      }
      const sent = relay.seen.filter((q) => q.url.startsWith("/v1/responses"));
      const got = up.requests.filter((q) => q.path.startsWith("/v1/responses"));
      const pairs = (items) => {
        const calls = new Set(
          items.filter((i) => i.type === "function_call").map((i) => i.call_id),
        );
        const outs = items.filter((i) => i.type === "function_call_output").map((i) => i.call_id);
        return [
          ...outs.filter((id) => !calls.has(id)).map((id) => `orphan output ${id}`),
          ...[...calls].filter((id) => !outs.includes(id)).map((id) => `orphan call ${id}`),
        ];
      };
      const trims = checkRequests(sent, got, {
        field: "input",
        pairs,
        outside: [
          "model",
          "tools",
          "prompt_cache_key",
          "reasoning",
          "store",
          "include",
          "stream",
          "tool_choice",
          "parallel_tool_calls",
          "text",
        ],
      });
      assert.ok(trims >= 1, "no request was trimmed");
      const text = got.map((q) => JSON.stringify(q.body.input));
      assert.ok(text.some((t) => t.includes(POINTER)));
      assert.ok(text.some((t) => t.includes(COMPRESSED)));
      for (const [k, q] of got.entries()) {
        const reasoning = q.body.input.filter((i) => i.type === "reasoning");
        const original = new Map(
          sent[k].body.input
            .filter((i) => i.type === "reasoning")
            .map((i) => [i.id, JSON.stringify(i)]),
        );
        for (const r of reasoning)
          assert.equal(
            JSON.stringify(r),
            original.get(r.id),
            `request ${k}: a reasoning item changed`,
          );
        q.body.input.forEach(
          (it, i) =>
            it.type === "reasoning" &&
            assert.equal(
              q.body.input[i + 1]?.type,
              "function_call",
              `request ${k}: reasoning without its call`,
            ),
        );
      }
      const recall = got
        .flatMap((q) => q.body.input)
        .find(
          (i) =>
            i.type === "function_call_output" &&
            JSON.stringify(i.output).includes("smarter-compact-results"),
        );
      assert.ok(
        recall && JSON.stringify(recall.output).includes(MARKER),
        "the MCP search did not return the trimmed marker",
      );
      const port = proxy.port;
      await proxy.close();
      breakStore(stateDir);
      proxy = await packagedProxy(pkg, up, stateDir, port);
      const r3 = await runCodex({ home, prompt: "Go on.", resume: true, timeoutMs: 90_000 });
      assert.equal(r3.code, 0, r3.stderr.slice(-2000));
      assert.ok(proxy.stats.fail_opens >= 1);
    } finally {
      await relay.close();
      await proxy.close();
      await up.close();
    }
  },
);
