// Faults the host must survive: a trapped or corrupted wasm instance is replaced, and the session
// goes on from what its store holds.
import assert from "node:assert/strict";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { createCompactor } from "../../npm/js/index.js";
import { loadSession, requests } from "../../npm/js/sessions.js";
import { engineModule, instanceExports } from "../../npm/js/wasm.js";

const { history } = loadSession(
  new URL("../data/sessions/swe-traj/django__django-11087.json", import.meta.url).pathname,
);
const REQS = requests(history);

test("a corrupted wasm instance: that request fails open, the next one runs on a fresh instance", async () => {
  const stateDir = scratchDir("sc-trap-");
  const ser = (m) => JSON.stringify(m);
  // Reference: the same requests with no fault.
  const ref = await createCompactor({
    sessionId: "ref",
    stateDir,
    config: { trimAtTokens: 8000 },
    embedder: false,
  });
  const expected = [];
  for (const r of REQS) expected.push(ser((await ref.transform(structuredClone(r))).messages));
  const c = await createCompactor({
    sessionId: "trap",
    stateDir,
    config: { trimAtTokens: 8000 },
    embedder: false,
  });
  const k = 20;
  for (const r of REQS.slice(0, k))
    assert.equal((await c.transform(structuredClone(r))).stats.fail_open, false);
  const before = await engineModule();
  new Uint8Array(instanceExports(before).memory.buffer).fill(0xff); // smash the whole heap
  const hit = await c.transform(structuredClone(REQS[k]));
  assert.equal(hit.stats.fail_open, true, "the request during the fault goes out unchanged");
  assert.equal(ser(hit.messages), ser(REQS[k]));
  const after = await c.transform(structuredClone(REQS[k + 1]));
  assert.equal(after.stats.fail_open, false, "the next request works");
  assert.notEqual(await engineModule(), before, "on a new instance");
  assert.equal(
    ser(after.messages),
    expected[k + 1],
    "with the same bytes as without the fault (state came back from the store)",
  );
  for (const [i, r] of REQS.slice(k + 2).entries())
    assert.equal(ser((await c.transform(structuredClone(r))).messages), expected[k + 2 + i]);
  const status = await c.status();
  assert.ok(status.fail_opens >= 1);
});

import { spawn, spawnSync } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { openSqlite, sessionPath } from "../../npm/js/index.js";
import { scratchDir } from "./helpers/scratch.mjs";

const WORKER = fileURLToPath(new URL("./helpers/fault-worker.mjs", import.meta.url));
const FILE = fileURLToPath(
  new URL("../data/sessions/swe-traj/django__django-11087.json", import.meta.url),
);

async function rows(path, sql) {
  const db = await openSqlite({ path, readonly: true });
  try {
    return db.query(sql, []);
  } finally {
    db.close();
  }
}

test("two processes on one session: both go on, every message is stored once, the file stays sound", async () => {
  const stateDir = scratchDir("sc-two-");
  const run = () =>
    new Promise((resolve) => {
      const p = spawn(
        process.execPath,
        [WORKER, "replay", stateDir, FILE, "0", String(REQS.length)],
        { stdio: ["ignore", "pipe", "inherit"] },
      );
      let out = "";
      p.stdout.on("data", (d) => (out += d));
      p.on("close", (code) =>
        resolve({
          code,
          lines: out
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l)),
        }),
      );
    });
  const [a, b] = await Promise.all([run(), run()]);
  for (const r of [a, b]) {
    assert.equal(r.code, 0);
    assert.equal(r.lines.length, REQS.length, "every request answered");
    for (const l of r.lines)
      if (l.failOpen) assert.equal(l.code, "E_STORE", "only a busy store may fail a request open");
  }
  const path = sessionPath(stateDir, "shared");
  // Every ordinary table is sound (integrity_check cannot read contentless FTS4 tables back).
  for (const t of ["messages", "output_lines", "blobs", "trims", "requests", "chunks", "vectors"]) {
    assert.deepEqual(await rows(path, `PRAGMA integrity_check(${t})`), [["ok"]], t);
  }
  const [[n, distinct]] = await rows(path, "SELECT count(*), count(DISTINCT fp) FROM messages");
  assert.equal(n, distinct, "no duplicate rows");
  assert.equal(n, history.length, "every message stored");
});

test("a process killed while sql.js exports: the file is whole and holds every flushed message", async () => {
  const stateDir = scratchDir("sc-kill-");
  const p = spawn(process.execPath, [WORKER, "flushing", stateDir, FILE], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let flushed = 0;
  let buf = "";
  await new Promise((resolve) => {
    p.stdout.on("data", (d) => {
      buf += d;
      const lines = buf.split("\n");
      buf = lines.pop();
      for (const l of lines) flushed = JSON.parse(l).flushed;
      if (flushed >= 40) p.kill("SIGKILL"); // while it keeps exporting after every request
    });
    p.on("close", resolve);
  });
  assert.ok(flushed >= 40);
  const path = sessionPath(stateDir, "killed");
  const db = await openSqlite({ path, backend: "sql.js", readonly: true });
  const [[n]] = db.query("SELECT count(*) FROM messages", []);
  assert.deepEqual(db.query("PRAGMA integrity_check(messages)", []), [["ok"]]);
  db.close();
  assert.ok(n >= flushed, `${n} messages in the file, ${flushed} flushed before the kill`);
});

test("a read-only state dir (a user who cannot write it): requests pass through, status says why", async () => {
  const stateDir = scratchDir("sc-ro-");
  chmodSync(stateDir, 0o555);
  const script = `
    import { createCompactor } from ${JSON.stringify(new URL("../../npm/js/index.js", import.meta.url).href)};
    const c = await createCompactor({ sessionId: "ro", stateDir: ${JSON.stringify(stateDir)}, embedder: false });
    const msgs = [{ role: "user", content: "hello" }];
    const r = await c.transform(msgs);
    const s = await c.status();
    console.log(JSON.stringify({ same: r.messages === msgs, failOpen: r.stats.fail_open, code: r.stats.error?.code, ok: s.store.ok, text: s.text }));`;
  const file = join(tmpdir(), `sc-ro-${process.pid}.mjs`);
  writeFileSync(file, script);
  chmodSync(file, 0o644);
  // As root, permissions do not apply: run the check as `nobody`.
  const asRoot = process.getuid?.() === 0;
  const res = spawnSync(
    asRoot ? "runuser" : process.execPath,
    asRoot ? ["-u", "nobody", "--", process.execPath, file] : [file],
    { encoding: "utf8" },
  );
  assert.equal(res.status, 0, res.stderr);
  const out = JSON.parse(res.stdout.trim().split("\n").at(-1));
  assert.deepEqual([out.same, out.failOpen, out.code, out.ok], [true, true, "E_STORE", false]);
  assert.match(out.text, /NOT AVAILABLE \(E_STORE: cannot create .*permission denied/i);
});

test("a panic in the engine: its message reaches the Error (E_PANIC) and the next call runs on a new instance", async () => {
  const stateDir = scratchDir("sc-panic-");
  const c = await createCompactor({ sessionId: "panic", stateDir, embedder: false });
  await c.transform(structuredClone(REQS[3]));
  const glue = await engineModule();
  const search = glue.Engine.prototype.search;
  glue.Engine.prototype.search = () => glue.__panicForTests("the index went away");
  try {
    await assert.rejects(c.search("django"), (e) => {
      assert.equal(e.code, "E_PANIC");
      assert.match(e.message, /^engine panic: the index went away at src\/wasm\/mod\.rs:\d+/);
      assert.ok(e.cause instanceof WebAssembly.RuntimeError);
      return true;
    });
  } finally {
    glue.Engine.prototype.search = search;
  }
  assert.notEqual(await engineModule(), glue, "the aborted instance is replaced");
  const hits = await c.search("django", { scope: "all", mode: "fts" });
  assert.ok(hits.hits.length > 0, "the session goes on from its store");
  await c.close();
});
