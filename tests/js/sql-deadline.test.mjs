// The SQL tool's deadline counts the query, not the runner's start-up: a child that is slow to
// boot (a loaded machine; simulated with SMARTER_COMPACT_SQL_START_DELAY_MS) still answers a
// quick query under a deadline shorter than its start-up, a long query is still stopped at the
// deadline, and a runner that never gets ready is stopped by the start-up bound.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { runReadonlySql } from "../../npm/js/sql.js";
import { openSqlite } from "../../npm/js/shims/index.js";
import { scratchDir } from "./helpers/scratch.mjs";

const KIND = "better-sqlite3";
const dir = scratchDir("sc-sql-deadline-");
const path = join(dir, "db.sqlite");
const db = await openSqlite({ path, backend: KIND });
db.exec("CREATE TABLE t (x INTEGER)", []);
db.exec("INSERT INTO t VALUES (1), (2), (3)", []);
db.close?.();

const START_DELAY = 1500; // longer than the query deadlines below
const withDelay = async (ms, f) => {
  process.env.SMARTER_COMPACT_SQL_START_DELAY_MS = String(ms);
  try {
    return await f();
  } finally {
    delete process.env.SMARTER_COMPACT_SQL_START_DELAY_MS;
  }
};

test("a slow start-up does not count against the query's deadline", async () => {
  const res = await withDelay(START_DELAY, () =>
    runReadonlySql({
      kind: KIND,
      path,
      sql: "SELECT sum(x) AS s FROM t",
      maxRows: 10,
      timeoutMs: 1000,
    }),
  );
  assert.deepEqual(res.columns, ["s"]);
  assert.deepEqual(res.rows, [[6]]);
  assert.equal(res.truncated, false);
});

test("a query that never ends is still stopped by the deadline, with the deadline's message", async () => {
  const endless =
    "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c";
  await assert.rejects(
    withDelay(START_DELAY, () =>
      runReadonlySql({ kind: KIND, path, sql: endless, maxRows: 10, timeoutMs: 1000 }),
    ),
    (e) => e.code === "E_SQL" && /ran longer than 1000 ms/.test(e.message),
  );
});

test("a runner that does not get ready is stopped by the start-up bound, with its own message", async () => {
  await assert.rejects(
    withDelay(60000, () =>
      runReadonlySql({
        kind: KIND,
        path,
        sql: "SELECT 1",
        maxRows: 10,
        timeoutMs: 60000,
        startupMs: 500,
      }),
    ),
    (e) => e.code === "E_SQL" && /did not start within 500 ms/.test(e.message),
  );
});

test("an error before the query (no READY line) comes back as that error", async () => {
  await assert.rejects(
    runReadonlySql({
      kind: KIND,
      path: join(dir, "missing", "none.sqlite"),
      sql: "SELECT 1",
      maxRows: 10,
    }),
    (e) =>
      e.code === "E_NO_SESSION" && !/ran longer|did not start|without an answer/.test(e.message),
  );
});
