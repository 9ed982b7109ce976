// The store's test suite, run once per SQLite backend: SMARTER_COMPACT_SQLITE selects it
// (sql.js and better-sqlite3 under Node 20, node:sqlite under Node 22, bun:sqlite under Bun).
// Without the embedder, so search is full-text whatever the background got to (hybrid search is
// tested in hybrid-probe.test.mjs and tests/vectors.rs).
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { createCompactor, sessionPath } from "../../../npm/js/index.js";
import { loadSession, requests } from "../../../npm/js/sessions.js";
import { scratchDir } from "../helpers/scratch.mjs";

const BACKEND = process.env.SMARTER_COMPACT_SQLITE;
const SESSIONS = fileURLToPath(new URL("../../data/sessions/swe-traj/", import.meta.url));
const FILE = join(SESSIONS, "psf__requests-1142.json");
const { history } = loadSession(FILE);
const REQS = requests(history);
const fresh = () => scratchDir(`sc-store-${(BACKEND ?? "default").replace(/\W/g, "")}-`);
const sha = (p) => createHash("sha256").update(readFileSync(p)).digest("hex");

async function replayAll(stateDir, sessionId = "s", trimAt = 16000, reqs = REQS) {
  const c = await createCompactor({
    sessionId,
    stateDir,
    config: { trimAtTokens: trimAt },
    embedder: false,
  });
  const outs = [];
  for (const r of reqs) {
    const { messages, stats } = await c.transform(structuredClone(r), { format: "openai" });
    assert.equal(stats.fail_open, false, stats.error?.message);
    outs.push(JSON.stringify(messages));
  }
  return { c, outs };
}

test(`backend is ${BACKEND}`, async () => {
  const c = await createCompactor({ sessionId: "which", stateDir: fresh(), embedder: false });
  await c.transform([{ role: "user", content: "hi" }]);
  assert.equal((await c.status()).store.backend, BACKEND);
  await c.close();
});

test("every message is stored once; trimmed rows are marked", async () => {
  const dir = fresh();
  const { c } = await replayAll(dir);
  const n = await c.sql("SELECT count(*), count(DISTINCT fp), sum(in_context = 0) FROM messages");
  assert.equal(n.rows[0][0], history.length);
  assert.equal(n.rows[0][1], history.length);
  assert.ok(n.rows[0][2] > 0, "some rows trimmed");
  await c.close();
  // The same history again, in a new compactor on the same store: nothing new.
  const again = await replayAll(dir);
  assert.equal((await again.c.sql("SELECT count(*) FROM messages")).rows[0][0], history.length);
  await again.c.close();
});

test("restart: process A replays half, process B the rest → the same bytes, no duplicates", async () => {
  const single = (await replayAll(fresh(), "restart")).outs;
  const dir = fresh();
  const half = Math.floor(REQS.length / 2);
  const part = fileURLToPath(new URL("../helpers/replay-part.mjs", import.meta.url));
  for (const [from, to, out] of [
    [0, half, "a.jsonl"],
    [half, REQS.length, "b.jsonl"],
  ]) {
    execFileSync(
      process.execPath,
      [part, FILE, dir, String(from), String(to), "16000", join(dir, out)],
      { env: process.env, stdio: "inherit" },
    );
  }
  const split = [
    ...readFileSync(join(dir, "a.jsonl"), "utf8").split("\n"),
    ...readFileSync(join(dir, "b.jsonl"), "utf8").split("\n"),
  ];
  assert.equal(split.length, single.length);
  split.forEach((s, k) => assert.equal(s, single[k], `request ${k}`));
  const c = await createCompactor({ sessionId: "restart", stateDir: dir, embedder: false });
  const rows = (await c.sql("SELECT count(*), count(DISTINCT fp) FROM messages")).rows[0];
  assert.deepEqual(rows, [history.length, history.length]);
  assert.equal((await c.sql("SELECT count(*) FROM requests")).rows[0][0], REQS.length);
  await c.close();
});

test("search finds a line inside a compressed output, with its line number", async () => {
  const { c } = await replayAll(fresh());
  const blob = (await c.sql("SELECT id, seq FROM blobs ORDER BY length(text) DESC LIMIT 1"))
    .rows[0];
  assert.ok(blob, "a compressed output exists");
  const line = (
    await c.sql(
      `SELECT line_no, text FROM output_lines WHERE blob_id = '${blob[0]}' AND length(text) BETWEEN 20 AND 200 ORDER BY line_no DESC LIMIT 1`,
    )
  ).rows[0];
  const probe = line[1]
    .split(/[^\w./-]+/)
    .filter((t) => t.length > 6)
    .sort((a, b) => b.length - a.length)[0];
  const res = await c.search(probe, { limit: 3 });
  const hit = res.hits.find((h) => h.blob_id === blob[0]);
  assert.ok(hit, `${probe} not in the top 3: ${res.text}`);
  assert.equal(hit.seq, blob[1]);
  assert.match(res.text, /^<smarter-compact-results untrusted="true">/);
  const page = await c.get(blob[0], { start_line: hit.line, end_line: hit.line });
  assert.ok(page.text.includes(probe));
  assert.equal((await c.search("definitely-not-in-here-zzqx", { scope: "all" })).hits.length, 0);
  await assert.rejects(c.search("x", { limit: 0 }), { code: "E_ARG" });
  await assert.rejects(c.search("x", { scope: "everything" }), { code: "E_ARG" });
  await c.close();
});

test("counts over all tool outputs are exact", async () => {
  const { c } = await replayAll(fresh());
  const outputs = history.filter((m) => m.role === "tool").map((m) => m.content);
  const lines = (t) =>
    t === ""
      ? []
      : t
          .replace(/\n$/, "")
          .split("\n")
          .map((l) => l.replace(/\r$/, ""));
  for (const pattern of ["Error", "def ", "requests", "<returncode>0"]) {
    const expected = outputs.flatMap(lines).filter((l) => l.includes(pattern)).length;
    const got = await c.sql(
      `SELECT count(*) FROM output_lines WHERE instr(text, '${pattern}') > 0`,
    );
    assert.equal(got.rows[0][0], expected, pattern);
  }
  await c.close();
});

const HOSTILE = [
  "DELETE FROM messages",
  "UPDATE messages SET text = 'x'",
  "INSERT INTO meta VALUES ('a','b')",
  "DROP TABLE messages",
  "CREATE TABLE evil(x)",
  "ATTACH DATABASE '/tmp/evil.db' AS evil",
  "PRAGMA query_only = 0",
  "PRAGMA journal_mode = DELETE",
  "VACUUM",
  "VACUUM INTO '/tmp/copy.db'",
  "SELECT 1; DELETE FROM messages",
  "SELECT load_extension('x')",
  "SELECT readfile('/etc/passwd')",
  "SELECT zeroblob(2000000000)",
  "WITH x AS (SELECT 1) DELETE FROM messages",
  "REPLACE INTO meta VALUES ('schema_version', '0')",
  "BEGIN",
  "COMMIT",
  "ROLLBACK",
  "SAVEPOINT s",
  "ANALYZE",
  "REINDEX",
  "ALTER TABLE messages RENAME TO m2",
  "DETACH main",
  "CREATE TRIGGER t AFTER INSERT ON messages BEGIN SELECT 1; END",
  "SELECT 'unterminated",
  "SELECT 1 /* open",
  "",
  "EXPLAIN DELETE FROM messages",
  "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
  "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c",
  "WITH RECURSIVE r(s) AS (SELECT 'ab' UNION ALL SELECT s || s FROM r) SELECT length(s) FROM r",
  "SELECT a.text FROM output_lines a, output_lines b, output_lines c",
  "SELECT printf('%.*c', 2000000000, 'x')",
  "SELECT text FROM messages",
  "SELECT * FROM messages m1 JOIN messages m2 ON 1",
  "select 1;/* c */ drop table messages",
  "WITH x AS (SELECT 1) INSERT INTO meta VALUES ('a', 'b')",
  "PRAGMA writable_schema = 1",
  "RELEASE s",
];

test(`hostile SQL (${HOSTILE.length} statements) is refused or bounded; the file is unchanged`, async () => {
  const dir = fresh();
  const { c } = await replayAll(dir);
  await c.close(); // flushes sql.js
  const file = sessionPath(dir, "s");
  const before = sha(file);
  const c2 = await createCompactor({ sessionId: "s", stateDir: dir, embedder: false });
  const outcomes = {};
  for (const sql of HOSTILE) {
    let outcome;
    try {
      const res = await c2.sql(sql, { timeoutMs: 1500 });
      assert.ok(res.rows.length <= 200, sql);
      assert.ok(res.text.length < 20000, sql);
      outcome = res.truncated ? "bounded" : "small";
    } catch (e) {
      assert.ok(["E_SQL_REFUSED", "E_SQL"].includes(e.code), `${sql}: ${e.code} ${e.message}`);
      outcome = e.code;
    }
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  }
  await c2.close();
  assert.equal(sha(file), before, "database file changed");
  assert.ok(outcomes.E_SQL_REFUSED >= 25, JSON.stringify(outcomes));
  test.diagnostic?.(`${BACKEND}: ${JSON.stringify(outcomes)}`);
});

test("a store that cannot be opened passes requests through, says why, and recovers", async () => {
  const dir = fresh();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "context"), "not a directory");
  const c = await createCompactor({ sessionId: "broken", stateDir: dir, embedder: false });
  const msgs = [{ role: "user", content: "hello" }];
  const r = await c.transform(msgs);
  assert.equal(r.messages, msgs);
  assert.equal(r.stats.fail_open, true);
  assert.equal(r.stats.error.code, "E_STORE");
  const s = await c.status();
  assert.equal(s.store.ok, false);
  assert.match(s.text, /NOT AVAILABLE/);
  assert.ok(s.fail_opens >= 1);
  rmSync(join(dir, "context"));
  const ok = await c.transform(msgs);
  assert.equal(ok.stats.fail_open, false, "the next healthy request works again");
  assert.equal((await c.status()).store.ok, true);
  await c.close();
});

test("a corrupt database file: pass-through, then works once replaced", async () => {
  const dir = fresh();
  const file = sessionPath(dir, "corrupt");
  mkdirSync(join(dir, "context", "sessions"), { recursive: true });
  writeFileSync(file, Buffer.alloc(8192, 0x5a));
  const c = await createCompactor({ sessionId: "corrupt", stateDir: dir, embedder: false });
  const r = await c.transform([{ role: "user", content: "hello" }]);
  assert.equal(r.stats.fail_open, true);
  assert.equal(r.stats.error.code, "E_STORE");
  assert.match((await c.status()).store.error.message, /not a database|malformed|file/i);
  rmSync(file);
  assert.equal((await c.transform([{ role: "user", content: "hello" }])).stats.fail_open, false);
  await c.close();
});

test("a database locked by another process: pass-through while locked (native backends)", async () => {
  const dir = fresh();
  const { c } = await replayAll(dir, "locked", 16000, REQS.slice(0, 3));
  await c.close();
  const file = sessionPath(dir, "locked");
  const holder = spawn(
    "python3",
    [
      "-c",
      "import sqlite3,sys; c=sqlite3.connect(sys.argv[1], isolation_level=None); c.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); sys.stdin.read()",
      file,
    ],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  await new Promise((res) => holder.stdout.once("data", res));
  const c2 = await createCompactor({ sessionId: "locked", stateDir: dir, embedder: false });
  const r = await c2.transform(structuredClone(REQS[3]), { format: "openai" });
  if (BACKEND === "sql.js") {
    assert.equal(r.stats.fail_open, false, "sql.js works on its in-memory copy");
  } else {
    assert.equal(r.stats.fail_open, true);
    assert.equal(r.stats.error.code, "E_STORE");
    assert.match(r.stats.error.message, /locked|busy/i);
  }
  holder.stdin.end();
  await new Promise((res) => holder.on("close", res));
  const after = await c2.transform(structuredClone(REQS[4]), { format: "openai" });
  assert.equal(after.stats.fail_open, false);
  const n = (await c2.sql("SELECT count(*) FROM messages")).rows[0][0];
  assert.equal(n, REQS[4].length, "no committed row lost, nothing duplicated");
  await c2.close();
});

test("a store failing mid-session: pass-through, counted, then recovery with nothing lost", async () => {
  const dir = fresh();
  const { openSqlite } = await import("../../../npm/js/index.js");
  mkdirSync(join(dir, "context", "sessions"), { recursive: true });
  const inner = await openSqlite({ path: sessionPath(dir, "flaky") });
  let failing = false;
  const shim = {
    kind: inner.kind,
    path: inner.path,
    exec(sql, p) {
      if (failing && /^(INSERT|UPDATE|COMMIT)/.test(sql))
        throw new Error("disk I/O error (injected)");
      return inner.exec(sql, p);
    },
    query: (sql, p) => inner.query(sql, p),
    flush: () => inner.flush?.(),
  };
  const c = await createCompactor({
    sessionId: "flaky",
    stateDir: dir,
    sqlite: shim,
    embedder: false,
  });
  const outs = [];
  for (let k = 0; k < 20; k++) {
    failing = k >= 8 && k < 12;
    const { stats } = await c.transform(structuredClone(REQS[k]), { format: "openai" });
    outs.push(stats);
  }
  assert.deepEqual(
    outs.map((s) => s.fail_open),
    [...Array(8).fill(false), ...Array(4).fill(true), ...Array(8).fill(false)],
  );
  assert.equal(outs[8].error.code, "E_STORE");
  const s = await c.status();
  assert.equal(s.fail_opens, 4);
  const n = (await c.sql("SELECT count(*), count(DISTINCT fp) FROM messages")).rows[0];
  assert.deepEqual(n, [REQS[19].length, REQS[19].length]);
  await c.close();
  inner.close();
});
