// A real Claude Code subagent through the proxy: the parent calls the Agent tool, Claude Code runs
// the subagent's conversation against the same scripted upstream with the parent's session header
// plus its own `x-claude-code-agent-id`, and the proxy (from the packed tarball) keeps the two
// conversations in two stores: the parent's `claude-<session>`, the subagent's
// `claude-<session>-agent-<agent id>`, each trimmed, with no cross-talk.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { startAnthropicServer } from "./lib/anthropic-server.mjs";
import { runClaude, setupClaudeHome } from "./lib/cli-hosts.mjs";
import { installedPackage } from "./lib/package.mjs";
import { scratchDir } from "../js/helpers/scratch.mjs";

const TRIM_AT = 16_000;
const CHILD_JOB = "CHILD-JOB-7730: list the numbered logs";
const bash = (mark, from) => ({
  tool: "Bash",
  input: { command: `echo ${mark}; seq ${from} ${from + 1500}`, description: `logs ${mark}` },
});
const PARENT = [
  bash("PARENT-MARK-1", 100000),
  bash("PARENT-MARK-2", 110000),
  bash("PARENT-MARK-3", 120000),
  {
    tool: "Agent",
    input: { description: "numbered logs", prompt: CHILD_JOB, subagent_type: "general-purpose" },
  },
];
const CHILD = [
  bash("CHILD-MARK-1", 500000),
  bash("CHILD-MARK-2", 510000),
  bash("CHILD-MARK-3", 520000),
  bash("CHILD-MARK-4", 530000),
  { text: "The numbered logs are listed." },
];

/** Answers each conversation from its own list; the subagent's requests carry its agent id. */
function router() {
  const next = { parent: 0, child: 0 };
  return (_body, ctx) => {
    const who = ctx.entry.headers["x-claude-code-agent-id"] ? "child" : "parent";
    return (who === "child" ? CHILD : PARENT)[next[who]++] ?? { text: "Done here." };
  };
}

function readStore(file) {
  const db = new Database(file, { readonly: true });
  try {
    return {
      requests: db.prepare("SELECT count(*) AS n FROM requests").get().n,
      failOpens: db.prepare("SELECT count(*) AS n FROM requests WHERE fail_open = 1").get().n,
      trims: db.prepare("SELECT count(*) AS n FROM trims").get().n,
      text: db
        .prepare("SELECT text FROM messages")
        .all()
        .map((r) => r.text)
        .join("\n"),
    };
  } finally {
    db.close();
  }
}

test(
  "Claude Code Agent tool through the proxy: the subagent's conversation gets its own store",
  { timeout: 240_000 },
  async () => {
    const pkg = installedPackage();
    const route = router();
    const up = await startAnthropicServer({ script: Array.from({ length: 40 }, () => route) });
    const stateDir = scratchDir("sc-e2e-cc-sub-");
    const { startProxy } = await import(path.join(pkg.dir, "js", "proxy", "server.js"));
    const proxy = await startProxy({
      port: 0,
      upstreams: { anthropic: up.origin },
      stateDir,
      // outputs stay whole (not compressed), so both conversations grow past the threshold
      config: { trimAtTokens: TRIM_AT, compressOverTokens: 50_000 },
    });
    const home = setupClaudeHome({ baseURL: `http://127.0.0.1:${proxy.port}` });
    const tmp = path.join(home.root, "tmp"); // Claude Code's task files stay in the test's dir
    fs.mkdirSync(tmp);
    try {
      const r = await runClaude({
        home,
        prompt: "Check the logs, and have a subagent list the numbered ones.",
        allowedTools: ["Bash", "Agent"],
        env: { TMPDIR: tmp },
        timeoutMs: 180_000,
      });
      assert.equal(r.code, 0, r.stderr.slice(-2000));
      const posts = up.requests.filter((q) => q.body?.messages);
      const agentIds = [
        ...new Set(posts.map((q) => q.headers["x-claude-code-agent-id"]).filter(Boolean)),
      ];
      assert.equal(agentIds.length, 1, `subagents seen: ${agentIds}`);
      const childPosts = posts.filter((q) => q.headers["x-claude-code-agent-id"]);
      const parentPosts = posts.filter((q) => !q.headers["x-claude-code-agent-id"]);
      assert.ok(childPosts.length >= 5, `subagent requests: ${childPosts.length}`);
      for (const q of posts)
        assert.equal(q.headers["x-claude-code-session-id"], home.sessionId, "one session header");

      const dir = path.join(stateDir, "context", "sessions");
      const parentId = `claude-${home.sessionId}`;
      const childId = `${parentId}-agent-${agentIds[0]}`;
      const stores = fs.readdirSync(dir).filter((f) => f.endsWith(".db"));
      assert.deepEqual(stores.sort(), [`${childId}.db`, `${parentId}.db`].sort());
      const parent = readStore(path.join(dir, `${parentId}.db`));
      const child = readStore(path.join(dir, `${childId}.db`));
      assert.equal(parent.requests, parentPosts.length, "every parent request in its store");
      assert.equal(child.requests, childPosts.length, "every subagent request in its store");
      assert.equal(parent.failOpens + child.failOpens, 0, "no request failed open");
      assert.ok(parent.trims >= 1, `parent trims: ${parent.trims}`);
      assert.ok(child.trims >= 1, `subagent trims: ${child.trims}`);
      assert.match(parent.text, /PARENT-MARK-1/);
      assert.match(child.text, /CHILD-MARK-1/);
      assert.doesNotMatch(
        parent.text,
        /CHILD-MARK/,
        "the subagent's outputs in the parent's store",
      );
      assert.doesNotMatch(
        child.text,
        /PARENT-MARK/,
        "the parent's outputs in the subagent's store",
      );
    } finally {
      await proxy.close();
      await up.close();
    }
  },
);
