// Subagents in the real OpenCode 1.18: the parent calls the `task` tool, OpenCode runs a child
// session (its own id, `parentID` = the parent) against the same scripted model, and the plugin
// keeps one store per session. With the default config both sessions are trimmed, sticky and
// pair-safe in separate stores with no cross-talk; with `subagents = false` (CONTEXT_SUBAGENTS=0)
// the child's requests go out as OpenCode made them and it gets no store.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { contentText, startServer } from "./lib/scripted-server.mjs";
import { runOpenCode, setupOpenCodeHome } from "./lib/hosts.mjs";
import { installedPackage } from "./lib/package.mjs";
import { scratchDir } from "../js/helpers/scratch.mjs";

const TRIM_AT = 6000;
const POINTER = "[smarter-compact] This session continues.";
const CHILD_JOB = "CHILD-JOB-5521: list the numbered logs";
const INSTRUCTION = "[smarter-compact] Older turns of this session may be trimmed";

/** The child's requests: a user message is the task prompt (the parent has it only in its call). */
const isChild = (body) =>
  body.messages.some((m) => m.role === "user" && contentText(m.content).includes(CHILD_JOB));
const bash = (mark, from) => ({
  tool: "bash",
  args: { command: `echo ${mark}; seq ${from} ${from + 700}`, description: `logs ${mark}` },
});

/** Parent: three big outputs, the task, three more, done. Child: five big outputs, done. */
const PARENT = [
  bash("PARENT-MARK-1", 100000),
  bash("PARENT-MARK-2", 110000),
  bash("PARENT-MARK-3", 120000),
  {
    tool: "task",
    args: { description: "numbered logs", prompt: CHILD_JOB, subagent_type: "general" },
  },
  bash("PARENT-MARK-4", 130000),
  bash("PARENT-MARK-5", 140000),
  bash("PARENT-MARK-6", 150000),
  { text: "The parent is done." },
];
const CHILD = [
  bash("CHILD-MARK-1", 500000),
  bash("CHILD-MARK-2", 510000),
  bash("CHILD-MARK-3", 520000),
  bash("CHILD-MARK-4", 530000),
  bash("CHILD-MARK-5", 540000),
  { text: "The numbered logs are listed." },
];

/** A script step that answers each conversation from its own list, told apart by content. */
function router() {
  const next = { parent: 0, child: 0 };
  return (body) => {
    const who = isChild(body) ? "child" : "parent";
    const list = who === "child" ? CHILD : PARENT;
    return list[next[who]++] ?? { text: "Nothing more." };
  };
}

const msgs = (body) => body.messages.map((m) => JSON.stringify(m));

/** Tool results without their call (and calls without their result) in one request. */
function pairingProblems(body) {
  const open = new Set();
  const problems = [];
  for (const m of body.messages) {
    for (const c of m.tool_calls ?? []) open.add(c.id);
    if (m.role === "tool" && !open.delete(m.tool_call_id))
      problems.push(`orphan result ${m.tool_call_id}`);
  }
  for (const id of open) problems.push(`orphan call ${id}`);
  return problems;
}

/** OpenCode's own sessions (id, parent) from its database in the isolated home. */
function openCodeSessions(home) {
  const dir = path.join(home.home, ".local", "share", "opencode");
  const file = fs.readdirSync(dir).find((f) => /^opencode.*\.db$/.test(f));
  assert.ok(file, `no OpenCode database in ${dir}: ${fs.readdirSync(dir)}`);
  const db = new Database(path.join(dir, file), { readonly: true });
  try {
    return db.prepare("SELECT id, parent_id AS parentID FROM session ORDER BY time_created").all();
  } finally {
    db.close();
  }
}

/** One session store: its recorded requests, trims and message texts. */
function readStore(file) {
  const db = new Database(file, { readonly: true });
  try {
    return {
      rows: db.prepare("SELECT trimmed, fail_open FROM requests ORDER BY id").all(),
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

/** Each request either starts a new cut or extends the previous one byte for byte. */
function assertSticky(bodies, rows, who) {
  assert.equal(rows.length, bodies.length, `${who}: the hook ran once per model request`);
  let cuts = 0;
  for (const [k, b] of bodies.entries()) {
    assert.deepEqual(pairingProblems(b), [], `${who} request ${k}`);
    assert.equal(rows[k].fail_open, 0, `${who} request ${k} failed open`);
    if (rows[k].trimmed) {
      cuts++;
      assert.ok(JSON.stringify(b.messages).includes(POINTER), `${who} ${k}: no pointer`);
    } else if (k > 0) {
      const prev = msgs(bodies[k - 1]);
      const cur = msgs(b);
      const diverge = prev.findIndex((m, i) => m !== cur[i]);
      assert.equal(diverge, -1, `${who} request ${k} does not extend ${k - 1} (at ${diverge})`);
    }
  }
  return cuts;
}

async function runTask(env) {
  const pkg = installedPackage();
  const route = router();
  const srv = await startServer({ script: Array.from({ length: 40 }, () => route) });
  const stateDir = scratchDir("sc-e2e-sub-state-");
  const home = setupOpenCodeHome({
    server: srv,
    pluginPath: path.join(pkg.dir, "js", "hosts", "opencode.js"),
  });
  try {
    const r = await runOpenCode({
      home,
      timeoutMs: 180_000,
      prompt: "Check the logs, and have a subagent list the numbered ones.",
      env: { SMARTER_COMPACT_STATE_DIR: stateDir, CONTEXT_TRIM_AT_TOKENS: String(TRIM_AT), ...env },
    });
    assert.equal(r.code, 0, r.stderr.slice(-2000));
    const bodies = srv.agentRequests().map((q) => q.body);
    const sessions = openCodeSessions(home);
    const parent = sessions.find((s) => !s.parentID);
    const child = sessions.find((s) => s.parentID);
    assert.ok(parent && child, `sessions: ${JSON.stringify(sessions)}`);
    assert.equal(child.parentID, parent.id);
    const dir = path.join(stateDir, "context", "sessions");
    const stores = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith(".db")) : [];
    return {
      parentBodies: bodies.filter((b) => !isChild(b)),
      childBodies: bodies.filter(isChild),
      parent,
      child,
      stores: stores.sort(),
      store: (id) => readStore(path.join(dir, `${id}.db`)),
    };
  } finally {
    await srv.close();
  }
}

test(
  "OpenCode task tool: parent and child each trimmed, sticky and pair-safe, in their own stores",
  { timeout: 300_000 },
  async () => {
    const t = await runTask({});
    assert.ok(t.childBodies.length >= 6, `child requests: ${t.childBodies.length}`);
    assert.ok(t.parentBodies.length >= 8, `parent requests: ${t.parentBodies.length}`);
    assert.deepEqual(t.stores, [`${t.child.id}.db`, `${t.parent.id}.db`].sort());
    const parent = t.store(t.parent.id);
    const child = t.store(t.child.id);
    assert.ok(parent.trims >= 1, `parent trims: ${parent.trims}`);
    assert.ok(child.trims >= 1, `child trims: ${child.trims}`);
    assert.ok(assertSticky(t.parentBodies, parent.rows, "parent") >= 1);
    assert.ok(assertSticky(t.childBodies, child.rows, "child") >= 1);
    // No cross-talk: each store holds its own session's outputs only.
    assert.match(parent.text, /PARENT-MARK-1/);
    assert.match(child.text, /CHILD-MARK-1/);
    assert.doesNotMatch(parent.text, /CHILD-MARK/, "the child's outputs in the parent's store");
    assert.doesNotMatch(child.text, /PARENT-MARK/, "the parent's outputs in the child's store");
    for (const b of t.childBodies)
      assert.doesNotMatch(JSON.stringify(b.messages), /PARENT-MARK/, "parent text sent to child");
  },
);

test(
  "OpenCode task tool with subagents = false: the child goes out untouched, the parent is trimmed",
  { timeout: 300_000 },
  async () => {
    const t = await runTask({ CONTEXT_SUBAGENTS: "0" });
    assert.ok(t.childBodies.length >= 6, `child requests: ${t.childBodies.length}`);
    assert.deepEqual(t.stores, [`${t.parent.id}.db`], "only the parent has a store");
    const parent = t.store(t.parent.id);
    assert.ok(parent.trims >= 1, `parent trims: ${parent.trims}`);
    assert.ok(assertSticky(t.parentBodies, parent.rows, "parent") >= 1);
    // The child's requests: nothing trimmed, compressed or added; each extends the one before.
    for (const [k, b] of t.childBodies.entries()) {
      const text = JSON.stringify(b);
      assert.ok(!text.includes(POINTER), `child request ${k} trimmed`);
      assert.ok(!text.includes("[smarter-compact] output compressed:"), `child ${k} compressed`);
      assert.ok(!text.includes(INSTRUCTION), `child request ${k} got the standing instruction`);
      if (k > 0) {
        const prev = msgs(t.childBodies[k - 1]);
        assert.deepEqual(msgs(b).slice(0, prev.length), prev, `child ${k} rewrote its history`);
      }
    }
    const last = JSON.stringify(t.childBodies.at(-1).messages);
    for (let n = 1; n <= 5; n++) assert.match(last, new RegExp(`CHILD-MARK-${n}`));
  },
);
